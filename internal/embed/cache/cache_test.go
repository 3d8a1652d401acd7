package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/localdb"
)

// countingEmbedder returns a vector derived from the text and the model and
// records every text it was asked for.
type countingEmbedder struct {
	model string
	err   error

	mu    sync.Mutex
	calls [][]string
}

func (c *countingEmbedder) ModelID() string { return c.model }
func (c *countingEmbedder) Dimensions() int { return 3 }
func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	c.calls = append(c.calls, slices.Clone(texts))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), float32(len(c.model)), 1}
	}
	return out, nil
}

func (c *countingEmbedder) embedded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []string
	for _, call := range c.calls {
		all = append(all, call...)
	}
	return all
}

func open(t *testing.T, dir string) *Cache {
	t.Helper()
	c, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEmbedsOnlyMissesInOneBatch(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	inner := &countingEmbedder{model: "m1"}
	e := Wrap(inner, c)
	ctx := context.Background()
	if _, err := e.Embed(ctx, []string{"a", "bb"}); err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(ctx, []string{"a", "ccc", "bb", "ccc", "dddd"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inner.calls) != 2 || !slices.Equal(inner.calls[1], []string{"ccc", "dddd"}) {
		t.Fatalf("calls = %q, want the second to hold only the distinct misses", inner.calls)
	}
	// Hits and misses alike come back as stored: to within the int8
	// step of the largest component (4/127 here), and equal to a hit.
	for i, want := range []float32{1, 3, 2, 3, 4} {
		if d := got[i][0] - want; d < -0.02 || d > 0.02 {
			t.Errorf("vector %d = %v, want first element %v", i, got[i], want)
		}
	}
	again, err := e.Embed(ctx, []string{"ccc", "dddd"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again[0], got[1]) || !slices.Equal(again[1], got[4]) {
		t.Fatalf("a hit %v differs from the miss %v", again, [][]float32{got[1], got[4]})
	}
	if s := c.Stats(); s.Hits != 4 || s.Misses != 5 {
		t.Fatalf("stats = %+v, want 4 hits and 5 misses", s)
	}
}

func TestSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir)
	inner := &countingEmbedder{model: "m1"}
	if _, err := Wrap(inner, c).Embed(context.Background(), []string{"x", "y"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = open(t, dir)
	defer c.Close()
	inner2 := &countingEmbedder{model: "m1"}
	if _, err := Wrap(inner2, c).Embed(context.Background(), []string{"y", "x"}); err != nil {
		t.Fatal(err)
	}
	if n := len(inner2.embedded()); n != 0 {
		t.Fatalf("embedded %d texts after reopen, want 0", n)
	}
}

func TestModelsNeverMix(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	m1, m2 := &countingEmbedder{model: "m1"}, &countingEmbedder{model: "model-two"}
	ctx := context.Background()
	if _, err := Wrap(m1, c).Embed(ctx, []string{"same text"}); err != nil {
		t.Fatal(err)
	}
	got, err := Wrap(m2, c).Embed(ctx, []string{"same text"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.embedded()) != 1 || got[0][1] != float32(len("model-two")) {
		t.Fatalf("model two got %v after embedding %q: the other model's vector leaked", got, m2.embedded())
	}
}

func TestErrorsPassThroughUncached(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	down := fmt.Errorf("server down: %w", embed.ErrUnavailable)
	inner := &countingEmbedder{model: "m1", err: down}
	e := Wrap(inner, c)
	if _, err := e.Embed(context.Background(), []string{"a"}); !errors.Is(err, embed.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	inner.err = nil
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if got := inner.embedded(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("embedded %q after recovery, want [a]", got)
	}
}

func TestDimensionsLearntFromHits(t *testing.T) {
	c := open(t, t.TempDir())
	defer c.Close()
	if err := c.Store("m", []string{"t"}, [][]float32{{1, 2, 3, 4}}); err != nil {
		t.Fatal(err)
	}
	e := Wrap(zeroDims{}, c)
	if _, err := e.Embed(context.Background(), []string{"t"}); err != nil {
		t.Fatal(err)
	}
	if e.Dimensions() != 4 {
		t.Fatalf("Dimensions = %d, want 4 from the cached vector", e.Dimensions())
	}
}

// zeroDims is an adapter that has not learnt its dimensions and fails if
// asked to embed.
type zeroDims struct{}

func (zeroDims) ModelID() string { return "m" }
func (zeroDims) Dimensions() int { return 0 }
func (zeroDims) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("should not be called")
}

// A cache written with float32 vectors (before int8) is emptied when
// opened, rather than read as codes.
func TestCacheOfAnOlderFormatIsEmptied(t *testing.T) {
	dir := t.TempDir()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	old := make([]byte, 12) // three float32s
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set(key("m1", "x"), old) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c := open(t, dir)
	defer c.Close()
	got, err := c.Lookup("m1", []string{"x"})
	if err != nil || got[0] != nil {
		t.Fatalf("Lookup after the format change = %v, %v; want a miss", got, err)
	}
}

// A damaged cache is never read: its tables are checked before Badger
// opens them, and a garbled one moves the cache aside and starts an empty
// one, so what was cached is embedded again rather than served as garbage
// or a crash.
func TestDamagedCacheStartsEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "embed")
	c := open(t, dir)
	texts := make([]string, 2000)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d", i)
	}
	if _, err := Wrap(&countingEmbedder{model: "m1"}, c).Embed(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table written at the close")
	}
	for _, p := range ssts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(b) / 3; i < min(len(b)/3+4096, len(b)); i++ {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c = open(t, dir)
	defer c.Close()
	if aside := localdb.AsideOf(dir); len(aside) != 1 {
		t.Fatalf("the damaged cache was not moved aside: %v", aside)
	}
	inner := &countingEmbedder{model: "m1"}
	if _, err := Wrap(inner, c).Embed(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	if n := len(inner.embedded()); n != len(texts) {
		t.Fatalf("embedded %d of %d texts again; want all, from an empty cache", n, len(texts))
	}
}
