package memstore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

var day1 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func newStore(t testing.TB, clk clock.Clock) *Store {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	kv, err := conn.JS.KeyValue(context.Background(), events.MemoriesBucket)
	if err != nil {
		t.Fatal(err)
	}
	return NewStore(kv, clk)
}

func candidate(content string, conf float64, batch string, at time.Time) events.MemoryRecord {
	return events.MemoryRecord{
		Memory: memory.Memory{Content: content, Kind: memory.KindDecision, Confidence: conf, Repo: "app", Session: "s1",
			Provider: "test", CreatedAt: at, UpdatedAt: at},
		Batch: batch,
	}
}

func put(t testing.TB, s *Store, r events.MemoryRecord) memory.Decision {
	t.Helper()
	d, err := s.Put(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStorePutDecisions(t *testing.T) {
	clk := clock.NewDeterministic(day1)
	s := newStore(t, clk)
	const text = "Use the pgx driver for Postgres"
	h := memory.Hash(text)

	if d := put(t, s, candidate(text, 0.6, "b1", day1)); d.Action != memory.ActionInsert {
		t.Fatalf("first put %+v", d)
	}
	// The same batch again (a redelivery) changes nothing, even with
	// another confidence.
	if d := put(t, s, candidate(text, 0.9, "b1", day1)); d.Action != memory.ActionSkip || d.Reason != ReasonSameBatch {
		t.Fatalf("redelivery %+v", d)
	}
	got, _, _ := s.Get(context.Background(), "app", h)
	if got.Extractions != 1 || got.Confidence != 0.6 {
		t.Fatalf("after redelivery %+v", got)
	}
	// Another batch, equal confidence: skipped, but counted as said again.
	if d := put(t, s, candidate(text, 0.6, "b2", day1)); d.Reason != memory.ReasonEqualConfidence {
		t.Fatalf("equal %+v", d)
	}
	// Lower: skipped, counted.
	if d := put(t, s, candidate(text, 0.3, "b3", day1)); d.Reason != memory.ReasonLowerConfidence {
		t.Fatalf("lower %+v", d)
	}
	clk.Advance(time.Hour)
	// Higher: updated to the harmonic mean, created time kept.
	if d := put(t, s, candidate(text, 0.8, "b4", clk.Now())); d.Action != memory.ActionUpdate || d.Confidence != 0.685714 {
		t.Fatalf("higher %+v", d)
	}
	got, _, _ = s.Get(context.Background(), "app", h)
	if got.Extractions != 4 || got.Confidence != 0.685714 || got.Batch != "b4" || !got.CreatedAt.Equal(day1) || !got.UpdatedAt.Equal(clk.Now()) || got.Hash != h {
		t.Fatalf("after update %+v", got)
	}
	want := StoreStats{Inserted: 1, Updated: 1, SkippedEqual: 1, SkippedLower: 1, SeenAgain: 2, SameBatch: 1}
	if st := s.Stats(); st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
	if _, err := s.Put(context.Background(), candidate("  ", 0.5, "b5", day1)); err == nil {
		t.Fatal("empty memory stored")
	}
}

// TestStoreConcurrentPutsInsertOnce puts one memory from N batches at once:
// one insert, and every batch counted.
func TestStoreConcurrentPutsInsertOnce(t *testing.T) {
	s := newStore(t, clock.NewDeterministic(day1))
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := s.Put(context.Background(), candidate("Keep retries in the client", 0.5, "b"+strconv.Itoa(i), day1)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, found, err := s.Get(context.Background(), "app", memory.Hash("Keep retries in the client"))
	if err != nil || !found || got.Extractions != n {
		t.Fatalf("%+v %v %v: want %d extractions", got, found, err, n)
	}
	if st := s.Stats(); st.Inserted != 1 || st.SeenAgain != n-1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestMergeErrorFilesKeepsTheNewestFirstAndBounds(t *testing.T) {
	if got := mergeErrorFiles([]string{"b", "c"}, []string{"a", "b"}); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Errorf("merge %q", got)
	}
	many := make([]string, 40)
	for i := range many {
		many[i] = strings.Repeat("x", i+1)
	}
	if got := mergeErrorFiles(many[:20], many[20:]); len(got) != 32 || got[0] != many[0] {
		t.Errorf("merge of 40 keeps %d starting %q", len(got), got[0])
	}
}

// A forgotten memory keeps a tombstone without its words; the same words
// extracted again, with any confidence, leave it forgotten; forgetting
// again changes nothing; an unknown memory is ErrNotFound.
func TestForgetKeepsATombstoneThatPutRespects(t *testing.T) {
	s := newStore(t, clock.NewDeterministic(day1))
	ctx := context.Background()
	const text = "Store sessions in Redis; token: hunter2"
	r := candidate(text, 0.6, "b1", day1)
	r.Rationale, r.FilesTouched = "latency", []string{"auth/session.go"}
	put(t, s, r)
	h := memory.Hash(text)

	at := day1.Add(time.Hour)
	tomb, _, err := s.Forget(ctx, "app", h, at)
	if err != nil {
		t.Fatal(err)
	}
	if !tomb.Forgotten.Equal(at) || tomb.Content != "" || tomb.Rationale != "" || tomb.FilesTouched != nil || tomb.Hash != h || tomb.Kind != memory.KindDecision {
		t.Fatalf("tombstone %+v", tomb)
	}
	stored, found, err := s.Get(ctx, "app", h)
	if err != nil || !found {
		t.Fatalf("get after forget: %v %v", found, err)
	}
	if stored.Content != "" || !stored.Forgotten.Equal(at) {
		t.Fatalf("stored after forget %+v", stored)
	}
	if err := stored.Validate(); err != nil {
		t.Errorf("a tombstone does not validate: %v", err)
	}

	for _, batch := range []string{"b1", "b2"} {
		if d := put(t, s, candidate(text, 0.95, batch, day1.Add(2*time.Hour))); d.Action != memory.ActionSkip || d.Reason != ReasonForgotten {
			t.Errorf("put of forgotten words from %s: %+v", batch, d)
		}
	}
	if again, _, _ := s.Get(ctx, "app", h); again.Content != "" || !again.Forgotten.Equal(at) {
		t.Errorf("a put brought the memory back: %+v", again)
	}
	if twice, _, err := s.Forget(ctx, "app", h, at.Add(time.Hour)); err != nil || !twice.Forgotten.Equal(at) {
		t.Errorf("forgetting again: %+v %v, want the first tombstone", twice, err)
	}
	if _, _, err := s.Forget(ctx, "app", memory.Hash("never said"), at); !errors.Is(err, ErrNotFound) {
		t.Errorf("forgetting an unknown memory: %v, want ErrNotFound", err)
	}
	if st := s.Stats(); st.Forgotten != 2 {
		t.Errorf("stats %+v, want 2 forgotten puts", st)
	}
}

// A memory written is returned only once it is durable; a write that
// cannot be made so is an error, and saving the same words again finds
// the memory the write made.
func TestStoreWritesReturnOnlyOnceDurable(t *testing.T) {
	s := newStore(t, nil)
	var syncs atomic.Int32
	var failing atomic.Bool
	s.SetDurable(func(context.Context) error {
		syncs.Add(1)
		if failing.Load() {
			return errors.New("no space left on device")
		}
		return nil
	})
	ctx := context.Background()
	failing.Store(true)
	if _, err := s.Put(ctx, candidate("Use Badger for the edge store.", 0.6, "b1", day1)); err == nil {
		t.Fatal("a put that could not be made durable returned no error")
	}
	if _, _, err := s.Forget(ctx, "app", memory.Hash("Use Badger for the edge store."), day1); err == nil {
		t.Fatal("a forget that could not be made durable returned no error")
	}
	failing.Store(false)
	d, err := s.Put(ctx, candidate("Use Badger for the edge store.", 0.6, "b2", day1))
	if err != nil {
		t.Fatal(err)
	}
	if d.Reason != ReasonForgotten {
		t.Errorf("saved again: %s; want the tombstone the failed forget wrote", d.Reason)
	}
	if syncs.Load() != 3 {
		t.Errorf("%d syncs for 3 writes", syncs.Load())
	}
}
