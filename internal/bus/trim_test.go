package bus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// held lists the sequences of the messages CUE_INGEST still holds, by
// subject prefix.
func held(t *testing.T, conn *bus.Conn) (files, transcripts []uint64) {
	t.Helper()
	ctx := context.Background()
	s, err := conn.JS.Stream(ctx, events.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	info := s.CachedInfo()
	if info.State.Msgs == 0 {
		return nil, nil
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(m.Subject, events.SubjectTranscriptPrefix) {
			transcripts = append(transcripts, seq)
		} else {
			files = append(files, seq)
		}
	}
	return files, transcripts
}

// The indexer's workers trim the file events their consumer settled, and
// nothing else: not an event in a worker's hand, not one waiting for its
// retry, not one above either, and not the transcript events another
// consumer has yet to take.
func TestWorkersTrimWhatTheirConsumerSettled(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{MaxDeliver: 5})
	ctx := context.Background()
	seqOf := map[string]uint64{}
	var transcriptSeqs []uint64
	for i := range 20 {
		ev := fileEvent(i)
		ack, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), events.FileDeletedMsgID(ev.Repo, ev.Path, "", ev.PrevMod), ev)
		if err != nil {
			t.Fatal(err)
		}
		seqOf[ev.Path] = ack.Sequence
		if i%7 == 3 {
			b := events.TranscriptBatch{Repo: "r", Session: fmt.Sprintf("s%d", i), Source: "/tmp/s.jsonl", Format: events.TranscriptClaudeCode, EndOffset: 3, Lines: []json.RawMessage{json.RawMessage("{}")}}
			ack, err := bus.PublishEvent(ctx, conn.JS, events.TranscriptSubject("r"), events.TranscriptBatchMsgID("r", b.Session, 0), b)
			if err != nil {
				t.Fatal(err)
			}
			transcriptSeqs = append(transcriptSeqs, ack.Sequence)
		}
	}
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseHandler := func() { releaseOnce.Do(func() { close(release) }) }
	var (
		mu      sync.Mutex
		retried bool
	)
	w := bus.NewWorker(conn, bus.WorkerConfig{
		Stream: events.IngestStream, Consumer: events.IndexerConsumer, MaxDeliver: 5, Concurrency: 4,
		// f7.md fails once and waits long enough for its retry that
		// the trims before it must leave it.
		RetryDelay: func(uint64) time.Duration { return 3 * time.Second },
	}, func(ctx context.Context, env events.Envelope) error {
		switch env.Event.(events.FileDeleted).Path {
		case "f5.md":
			<-release
		case "f7.md":
			mu.Lock()
			defer mu.Unlock()
			if !retried {
				retried = true
				return errors.New("not yet")
			}
		}
		return nil
	})
	bustest.Run(t, "worker", w.Run)
	// Registered after Run's, so it runs first: a failed test must not
	// leave the worker's stop waiting for a handler that waits for it.
	t.Cleanup(releaseHandler)

	below := func(seq uint64) func() bool {
		return func() bool {
			files, _ := held(t, conn)
			return len(files) > 0 && files[0] >= seq
		}
	}
	bustest.Eventually(t, 10*time.Second, "the events below the one in hand trimmed", below(seqOf["f5.md"]))
	files, transcripts := held(t, conn)
	if files[0] != seqOf["f5.md"] || len(files) != 20-5 {
		t.Fatalf("holding file events %v; want every one from f5.md's %d on", files, seqOf["f5.md"])
	}
	if fmt.Sprint(transcripts) != fmt.Sprint(transcriptSeqs) {
		t.Fatalf("holding transcript events %v, want all of %v", transcripts, transcriptSeqs)
	}

	releaseHandler()
	bustest.Eventually(t, 10*time.Second, "the events below the one waiting for its retry trimmed", below(seqOf["f7.md"]))
	if files, _ := held(t, conn); files[0] != seqOf["f7.md"] {
		t.Fatalf("holding file events %v; f7.md's %d waits for its retry", files, seqOf["f7.md"])
	}

	bustest.Eventually(t, 15*time.Second, "every file event trimmed once all are settled", func() bool {
		files, _ := held(t, conn)
		return len(files) == 0
	})
	if _, transcripts := held(t, conn); fmt.Sprint(transcripts) != fmt.Sprint(transcriptSeqs) {
		t.Fatalf("holding transcript events %v, want all of %v", transcripts, transcriptSeqs)
	}

	// Later events are trimmed as well.
	publish(t, conn, 100)
	bustest.Eventually(t, 10*time.Second, "a later event settled and trimmed", func() bool {
		files, _ := held(t, conn)
		return len(files) == 0 && pending(t, conn) == 0
	})
}

// A queue an earlier release created as a work queue keeps working as one
// while it holds events, and is created again trimmed by its workers at
// the first start that finds it empty, above the sequences it gave out.
func TestWorkQueueOfAnEarlierReleaseIsUpgradedOnceEmpty(t *testing.T) {
	ctx := context.Background()
	conn := connectUnprovisioned(t, t.TempDir())
	declared := bus.DeclaredTopology(bus.Settings{IngestMaxBytes: 64 << 20})
	earlier := bus.DeclaredTopology(bus.Settings{IngestMaxBytes: 64 << 20})
	for i, sc := range earlier.Streams {
		if sc.Name == events.IngestStream || sc.Name == events.EmbedStream {
			earlier.Streams[i].Retention = jetstream.WorkQueuePolicy
		}
	}
	if err := bus.Provision(ctx, conn.JS, earlier, nil); err != nil {
		t.Fatal(err)
	}
	publish(t, conn, 1)
	retention := func(name string) jetstream.RetentionPolicy {
		s, err := conn.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return s.CachedInfo().Config.Retention
	}

	// Holding an event: left as it is, and provisioning says so.
	if deleted, err := bus.UpgradeEmptyQueues(ctx, conn.JS, nil); err != nil || len(deleted) != 1 || deleted[0] != events.EmbedStream {
		t.Fatalf("upgrade with CUE_INGEST holding an event deleted %v (%v), want only the empty CUE_EMBED", deleted, err)
	}
	var log logtest.Buffer
	if err := bus.Provision(ctx, conn.JS, declared, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		t.Fatalf("provisioning over a work queue: %v", err)
	}
	if retention(events.IngestStream) != jetstream.WorkQueuePolicy || retention(events.EmbedStream) != jetstream.LimitsPolicy {
		t.Fatalf("retention of CUE_INGEST %v, CUE_EMBED %v; want the work queue kept and the empty queue upgraded", retention(events.IngestStream), retention(events.EmbedStream))
	}
	if !strings.Contains(log.String(), "stays a work queue") || !strings.Contains(log.String(), events.IngestStream) {
		t.Fatalf("provisioning logged nothing about the work queue kept:\n%s", log.String())
	}
	before, err := bus.ReadStream(ctx, conn.JS, events.IngestStream)
	if err != nil {
		t.Fatal(err)
	}

	// Its workers take the event as from any queue.
	stop := runWorker(t, conn, func(context.Context, events.Envelope) error { return nil })
	bustest.Eventually(t, 10*time.Second, "the event taken", func() bool {
		s, err := conn.JS.Stream(ctx, events.IngestStream)
		return err == nil && s.CachedInfo().State.Msgs == 0
	})
	stop()

	if deleted, err := bus.UpgradeEmptyQueues(ctx, conn.JS, nil); err != nil || len(deleted) != 1 || deleted[0] != events.IngestStream {
		t.Fatalf("upgrade with CUE_INGEST empty deleted %v (%v), want CUE_INGEST", deleted, err)
	}
	if err := bus.Provision(ctx, conn.JS, declared, nil); err != nil {
		t.Fatal(err)
	}
	if retention(events.IngestStream) != jetstream.LimitsPolicy {
		t.Fatalf("CUE_INGEST retention %v after the upgrade", retention(events.IngestStream))
	}
	after, err := bus.ReadStream(ctx, conn.JS, events.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	if after.FirstSeq <= before.LastSeq {
		t.Fatalf("the upgraded CUE_INGEST starts at %d, not above the %d the work queue gave out", after.FirstSeq, before.LastSeq)
	}
	if deleted, err := bus.UpgradeEmptyQueues(ctx, conn.JS, nil); err != nil || len(deleted) != 0 {
		t.Fatalf("a second upgrade deleted %v (%v)", deleted, err)
	}
}
