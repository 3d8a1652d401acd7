package extractor

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// shortAckWait lets the server hand a dead worker's batches to another
// within a test: the topology's AckWait for the extractor is 5 min.
func shortAckWait(t testing.TB, conn *bus.Conn, d time.Duration) {
	t.Helper()
	cfg, ok := bus.DeclaredTopology(bus.Settings{}).ConsumerConfig(events.IngestStream, events.ExtractorConsumer)
	if !ok {
		t.Fatal("no extractor consumer in the topology")
	}
	cfg.AckWait = d
	if _, err := conn.JS.UpdateConsumer(context.Background(), events.IngestStream, cfg); err != nil {
		t.Fatal(err)
	}
}

// killable is a Service on its own connection, killed by closing the
// connection without acking what it holds.
type killable struct {
	svc  *Service
	conn *bus.Conn
	done chan struct{}
	stop context.CancelFunc
}

func startKillable(t *testing.T, srv *bus.Embedded, ext *decidingLLM, cfg Config) *killable {
	t.Helper()
	conn, err := bus.Connect(context.Background(), srv.ClientURL(), bus.ConnectOptions{Name: "doomed"})
	if err != nil {
		t.Fatal(err)
	}
	k := &killable{svc: newService(t, conn, ext, cfg), conn: conn, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	k.stop = cancel
	go func() {
		defer close(k.done)
		k.svc.Run(ctx) // fails once killed: that is the point
	}()
	return k
}

// kill drops the connection under the worker, as a crash would.
func (k *killable) kill() {
	k.stop()
	k.conn.NC.Close()
}

func restartBatches(n int) []events.TranscriptBatch {
	var out []events.TranscriptBatch
	for i := range n {
		out = append(out, decisionBatch(i, n))
	}
	return out
}

// checkAllExtracted waits for every batch to be extracted and acked on
// the surviving service's watch, then checks each memory is stored once.
func checkAllExtracted(t *testing.T, conn *bus.Conn, batches []events.TranscriptBatch, inserts func() uint64) {
	t.Helper()
	bustest.Eventually(t, time.Minute, "every batch extracted and acked", func() bool {
		for _, b := range batches {
			if _, ok := extractionOf(t, conn, b); !ok {
				return false
			}
		}
		return pendingOn(t, conn, events.IngestStream) == 0
	})
	bustest.Eventually(t, 30*time.Second, "every memory stored", func() bool { return len(memories(t, conn)) == len(batches) })
	if keys := sortedKeys(memories(t, conn)); !slices.Equal(keys, expectedKeys("app", len(batches))) {
		t.Fatalf("memories %v, want %v", keys, expectedKeys("app", len(batches)))
	}
	if got := inserts(); got != uint64(len(batches)) {
		t.Fatalf("%d inserts for %d distinct memories", got, len(batches))
	}
	for k, m := range memories(t, conn) {
		if m.Extractions != 1 {
			t.Fatalf("%s counted %d extractions of one batch", k, m.Extractions)
		}
	}
}

func TestKilledInsideTheLLMCallLosesNothing(t *testing.T) {
	const n = 12
	conn, srv := bustest.Start(t, bus.Settings{})
	shortAckWait(t, conn, time.Second)
	ext := &decidingLLM{prompt: 10, output: 10, block: make(chan struct{}), entered: make(chan struct{})}
	// 20 µ$ a call, counted by a disabled budget.
	cfg := Config{Concurrency: 1, ProgressEvery: time.Hour, PriceInPerMTok: 1, PriceOutPerMTok: 1}
	doomed := startKillable(t, srv, ext, cfg)
	t.Cleanup(func() { close(ext.block); <-doomed.done })

	batches := restartBatches(n)
	for _, b := range batches {
		publishBatch(t, conn, events.TranscriptSubject("app"), b)
	}
	<-ext.entered
	doomed.kill()

	cfg.ProgressEvery = 200 * time.Millisecond
	survivor := newService(t, conn, ext, cfg)
	run(t, survivor)
	checkAllExtracted(t, conn, batches, func() uint64 {
		return doomed.svc.Stats().Store.Inserted + survivor.Stats().Store.Inserted
	})
	// The killed call was never answered: its batch was extracted again.
	if calls := ext.calls.Load(); calls != n+1 {
		t.Fatalf("%d LLM calls, want %d (every batch once, the killed one twice)", calls, n+1)
	}
	for _, b := range batches {
		if rec, _ := extractionOf(t, conn, b); rec.Path != events.PathLLM {
			t.Fatalf("batch %s: %s (%s)", batchID(b), rec.Path, rec.Why)
		}
	}
	// The killed call's reservation was never settled: it stays charged.
	st := state(t, survivor.Budget(), time.Now())
	if st.Calls != n+1 || st.ReservedOpen != 20 || st.SpentMicros != (n+1)*20 {
		t.Fatalf("budget %+v", st)
	}
}

func TestKilledAfterTheExtractionRecordReusesIt(t *testing.T) {
	const n = 12
	conn, srv := bustest.Start(t, bus.Settings{})
	shortAckWait(t, conn, time.Second)
	ext := &decidingLLM{prompt: 10, output: 10}
	cfg := Config{Concurrency: 1, ProgressEvery: time.Hour}
	doomed := startKillable(t, srv, ext, cfg)
	recorded, release := make(chan events.TranscriptBatch), make(chan struct{})
	first := true
	doomed.svc.afterRecord = func(b events.TranscriptBatch) {
		if first { // Concurrency 1: one handler at a time
			first = false
			recorded <- b
			<-release
		}
	}
	t.Cleanup(func() { close(release); <-doomed.done })

	batches := restartBatches(n)
	for _, b := range batches {
		publishBatch(t, conn, events.TranscriptSubject("app"), b)
	}
	held := <-recorded
	doomed.kill()

	survivor := newService(t, conn, ext, cfg)
	run(t, survivor)
	checkAllExtracted(t, conn, batches, func() uint64 {
		return doomed.svc.Stats().Store.Inserted + survivor.Stats().Store.Inserted
	})
	if calls := ext.calls.Load(); calls != n {
		t.Fatalf("%d LLM calls for %d batches: the stored extraction was not reused", calls, n)
	}
	if st := survivor.Stats(); st.Reused != 1 {
		t.Fatalf("survivor reused %d records, want 1 (batch %s)", st.Reused, batchID(held))
	}
}

// TestLongCallKeepsItsBatch: a call longer than AckWait reports progress,
// so the batch is not handed to anyone else meanwhile.
func TestLongCallKeepsItsBatch(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	shortAckWait(t, conn, time.Second)
	ext := &decidingLLM{prompt: 10, output: 10, block: make(chan struct{}), entered: make(chan struct{})}
	s := newService(t, conn, ext, Config{Concurrency: 2, ProgressEvery: 100 * time.Millisecond})
	run(t, s)
	b := decisionBatch(0, 1)
	publishBatch(t, conn, events.TranscriptSubject("app"), b)
	<-ext.entered
	// Hold the call past three AckWaits, measured by the server: the
	// consumer would have redelivered by now without the progress reports.
	deadline := time.Now().Add(3500 * time.Millisecond)
	bustest.Eventually(t, 10*time.Second, "three AckWaits pass", func() bool { return time.Now().After(deadline) })
	close(ext.block)
	bustest.Eventually(t, 30*time.Second, "batch handled", func() bool { return s.Stats().Batches == 1 })
	if calls := ext.calls.Load(); calls != 1 {
		t.Fatalf("batch redelivered during the call: %d calls", calls)
	}
}
