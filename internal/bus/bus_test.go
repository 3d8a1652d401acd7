package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func fileEvent(i int) events.FileDeleted {
	return events.FileDeleted{Repo: "r", Path: fmt.Sprintf("f%d.md", i), PrevMod: time.Unix(int64(i), 0)}
}

func publish(t *testing.T, conn *bus.Conn, i int) {
	t.Helper()
	ev := fileEvent(i)
	if _, err := bus.PublishEvent(context.Background(), conn.JS, events.FileSubject("r"), events.FileDeletedMsgID(ev.Repo, ev.Path, "", ev.PrevMod), ev); err != nil {
		t.Fatal(err)
	}
}

func TestProvisionIsIdempotent(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatalf("second provision: %v", err)
	}
	s, err := conn.JS.Stream(ctx, events.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info(ctx)
	if info.Config.Retention != jetstream.LimitsPolicy || info.Config.Discard != jetstream.DiscardNew || info.Config.Duplicates < bus.PublishRetryHorizon {
		t.Fatalf("ingest stream config: %+v", info.Config)
	}
}

func TestDuplicatePublishStoredOnce(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	publish(t, conn, 1)
	publish(t, conn, 1)
	publish(t, conn, 2)
	s, _ := conn.JS.Stream(context.Background(), events.IngestStream)
	info, _ := s.Info(context.Background())
	if info.State.Msgs != 2 {
		t.Fatalf("stored %d messages, want 2 (a republish with the same id is a duplicate)", info.State.Msgs)
	}
}

func runWorker(t *testing.T, conn *bus.Conn, h bus.Handler) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := bus.NewWorker(conn, bus.WorkerConfig{
		Stream: events.IngestStream, Consumer: events.IndexerConsumer, MaxDeliver: 3,
		RetryDelay: func(uint64) time.Duration { return time.Millisecond },
	}, h)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func deadLetters(t *testing.T, conn *bus.Conn) []*jetstream.RawStreamMsg {
	ctx := context.Background()
	s, err := conn.JS.Stream(ctx, events.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info(ctx)
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err == nil {
			out = append(out, m)
		}
	}
	return out
}

// pending is what the indexer consumer has not settled: events the queue
// keeps until its workers trim them do not count.
func pending(t *testing.T, conn *bus.Conn) uint64 {
	c, err := conn.JS.Consumer(context.Background(), events.IngestStream, events.IndexerConsumer)
	if err != nil {
		t.Fatal(err)
	}
	info := c.CachedInfo()
	return info.NumPending + uint64(info.NumAckPending)
}

func TestWorkerAcksSuccess(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{MaxDeliver: 3})
	var mu sync.Mutex
	seen := map[string]uint64{}
	stop := runWorker(t, conn, func(ctx context.Context, env events.Envelope) error {
		mu.Lock()
		defer mu.Unlock()
		seen[env.Event.(events.FileDeleted).Path] = env.StreamSeq
		return nil
	})
	defer stop()
	for i := range 50 {
		publish(t, conn, i)
	}
	// The consumer's counts alone can say nothing is pending before the
	// last events are delivered (see trimBound): all handled, then none
	// pending.
	handled := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	bustest.Eventually(t, 10*time.Second, "all handled and acked", func() bool { return handled() == 50 && pending(t, conn) == 0 })
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 50 {
		t.Fatalf("handled %d distinct events, want 50", len(seen))
	}
}

func TestWorkerRetriesThenDeadLetters(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{MaxDeliver: 3})
	var attempts atomic.Int32
	stop := runWorker(t, conn, func(ctx context.Context, env events.Envelope) error {
		attempts.Add(1)
		if env.Event.(events.FileDeleted).Path == "f1.md" {
			return errors.New("disk on fire")
		}
		return nil
	})
	defer stop()
	publish(t, conn, 1)
	publish(t, conn, 2)
	bustest.Eventually(t, 10*time.Second, "queue empty", func() bool { return pending(t, conn) == 0 })
	dl := deadLetters(t, conn)
	if len(dl) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dl))
	}
	if got := dl[0].Header.Get(events.HeaderDeadError); got != "disk on fire" {
		t.Fatalf("dead letter error header %q", got)
	}
	if got := dl[0].Header.Get(events.HeaderDeadDeliver); got != "3" {
		t.Fatalf("dead letter after %s deliveries, want 3", got)
	}
	if n := attempts.Load(); n != 4 {
		t.Fatalf("%d handler calls, want 3 for the failing event and 1 for the good one", n)
	}
}

func TestUndecodableEventDeadLettersAtOnce(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{MaxDeliver: 3})
	var calls atomic.Int32
	stop := runWorker(t, conn, func(ctx context.Context, env events.Envelope) error {
		calls.Add(1)
		return nil
	})
	defer stop()
	m := nats.NewMsg(events.FileSubject("r"))
	m.Data = []byte(`{"v":"9.0","kind":"file.deleted","data":{}}`)
	m.Header.Set(jetstream.MsgIDHeader, "bad-1")
	ack, err := conn.JS.PublishMsg(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 10*time.Second, "dead letter", func() bool { return len(deadLetters(t, conn)) == 1 })
	dl := deadLetters(t, conn)[0]
	if dl.Header.Get(events.HeaderDeadDeliver) != "1" {
		t.Fatalf("an event no retry can fix must be dead-lettered on first delivery; got after %s", dl.Header.Get(events.HeaderDeadDeliver))
	}
	if seq, _ := strconv.ParseUint(dl.Header.Get(events.HeaderDeadSeq), 10, 64); seq != ack.Sequence {
		t.Fatalf("dead letter names source seq %d, not %d", seq, ack.Sequence)
	}
	if calls.Load() != 0 {
		t.Fatal("handler must not see an undecodable event")
	}
}

func TestDrainFinishesInFlight(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{MaxDeliver: 3})
	started := make(chan struct{})
	release := make(chan struct{})
	var done atomic.Bool
	stop := runWorker(t, conn, func(ctx context.Context, env events.Envelope) error {
		close(started)
		<-release
		done.Store(true)
		return nil
	})
	publish(t, conn, 1)
	<-started
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	close(release)
	<-stopped
	if !done.Load() {
		t.Fatal("Run returned before the in-flight handler finished")
	}
	if pending(t, conn) != 0 {
		t.Fatal("the in-flight message was not acked before Run returned")
	}
}

func TestInterruptibleWorkerPutsItsMessageBackOnStop(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{MaxDeliver: 3})
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	w := bus.NewWorker(conn, bus.WorkerConfig{
		Stream: events.IngestStream, Consumer: events.IndexerConsumer, MaxDeliver: 3, Interruptible: true,
		RetryDelay: func(uint64) time.Duration { return time.Hour },
	}, func(ctx context.Context, env events.Envelope) error {
		close(started)
		<-ctx.Done() // a long piece of work that honours its context
		return ctx.Err()
	})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	publish(t, conn, 1)
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(deadLetters(t, conn)); n != 0 {
		t.Fatalf("%d dead letters for a handler stopped by shutdown", n)
	}
	// Put back at once, not after the hour-long retry delay: the next
	// worker gets it straight away.
	got := make(chan uint64, 1)
	stop := runWorker(t, conn, func(ctx context.Context, env events.Envelope) error {
		select {
		case got <- env.StreamSeq:
		default:
		}
		return nil
	})
	defer stop()
	select {
	case seq := <-got:
		if first, _ := bus.ReadStream(context.Background(), conn.JS, events.IngestStream); seq != first.FirstSeq {
			t.Fatalf("redelivered seq %d, not the first message's %d", seq, first.FirstSeq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupted message was not handed to the next worker")
	}
}

// A cache from before compression: provisioning turns it on for the
// buckets of file contents, keeping what they hold.
func TestProvisionCompressesContentBucketsOfAnOlderCache(t *testing.T) {
	ctx := context.Background()
	conn := connectUnprovisioned(t, t.TempDir())
	old := bus.DeclaredTopology(bus.Settings{})
	for i := range old.Buckets {
		old.Buckets[i].Compression = false
	}
	for i := range old.Objects {
		old.Objects[i].Compression = false
	}
	if err := bus.Provision(ctx, conn.JS, old, nil); err != nil {
		t.Fatal(err)
	}
	kv, _ := conn.JS.KeyValue(ctx, events.DocsBucket)
	if _, err := kv.Put(ctx, "app.a", []byte("kept")); err != nil {
		t.Fatal(err)
	}

	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"KV_" + events.DocsBucket, "OBJ_" + events.BlobsBucket} {
		s, err := conn.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if c := s.CachedInfo().Config.Compression; c != jetstream.S2Compression {
			t.Errorf("%s compression %v, want S2", name, c)
		}
	}
	if e, err := kv.Get(ctx, "app.a"); err != nil || string(e.Value()) != "kept" {
		t.Fatalf("value across the change: %v %v", e, err)
	}
}

// connectUnprovisioned starts an embedded server storing in dir, with
// nothing provisioned (bustest provisions), and connects to it.
func connectUnprovisioned(t *testing.T, dir string) *bus.Conn {
	t.Helper()
	srv, err := bus.StartEmbedded(bus.EmbeddedConfig{StoreDir: dir, ServerName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	conn, err := bus.Connect(context.Background(), srv.ClientURL(), bus.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}
