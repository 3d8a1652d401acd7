package bus_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// gatedSyncs is a sync that waits for a release, one per sync, and
// reports each one's start.
type gatedSyncs struct {
	started chan int
	release chan error
	n       atomic.Int32
}

func newGatedSyncs() *gatedSyncs {
	return &gatedSyncs{started: make(chan int, 100), release: make(chan error)}
}

func (g *gatedSyncs) sync() error {
	g.started <- int(g.n.Add(1))
	return <-g.release
}

func returned(ch chan error) bool {
	select {
	case err := <-ch:
		ch <- err
		return true
	default:
		return false
	}
}

func syncInBackground(g *bus.GroupSync) chan error {
	done := make(chan error, 1)
	go func() { done <- g.Sync(context.Background()) }()
	return done
}

// A caller that arrives while a sync runs may have written after that
// sync began: it returns only after the next one, which it shares with
// everyone else who arrived meanwhile.
func TestGroupSyncAnswersACallerOnlyAfterASyncBegunAfterIt(t *testing.T) {
	gates := newGatedSyncs()
	g := bus.NewGroupSyncWith(gates.sync)
	first := syncInBackground(g)
	if n := <-gates.started; n != 1 {
		t.Fatalf("sync %d started first", n)
	}
	var later []chan error
	for range 20 {
		later = append(later, syncInBackground(g))
	}
	// Every one of them has joined the next round before the first
	// sync ends.
	for {
		if _, waits := g.Stats(); waits == 21 {
			break
		}
		runtime.Gosched()
	}
	gates.release <- nil
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := <-gates.started; n != 2 {
		t.Fatalf("sync %d started second", n)
	}
	for i, ch := range later {
		if returned(ch) {
			t.Fatalf("caller %d answered by the sync that began before it", i)
		}
	}
	gates.release <- nil
	for i, ch := range later {
		if err := <-ch; err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if syncs, waits := g.Stats(); syncs != 2 || waits != 21 {
		t.Errorf("%d syncs for %d calls; want 2 for 21", syncs, waits)
	}
}

// A failed sync fails every caller of its round, and the next round
// syncs again.
func TestGroupSyncReportsAFailedSyncToItsRound(t *testing.T) {
	gates := newGatedSyncs()
	g := bus.NewGroupSyncWith(gates.sync)
	done := syncInBackground(g)
	<-gates.started
	gates.release <- errors.New("EIO")
	if err := <-done; err == nil {
		t.Fatal("a failed sync answered nil")
	}
	done = syncInBackground(g)
	<-gates.started
	gates.release <- nil
	if err := <-done; err != nil {
		t.Fatalf("the sync after a failed one: %v", err)
	}
}

// Bulk work joins syncs that gather longer: after a sync, the next
// round of callers who can wait starts only when their time is up or an
// impatient caller arrives, and then takes them all.
func TestGroupSyncWaitsForBulkCallersUntilSomeoneCannotWait(t *testing.T) {
	gates := newGatedSyncs()
	g := bus.NewGroupSyncWith(gates.sync)
	// Nothing synced lately: a bulk caller does not wait to gather.
	first := g.Join(time.Hour)
	<-gates.started
	gates.release <- nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first(ctx); err != nil {
		t.Fatalf("the first bulk caller waited for company: %v", err)
	}
	var bulk []func(context.Context) error
	for range 10 {
		bulk = append(bulk, g.Join(time.Hour))
	}
	shortCtx, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if err := bulk[0](shortCtx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("bulk callers were synced within the hour they can wait: %v", err)
	}
	select {
	case n := <-gates.started:
		t.Fatalf("sync %d started for callers who can wait", n)
	default:
	}
	impatient := syncInBackground(g)
	if n := <-gates.started; n != 2 {
		t.Fatalf("sync %d started for the impatient caller", n)
	}
	gates.release <- nil
	if err := <-impatient; err != nil {
		t.Fatal(err)
	}
	for i, wait := range bulk {
		if err := wait(ctx); err != nil {
			t.Fatalf("bulk caller %d was not taken along by the impatient caller's sync: %v", i, err)
		}
	}
	if syncs, waits := g.Stats(); syncs != 2 || waits != 12 {
		t.Errorf("%d syncs for %d calls; want 2 for 12", syncs, waits)
	}
}

// A worker acks only once what its handler wrote is durable: while the
// store cannot be synced the event stays unacknowledged and comes back;
// once it can, the event is acked.
func TestWorkerAcksOnlyAfterTheStoreIsSynced(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{MaxDeliver: 100})
	// The sync after a handler fails while failing is set; the one
	// before a handler, which makes the event durable, does not.
	var failing, justHandled atomic.Bool
	failing.Store(true)
	var syncs atomic.Int32
	conn.SetDurable(bus.NewGroupSyncWith(func() error {
		syncs.Add(1)
		if justHandled.Swap(false) && failing.Load() {
			return errors.New("no space left on device")
		}
		return nil
	}))
	ctx := context.Background()
	ev := fileEvent(1)
	if _, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), events.FileDeletedMsgID(ev.Repo, ev.Path, "", ev.PrevMod), ev); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	handled := 0
	w := bus.NewWorker(conn, bus.WorkerConfig{
		Stream: events.IngestStream, Consumer: events.IndexerConsumer, MaxDeliver: 100,
		RetryDelay: func(uint64) time.Duration { return 50 * time.Millisecond },
	}, func(context.Context, events.Envelope) error {
		mu.Lock()
		handled++
		mu.Unlock()
		justHandled.Store(true)
		return nil
	})
	bustest.Run(t, "worker", w.Run)
	bustest.Eventually(t, 10*time.Second, "the event handled again after its sync failed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return handled >= 3
	})
	if pending(t, conn) == 0 {
		t.Fatal("the event was acked although its effect could not be synced")
	}
	failing.Store(false)
	bustest.Eventually(t, 10*time.Second, "the event acked once the store syncs", func() bool { return pending(t, conn) == 0 })
	if syncs.Load() < 3 {
		t.Errorf("%d syncs; every handled delivery syncs before its ack", syncs.Load())
	}
}

// sync_always on an embedded server is met by syncing the store in
// groups where the system can sync a file system (Linux); off, nothing
// syncs.
func TestEmbeddedSyncAlwaysSyncsTheStoreInGroups(t *testing.T) {
	conn, srv := bustest.StartDurable(t, bus.Settings{})
	if runtime.GOOS != "linux" {
		if srv.Durable() != nil {
			t.Fatal("a store sync where the system cannot sync a file system")
		}
		return
	}
	if srv.Durable() == nil {
		t.Fatal("sync_always on Linux: no store sync for the roles")
	}
	ev := fileEvent(1)
	if _, err := bus.PublishEvent(context.Background(), conn.JS, events.FileSubject("r"), "m1", ev); err != nil {
		t.Fatal(err)
	}
	if err := conn.Durable(context.Background()); err != nil {
		t.Fatalf("syncing the store: %v", err)
	}
	if syncs, _ := srv.Durable().Stats(); syncs == 0 {
		t.Error("Durable returned without a sync")
	}
	if _, off := bustest.Start(t, bus.Settings{}); off.Durable() != nil {
		t.Error("sync_always off, yet the store is synced")
	}
}

// A sync asked after its server stopped fails instead of syncing a
// closed directory.
func TestGroupSyncAfterShutdownFails(t *testing.T) {
	_, srv := bustest.StartDurable(t, bus.Settings{})
	g := srv.Durable()
	if g == nil {
		t.Skip("this system's server syncs each write itself")
	}
	srv.Shutdown()
	if err := g.Sync(context.Background()); err == nil {
		t.Fatal("a sync after shutdown succeeded")
	}
}

// A worker whose handler's effects name the event's sequence lets the
// handler write only once the event is durable.
func TestWorkerSyncsTheEventBeforeItsHandlerWrites(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{MaxDeliver: 100})
	var syncs, wrote atomic.Int32
	conn.SetDurable(bus.NewGroupSyncWith(func() error {
		syncs.Add(1)
		return errors.New("input/output error")
	}))
	ev := fileEvent(1)
	if _, err := bus.PublishEvent(context.Background(), conn.JS, events.FileSubject("r"), events.FileDeletedMsgID(ev.Repo, ev.Path, "", ev.PrevMod), ev); err != nil {
		t.Fatal(err)
	}
	w := bus.NewWorker(conn, bus.WorkerConfig{
		Stream: events.IngestStream, Consumer: events.IndexerConsumer, MaxDeliver: 100, SyncEvents: true,
		RetryDelay: func(uint64) time.Duration { return 20 * time.Millisecond },
	}, func(ctx context.Context, _ events.Envelope) error {
		if err := bus.EventDurable(ctx); err != nil {
			return err
		}
		wrote.Add(1)
		return nil
	})
	bustest.Run(t, "worker", w.Run)
	bustest.Eventually(t, 10*time.Second, "the event delivered again after its sync failed", func() bool { return syncs.Load() >= 3 })
	if wrote.Load() != 0 {
		t.Fatalf("the handler wrote %d times although the event could not be made durable", wrote.Load())
	}
	if pending(t, conn) == 0 {
		t.Fatal("the event was acked")
	}
}
