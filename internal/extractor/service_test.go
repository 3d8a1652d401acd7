package extractor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/llm"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// decidingLLM is an LLM that finds the assistant's decisions as the rules
// do, but reports them as KindDecision with confidence 0.9, so the memory
// set is the same whichever path a batch takes. Every call consumes the
// same tokens, so its cost is deterministic.
type decidingLLM struct {
	prompt, output int
	calls          atomic.Int64

	// If block is set, the first call signals entered and waits on it.
	block   chan struct{}
	entered chan struct{}
	first   sync.Once
}

func (f *decidingLLM) Provider() string { return "fake" }
func (f *decidingLLM) Model() string    { return "decider-1" }
func (f *decidingLLM) Estimate(llm.Request) (int, int) {
	return f.prompt, f.output
}

func (f *decidingLLM) Extract(ctx context.Context, req llm.Request) (llm.Result, error) {
	f.calls.Add(1)
	blocked := false
	f.first.Do(func() { blocked = f.block != nil })
	if blocked {
		close(f.entered)
		select {
		case <-f.block:
		case <-ctx.Done():
			return llm.Result{}, fmt.Errorf("%w: %w", llm.ErrUnavailable, ctx.Err())
		}
	}
	var prose []string
	for _, m := range req.Messages {
		if rest, ok := strings.CutPrefix(m.Content, "assistant: "); ok {
			prose = append(prose, rest)
		}
	}
	exps := memory.ExtractExperiences(memory.Transcript{Text: strings.Join(prose, "\n")}, memory.DefaultGraftRules(), clock.System{})
	res := llm.Result{PromptTokens: f.prompt, OutputTokens: f.output, Attempts: 1}
	for _, e := range exps {
		res.Memories = append(res.Memories, memory.Memory{Content: e.Decision, Kind: memory.KindDecision, Rationale: e.Rationale,
			FilesTouched: req.Files, Confidence: 0.9})
	}
	return res, nil
}

// decisionBatch is batch i of a synthetic load: a prompt and an answer
// holding decision i%distinct, in one of 20 sessions.
func decisionBatch(i, distinct int) events.TranscriptBatch {
	lines := []string{
		fmt.Sprintf(`{"role":"user","content":"Task %d: pick an option for the cache."}`, i),
		fmt.Sprintf(`{"role":"assistant","content":"I decided to use option %d because it keeps reads local."}`, i%distinct),
	}
	return chatBatch("app", fmt.Sprintf("s%02d", i%20), int64(i/20)*10_000, lines)
}

func chatBatch(repo, session string, start int64, lines []string) events.TranscriptBatch {
	return linesBatch(repo, session, events.TranscriptChatJSONL, start, lines)
}

func linesBatch(repo, session, format string, start int64, lines []string) events.TranscriptBatch {
	b := events.TranscriptBatch{Repo: repo, Session: session, Source: "/tmp/" + session + ".jsonl", Format: format, StartOffset: start}
	off := start
	for _, l := range lines {
		b.Lines = append(b.Lines, json.RawMessage(l))
		b.Offsets = append(b.Offsets, off)
		off += int64(len(l)) + 1
	}
	b.EndOffset = off
	return b
}

func batchID(b events.TranscriptBatch) string {
	return events.TranscriptBatchMsgID(b.Repo, b.StreamKey(), b.StartOffset)
}

func publishBatch(t testing.TB, conn *bus.Conn, subject string, b events.TranscriptBatch) {
	t.Helper()
	if _, err := bus.PublishEvent(context.Background(), conn.JS, subject, batchID(b), b); err != nil {
		t.Fatal(err)
	}
}

func newService(t testing.TB, conn *bus.Conn, ext llm.Extractor, cfg Config) *Service {
	t.Helper()
	var e llm.Extractor
	if ext != nil {
		e = ext
	}
	s, err := New(conn, e, cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// run runs s until the test ends (or stop is called) and waits for it.
func run(t testing.TB, s *Service) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func memories(t testing.TB, conn *bus.Conn) map[string]events.MemoryRecord {
	t.Helper()
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, events.MemoriesBucket)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]events.MemoryRecord{}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := events.DecodeMemoryRecord(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		out[k] = rec
	}
	return out
}

func extractionOf(t testing.TB, conn *bus.Conn, b events.TranscriptBatch) (events.ExtractionRecord, bool) {
	t.Helper()
	kv, err := conn.JS.KeyValue(context.Background(), events.ExtractionsBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(context.Background(), ExtractionKeyOf(b))
	if isNotFound(err) {
		return events.ExtractionRecord{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	rec, err := events.DecodeExtractionRecord(e.Value())
	if err != nil {
		t.Fatal(err)
	}
	return rec, true
}

func expectedKeys(repo string, distinct int) []string {
	var keys []string
	for d := range distinct {
		keys = append(keys, events.MemoryKey(repo, memory.Hash(fmt.Sprintf("Use option %d", d))))
	}
	slices.Sort(keys)
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// twinStream is a second stream carrying copies of the same batches, with
// its own consumer, so that a second Service really handles every batch
// too (CUE_INGEST is a work queue: one consumer per subject).
const (
	twinStream  = "CUE_TWIN"
	twinSubject = "twin.transcript.app"
)

func addTwin(t testing.TB, conn *bus.Conn) {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.JS.CreateStream(ctx, jetstream.StreamConfig{Name: twinStream, Subjects: []string{"twin.transcript.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: 15 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.JS.CreateOrUpdateConsumer(ctx, twinStream, jetstream.ConsumerConfig{Durable: events.ExtractorConsumer,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 5 * time.Minute, MaxDeliver: 5, MaxAckPending: 64}); err != nil {
		t.Fatal(err)
	}
}

func pendingOn(t testing.TB, conn *bus.Conn, stream string) uint64 {
	t.Helper()
	c, err := conn.JS.Consumer(context.Background(), stream, events.ExtractorConsumer)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.NumPending + uint64(info.NumAckPending)
}

// runTwins feeds n batches to two Services, each on its own stream, and
// waits until both handled every one.
func runTwins(t *testing.T, n, distinct int, ext llm.Extractor, cfg Config) (*bus.Conn, *Service, *Service, []events.TranscriptBatch) {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	addTwin(t, conn)
	a := newService(t, conn, ext, cfg)
	tw := cfg
	tw.Stream = twinStream
	b := newService(t, conn, ext, tw)
	var batches []events.TranscriptBatch
	for i := range n {
		batches = append(batches, decisionBatch(i, distinct))
	}
	run(t, a)
	run(t, b)
	for _, bt := range batches {
		publishBatch(t, conn, events.TranscriptSubject("app"), bt)
		publishBatch(t, conn, twinSubject, bt)
	}
	bustest.Eventually(t, 2*time.Minute, "both services handle every batch", func() bool {
		return a.Stats().Batches >= uint64(n) && b.Stats().Batches >= uint64(n)
	})
	if pa, pb := pendingOn(t, conn, events.IngestStream), pendingOn(t, conn, twinStream); pa != 0 || pb != 0 {
		t.Fatalf("unacked batches left: %d and %d", pa, pb)
	}
	return conn, a, b, batches
}

func TestTwoServicesStoreEachMemoryOnce(t *testing.T) {
	const n, distinct = 500, 150
	conn, a, b, batches := runTwins(t, n, distinct, nil, Config{Concurrency: 4})
	got := memories(t, conn)
	if keys := sortedKeys(got); !slices.Equal(keys, expectedKeys("app", distinct)) {
		t.Fatalf("%d memories stored, want the %d expected", len(keys), distinct)
	}
	sa, sb := a.Stats(), b.Stats()
	t.Logf("A: stored %v, reused %d, discarded %d, store %+v", sa.Paths, sa.Reused, sa.Discarded, sa.Store)
	t.Logf("B: stored %v, reused %d, discarded %d, store %+v", sb.Paths, sb.Reused, sb.Discarded, sb.Store)
	if ins := sa.Store.Inserted + sb.Store.Inserted; ins != distinct {
		t.Fatalf("inserts across both services %d, want %d", ins, distinct)
	}
	for k, m := range got {
		if m.Kind != memory.KindExperience || m.Provider != ProviderRules || m.Confidence != memory.DefaultConfidence ||
			m.Rationale != "It keeps reads local" || m.Extractions < 1 || m.Hash != memory.Hash(m.Content) {
			t.Fatalf("%s: %+v", k, m)
		}
	}
	for _, bt := range batches {
		rec, ok := extractionOf(t, conn, bt)
		if !ok || rec.Path != events.PathRules || rec.Why != WhyNoLLM || len(rec.Memories) != 1 {
			t.Fatalf("batch %s: %+v %v", batchID(bt), rec, ok)
		}
	}
	if stored := sa.Paths[events.PathRules] + sb.Paths[events.PathRules]; stored != n {
		t.Fatalf("extraction records stored %d, want %d (the rest reused or discarded)", stored, n)
	}
}

func TestTwoServicesShareTheBudgetExactly(t *testing.T) {
	const n, distinct, k = 500, 150, 40
	ext := &decidingLLM{prompt: 1000, output: 500}
	// 1000 in at 1 $/MTok and 500 out at 2 $/MTok: 2000 µ$ a call.
	cfg := Config{Concurrency: 4, PriceInPerMTok: 1, PriceOutPerMTok: 2, DailyUSD: k * 2000 / 1e6}
	conn, a, b, batches := runTwins(t, n, distinct, ext, cfg)

	if calls := ext.calls.Load(); calls != k {
		t.Fatalf("%d LLM calls, want exactly %d", calls, k)
	}
	st := state(t, a.Budget(), time.Now())
	if st.SpentMicros != k*2000 || st.ReservedOpen != 0 || st.Calls != k || !slices.Equal(st.AlertsFired, []int{70, 90, 100}) {
		t.Fatalf("budget %+v, want %d µ$ spent in %d calls", st, k*2000, k)
	}
	sa, sb := a.Stats(), b.Stats()
	t.Logf("A: calls %d, refused %d, stored %v %v, discarded llm %d; B: calls %d, refused %d, stored %v %v, discarded llm %d",
		sa.LLMCalls, sa.BudgetRefused, sa.Paths, sa.RulesWhy, sa.DiscardedLLM, sb.LLMCalls, sb.BudgetRefused, sb.Paths, sb.RulesWhy, sb.DiscardedLLM)
	llmRecords := 0
	for _, bt := range batches {
		rec, ok := extractionOf(t, conn, bt)
		switch {
		case !ok:
			t.Fatalf("batch %s has no extraction record", batchID(bt))
		case rec.Path == events.PathLLM:
			llmRecords++
			if rec.SpentMicros != 2000 || rec.Provider != "fake" {
				t.Fatalf("%+v", rec)
			}
		case rec.Path != events.PathRules || rec.Why != WhyBudgetExhausted:
			t.Fatalf("batch %s took %s (%s), want llm or rules/budget_exhausted", batchID(bt), rec.Path, rec.Why)
		}
	}
	// Both services may call the LLM for one batch at once; the loser's
	// answer is discarded, so calls = LLM records + discarded calls.
	if discarded := sa.DiscardedLLM + sb.DiscardedLLM; uint64(llmRecords)+discarded != k {
		t.Fatalf("%d LLM records + %d discarded calls, want %d", llmRecords, discarded, k)
	}
	got := memories(t, conn)
	if keys := sortedKeys(got); !slices.Equal(keys, expectedKeys("app", distinct)) {
		t.Fatalf("%d memories stored, want the %d expected", len(keys), distinct)
	}
	if ins := sa.Store.Inserted + sb.Store.Inserted; ins != distinct {
		t.Fatalf("inserts %d, want %d", ins, distinct)
	}
}

// A transcript rewritten from the start brings other lines at the same
// offsets: their extraction must not be the old lines'. The same lines, as
// the worker receives them after the event's encoding, keep their key.
func TestExtractionKeyNamesTheLines(t *testing.T) {
	old := events.TranscriptBatch{Repo: "app", Session: "s1", Source: "/t.jsonl", Format: events.TranscriptChatJSONL,
		Lines: []json.RawMessage{json.RawMessage(`{"role": "assistant", "content": "I decided to use <b>Badger</b> & NATS"}`)}, Offsets: []int64{0}, EndOffset: 70}
	rewritten := old
	rewritten.Lines = []json.RawMessage{json.RawMessage(`{"role": "assistant", "content": "I decided to use Postgres"}`)}
	if ExtractionKeyOf(old) == ExtractionKeyOf(rewritten) {
		t.Fatal("different lines at the same offset share an extraction key")
	}
	data, err := events.Encode(old)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := events.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	received := ev.(events.TranscriptBatch)
	if string(received.Lines[0]) == string(old.Lines[0]) {
		t.Fatal("the encoding no longer rewrites lines; this test lost its point")
	}
	if ExtractionKeyOf(received) != ExtractionKeyOf(old) {
		t.Fatalf("the key changed in transit: %s vs %s", received.Lines[0], old.Lines[0])
	}
}
