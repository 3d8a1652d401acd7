package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/core/graph"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func startBoard(t *testing.T, conn *bus.Conn) *tasks.Board {
	t.Helper()
	b := tasks.NewBoard(conn.JS, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return b
}

func task(id string, deps ...string) events.Task {
	at := time.Date(2026, 1, 2, 10, 43, 0, 0, time.UTC)
	return events.Task{ID: id, Title: "task " + id, Status: "todo", Priority: "medium", DependsOn: deps, Created: at, Updated: at, Path: ".cuedeck/cards/" + id + ".md"}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAppendAndReplay(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	ctx := ctxT(t)
	for _, tk := range []events.Task{task("aaaaaa"), task("bbbbbb", "aaaaaa")} {
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: tk, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.Tasks("app"); len(got) != 2 || got["bbbbbb"].DependsOn[0] != "aaaaaa" {
		t.Fatalf("board: %+v", got)
	}
	// A second board replays the log to the same state.
	b2 := startBoard(t, conn)
	if err := b2.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b2.Tasks("app"); len(got) != 2 {
		t.Fatalf("replayed board: %+v", got)
	}
	// A stale writer (b2 has not seen a new event) retries on the new state.
	if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskDeleted, Task: task("bbbbbb")}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := b2.Mutate(ctx, "app", func(cur map[string]events.Task) (events.TaskEvent, error) {
		return events.TaskEvent{Op: events.TaskCreated, Task: task("cccccc", "bbbbbb")}, tasks.CheckDependencies(cur, "cccccc", []string{"bbbbbb"})
	})
	var missing *tasks.MissingDependencyError
	if !errors.As(err, &missing) {
		t.Fatalf("err = %v, want MissingDependencyError", err)
	}
}

// TestConcurrentCycle: two boards on one server each add one half of a
// cycle; exactly one write wins and the other sees the cycle.
func TestConcurrentCycle(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b1, b2 := startBoard(t, conn), startBoard(t, conn)
	ctx := ctxT(t)
	for i := 0; i < 20; i++ {
		repo := "r" + string(rune('a'+i))
		for _, id := range []string{"aaaaaa", "bbbbbb"} {
			if _, err := b1.Append(ctx, events.TaskEvent{Repo: repo, Op: events.TaskCreated, Task: task(id)}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := b2.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		link := func(b *tasks.Board, from, to string) error {
			_, err := b.Mutate(ctx, repo, func(cur map[string]events.Task) (events.TaskEvent, error) {
				if err := tasks.CheckDependencies(cur, from, []string{to}); err != nil {
					return events.TaskEvent{}, err
				}
				t := cur[from]
				t.DependsOn = []string{to}
				return events.TaskEvent{Op: events.TaskUpdated, Task: t}, nil
			})
			return err
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = link(b1, "aaaaaa", "bbbbbb") })
		wg.Go(func() { errs[1] = link(b2, "bbbbbb", "aaaaaa") })
		wg.Wait()
		ok, cyc := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, graph.ErrCycle):
				cyc++
			default:
				t.Fatal(err)
			}
		}
		if ok != 1 || cyc != 1 {
			t.Fatalf("iteration %d: %d succeeded, %d cycles: %v", i, ok, cyc, errs)
		}
	}
}

func TestNewID(t *testing.T) {
	at := time.Date(2026, 1, 2, 10, 43, 0, 0, time.UTC)
	id := tasks.NewID(at, "Implement login API", nil)
	if !tasks.ValidID(id) || id != tasks.NewID(at, "Implement login API", nil) {
		t.Fatalf("id %q", id)
	}
	other := tasks.NewID(at, "Implement login API", func(s string) bool { return s == id })
	if other == id || !tasks.ValidID(other) {
		t.Fatalf("taken id not avoided: %q", other)
	}
}

func TestOrdered(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	ctx := ctxT(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	put := func(op events.TaskOp, id string, hour int, title string) {
		t.Helper()
		tk := task(id)
		tk.Created, tk.Title = base.Add(time.Duration(hour)*time.Hour), title
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: op, Task: tk}, nil); err != nil {
			t.Fatal(err)
		}
	}
	order := func() (ids []string) {
		b.Ordered("app", func(tk *events.Task) bool { ids = append(ids, tk.ID+":"+tk.Title); return true })
		return ids
	}
	put(events.TaskCreated, "cccccc", 3, "c")
	put(events.TaskCreated, "dddddd", 4, "d")
	if got := fmt.Sprint(order()); got != "[cccccc:c dddddd:d]" {
		t.Fatal(got)
	}
	put(events.TaskCreated, "aaaaaa", 1, "a")  // out of order
	put(events.TaskUpdated, "dddddd", 4, "d2") // in place
	put(events.TaskCreated, "bbbbbb", 3, "b")  // tie on time, by id
	put(events.TaskUpdated, "cccccc", 0, "c0") // created moved
	put(events.TaskDeleted, "aaaaaa", 1, "")   // gone
	put(events.TaskCreated, "eeeeee", 9, "e")  // append
	if got := fmt.Sprint(order()); got != "[cccccc:c0 bbbbbb:b dddddd:d2 eeeeee:e]" {
		t.Fatal(got)
	}
	put(events.TaskUpdated, "eeeeee", 9, "e2")
	if got := fmt.Sprint(order()); got != "[cccccc:c0 bbbbbb:b dddddd:d2 eeeeee:e2]" {
		t.Fatal(got)
	}
}

func TestReady(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := ctxT(t)
	empty := startBoard(t, conn)
	select {
	case <-empty.Ready():
	case <-ctx.Done():
		t.Fatal("a board on an empty log never became ready")
	}
	for _, id := range []string{"aaaaaa", "bbbbbb", "cccccc"} {
		if _, err := empty.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task(id)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	late := startBoard(t, conn)
	select {
	case <-late.Ready():
	case <-ctx.Done():
		t.Fatal("never ready")
	}
	if n := len(late.Tasks("app")); n != 3 {
		t.Fatalf("ready with %d of 3 tasks", n)
	}
	if applied, end, known := late.Replay(); !known || applied != 3 || end != 3 {
		t.Errorf("Replay() = %d, %d, %t once ready on a log of 3 events; want 3, 3, true", applied, end, known)
	}
	if applied, end, known := tasks.NewBoard(conn.JS, nil).Replay(); known || applied != 0 || end != 0 {
		t.Errorf("Replay() = %d, %d, %t before Run; want 0, 0, false", applied, end, known)
	}
}

// rivalStream is a task log another edge writes to just before each of
// this board's publishes: every attempt expects a sequence that has moved.
type rivalStream struct {
	jetstream.JetStream
	js   *bus.Conn
	wins int
}

func (r *rivalStream) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	r.wins++
	ev := events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: task(fmt.Sprintf("riv%03d", r.wins%1000)), Source: "rival"}
	// Both publishes outlive the write's deadline: one that ran out in the
	// middle of either would fail the board's publish with the deadline
	// instead of the lost race this stream stands for.
	ctx = context.WithoutCancel(ctx)
	if _, err := bus.PublishEvent(ctx, r.js.JS, events.TaskSubject("r"), fmt.Sprintf("rival-%d", r.wins), ev); err != nil {
		return nil, err
	}
	return r.JetStream.PublishMsg(ctx, msg, opts...)
}

// A write that loses every race retries until its deadline, then returns
// ErrConflict (which the edge answers as 1008 Busy), having written
// nothing; the rival's writes all stand.
func TestMutateLosingEveryRaceEndsAtItsDeadline(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	rival := &rivalStream{JetStream: conn.JS, js: conn}
	b := tasks.NewBoard(rival, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-b.Ready()
	wctx, wcancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer wcancel()
	_, err := b.Append(wctx, events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: task("mine01")}, nil)
	if !errors.Is(err, tasks.ErrConflict) {
		t.Fatalf("a write losing every race: %v, want ErrConflict", err)
	}
	if rival.wins < 3 {
		t.Errorf("only %d attempts before the deadline: the write should keep trying", rival.wins)
	}
	if err := b.Sync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Task("r", "mine01"); ok {
		t.Error("the losing write was written")
	}
	if n := len(b.Tasks("r")); n != min(rival.wins, 1000) {
		t.Errorf("%d tasks on the board; the rival wrote %d", n, rival.wins)
	}
}

// Writes queued together are published as one chain, each built on the
// state the ones before it leave. Two boards (two edges) write the same
// repo at once, every write naming its task after how many the repo
// holds: a build that missed an earlier event, its own board's or the
// other's, would reuse a name and overwrite that task. Every write must
// land, once, under a name of its own, and both boards and a replay agree.
func TestConcurrentWritesChainOnEachOther(t *testing.T) {
	conn, _ := bustest.StartDurable(t, bus.Settings{})
	a, b := startBoard(t, conn), startBoard(t, conn)
	ctx := ctxT(t)
	const writers, each = 24, 10
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*each)
	for bi, board := range []*tasks.Board{a, b} {
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					_, err := board.Mutate(ctx, "r", func(cur map[string]events.Task) (events.TaskEvent, error) {
						tk := task(fmt.Sprintf("n%05d", len(cur)))
						if _, taken := cur[tk.ID]; taken {
							return events.TaskEvent{}, fmt.Errorf("%s is taken: the state has a gap", tk.ID)
						}
						tk.Title = fmt.Sprintf("board %d writer %d write %d", bi, w, i)
						return events.TaskEvent{Op: events.TaskCreated, Task: tk, Source: "test"}, nil
					})
					if err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	everyWriteOnce(t, ctx, conn, map[string]*tasks.Board{"a": a, "b": b, "replay": startBoard(t, conn)}, "r", 2*writers*each)
}

// everyWriteOnce checks that each board holds want tasks in repo, each
// with a title of its own (no write lost or overwritten), and that the
// task log holds want events of repo (none written twice); it returns the
// log.
func everyWriteOnce(t *testing.T, ctx context.Context, conn *bus.Conn, boards map[string]*tasks.Board, repo string, want int) (jetstream.Stream, *jetstream.StreamInfo) {
	t.Helper()
	for name, board := range boards {
		if err := board.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		got := board.Tasks(repo)
		titles := map[string]bool{}
		for _, tk := range got {
			titles[tk.Title] = true
		}
		if len(got) != want || len(titles) != want {
			t.Errorf("board %s: %d tasks with %d distinct writes, want %d of each", name, len(got), len(titles), want)
		}
	}
	st, err := conn.JS.Stream(ctx, events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(events.TaskSubject(repo)))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[events.TaskSubject(repo)]; n != uint64(want) {
		t.Errorf("the log holds %d events of %s for %d writes", n, repo, want)
	}
	return st, info
}

// interposingStream writes a rival event, on the same subject, just before
// the second event of the first chain this board publishes: the rival
// takes the task id that event was about to create.
type interposingStream struct {
	jetstream.JetStream
	js    *bus.Conn
	calls int
	took  string
}

func (s *interposingStream) PublishMsgAsync(msg *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	if s.calls++; s.calls == 2 {
		ev, err := events.Decode(msg.Data)
		if err != nil {
			panic(err)
		}
		tk := ev.(events.TaskEvent).Task
		s.took = tk.ID
		tk.Title = "rival"
		rival := events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: tk, Source: "rival"}
		if _, err := bus.PublishEvent(context.Background(), s.js.JS, events.TaskSubject("r"), "rival-"+tk.ID, rival); err != nil {
			panic(err)
		}
	}
	return s.JetStream.PublishMsgAsync(msg, opts...)
}

// An event another writer slips in between two events of a chain stops
// the chain there: the rest is built again on the state that includes it,
// so no write lands on a state it was not built on.
func TestChainBrokenByARivalIsBuiltAgain(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	// A chain, not an atomic batch, however many writes queue together.
	disableAtomic(t, conn)
	stream := &interposingStream{JetStream: conn.JS, js: conn}
	b := tasks.NewBoard(stream, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-b.Ready()
	const writes = 64
	createConcurrently(t, b, writes)
	if stream.took == "" {
		t.Fatal("no write was published in a chain: 64 concurrent writes should have queued together")
	}
	if err := b.Sync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	got := b.Tasks("r")
	if got[stream.took].Title != "rival" {
		t.Errorf("the rival's task %s was overwritten: %+v", stream.took, got[stream.took])
	}
	if len(got) != writes+1 {
		t.Errorf("%d tasks, want %d writes and the rival's", len(got), writes+1)
	}
}

// Retries of one request, queued together, are all answered with the
// event the log holds for it, whether it was written before they came or
// by the first of them.
func TestRetriesOfOneRequestQueuedTogether(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	<-b.Ready()
	ctx := ctxT(t)
	for round, id := range []string{"written-first", "written-by-a-retry"} {
		build := func(cur map[string]events.Task) (events.TaskEvent, error) {
			return events.TaskEvent{Op: events.TaskCreated, Task: task(fmt.Sprintf("q%05d", len(cur))), Source: "test"}, nil
		}
		if round == 0 {
			if _, _, err := b.MutateRequest(ctx, "r", id, build); err != nil {
				t.Fatal(err)
			}
		}
		seqs := make([]uint64, 16)
		var wg sync.WaitGroup
		for i := range seqs {
			wg.Go(func() {
				seq, _, err := b.MutateRequest(ctx, "r", id, build)
				if err != nil {
					t.Error(err)
				}
				seqs[i] = seq
			})
		}
		wg.Wait()
		for _, s := range seqs {
			if s != seqs[0] {
				t.Fatalf("%s: retries answered with sequences %v, want one", id, seqs)
			}
		}
	}
	if n := len(b.Tasks("r")); n != 2 {
		t.Errorf("%d tasks for two requests", n)
	}
}

// createConcurrently has writes goroutines create a task each on b at
// once, every one named after how many tasks the repo holds: a write
// built on a state that misses an event would reuse a name. It returns
// the sequence each write was answered with, by title.
func createConcurrently(t *testing.T, b *tasks.Board, writes int) map[string]uint64 {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := map[string]uint64{}
	for w := range writes {
		wg.Go(func() {
			seq, err := b.Mutate(ctxT(t), "r", func(cur map[string]events.Task) (events.TaskEvent, error) {
				tk := task(fmt.Sprintf("n%05d", len(cur)))
				if _, taken := cur[tk.ID]; taken {
					return events.TaskEvent{}, fmt.Errorf("%s is taken: the state has a gap", tk.ID)
				}
				tk.Title = fmt.Sprintf("write %d", w)
				return events.TaskEvent{Op: events.TaskCreated, Task: tk, Source: "test"}, nil
			})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			answered[fmt.Sprintf("write %d", w)] = seq
			mu.Unlock()
		})
	}
	wg.Wait()
	return answered
}

// answeredWith checks that each write's answer is the sequence of its
// event in the log.
func answeredWith(t *testing.T, conn *bus.Conn, answered map[string]uint64) {
	t.Helper()
	st, err := conn.JS.Stream(ctxT(t), events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	for title, seq := range answered {
		msg, err := st.GetMsg(ctxT(t), seq)
		if err != nil {
			t.Fatalf("%s answered with %d: %v", title, seq, err)
		}
		ev, err := events.Decode(msg.Data)
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.(events.TaskEvent).Task.Title; got != title {
			t.Errorf("%s answered with %d, which holds %s", title, seq, got)
		}
	}
}

// Many writes queued at once on a board no one else writes through go
// to the log as atomic batches (one sync each), and land once each, in
// the order they were built.
func TestManyQueuedWritesGoAsAtomicBatches(t *testing.T) {
	conn, _ := bustest.StartDurable(t, bus.Settings{})
	b := startBoard(t, conn)
	<-b.Ready()
	const writes = 200
	answered := createConcurrently(t, b, writes)
	if tasks.AtomicRounds(b) == 0 {
		t.Error("no round went as an atomic batch: 200 concurrent writes should have queued 16 or more together")
	}
	answeredWith(t, conn, answered)
	everyWriteOnce(t, ctxT(t), conn, map[string]*tasks.Board{"writer": b, "replay": startBoard(t, conn)}, "r", writes)
}

// A rival's event stored between a batch's build and its commit breaks
// the batch's expectation: nothing of the batch is stored, and its writes
// are built again on a state that holds the rival's task.
func TestAtomicBatchBrokenByARivalIsBuiltAgain(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := tasks.NewBoard(conn.JS, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-b.Ready()
	var once sync.Once
	took := ""
	tasks.OnAtomicCommit(b, func(first string) {
		once.Do(func() {
			// The rival creates the task the batch's first write creates.
			tk := task(first)
			tk.Title = "rival"
			rival := events.TaskEvent{Repo: "r", Op: events.TaskCreated, Task: tk, Source: "rival"}
			if _, err := bus.PublishEvent(context.Background(), conn.JS, events.TaskSubject("r"), "rival-"+first, rival); err != nil {
				panic(err)
			}
			took = first
		})
	})
	const writes = 64
	answeredWith(t, conn, createConcurrently(t, b, writes))
	if took == "" {
		t.Fatal("no atomic batch was attempted: 64 concurrent writes should have queued 16 or more together")
	}
	if err := b.Sync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	got := b.Tasks("r")
	if got[took].Title != "rival" {
		t.Errorf("the rival's task %s was overwritten: %+v", took, got[took])
	}
	titles := map[string]bool{}
	for _, tk := range got {
		titles[tk.Title] = true
	}
	if len(got) != writes+1 || len(titles) != writes+1 {
		t.Errorf("%d tasks with %d distinct writes, want %d writes and the rival's", len(got), len(titles), writes)
	}
	st, _ := conn.JS.Stream(ctxT(t), events.TasksStream)
	if info, err := st.Info(ctxT(t)); err != nil || info.State.Msgs != writes+1 {
		t.Errorf("the log holds %v events (%v), want %d", info.State.Msgs, err, writes+1)
	}
}

// On a log that stops taking atomic batches under a running board (its
// config changed since the board read it), the refused batch is chained
// instead, and so is every round after it.
func TestWritesWithoutAtomicBatchesAreChained(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	var logs logtest.Buffer
	b := tasks.NewBoard(conn.JS, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-b.Ready()
	// The board reads the log's config once more after it is ready (its
	// first log check), then only every LogCheck: an event of another
	// repo that it follows in shows that read is done, so the config
	// changed next is one the board can learn only from a refusal.
	ack, err := bus.PublishEvent(ctxT(t), conn.JS, events.TaskSubject("other"), "warm-up",
		events.TaskEvent{Repo: "other", Op: events.TaskCreated, Task: task("zzzzzz"), Source: "rival"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WaitSeq(ctxT(t), ack.Sequence); err != nil {
		t.Fatal(err)
	}
	disableAtomic(t, conn)
	const writes = 192
	answeredWith(t, conn, createConcurrently(t, b, writes))
	if n := tasks.AtomicRounds(b); n != 0 {
		t.Errorf("%d atomic rounds on a log that refuses them", n)
	}
	if n := strings.Count(logs.String(), "does not take atomic batches"); n != 1 {
		t.Errorf("the refusal was met %d times, want once (then batches stop):\n%s", n, logs.String())
	}
	everyWriteOnce(t, ctxT(t), conn, map[string]*tasks.Board{"writer": b}, "r", writes)
}

func disableAtomic(t *testing.T, conn *bus.Conn) {
	t.Helper()
	st, err := conn.JS.Stream(ctxT(t), events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	cfg.AllowAtomicPublish = false
	if _, err := conn.JS.UpdateStream(ctxT(t), cfg); err != nil {
		t.Fatal(err)
	}
}

// A write is answered only once it is durable: when the store cannot be
// synced the caller hears so, and the retry with the same request id
// finds the write made.
func TestWriteAnsweredOnlyOnceDurable(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := tasks.NewBoard(conn.JS, nil)
	var syncs atomic.Int32
	var failing atomic.Bool
	b.SetDurable(func(context.Context) error {
		syncs.Add(1)
		if failing.Load() {
			return errors.New("no space left on device")
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	create := func(current map[string]events.Task) (events.TaskEvent, error) {
		return events.TaskEvent{Op: events.TaskCreated, Task: task("T-1")}, nil
	}
	if _, err := b.Append(ctxT(t), events.TaskEvent{Op: events.TaskCreated, Repo: "r", Task: task("T-0")}, nil); err != nil {
		t.Fatal(err)
	}
	if syncs.Load() != 1 {
		t.Fatalf("%d syncs for one write; want 1 before its answer", syncs.Load())
	}
	failing.Store(true)
	if _, _, err := b.MutateRequest(ctxT(t), "r", "req-1", create); err == nil {
		t.Fatal("a write that could not be made durable answered without error")
	}
	failing.Store(false)
	seq, prior, err := b.MutateRequest(ctxT(t), "r", "req-1", create)
	if err != nil {
		t.Fatal(err)
	}
	if prior == nil || seq == 0 {
		t.Fatalf("the retry wrote again (seq %d, prior %v); want the first write found", seq, prior)
	}
}

// AtPath follows tasks as they are created, moved to another card, given
// a card already taken, and deleted, on the writing board and on one that
// replays the log.
func TestAtPathFollowsCards(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	ctx := ctxT(t)
	ids := func(ts []events.Task) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	write := func(op events.TaskOp, tk events.Task) {
		t.Helper()
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: op, Task: tk, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	a, c := task("aaaaaa"), task("cccccc")
	write(events.TaskCreated, a)
	write(events.TaskCreated, c)
	moved := a
	moved.Path = ".cuedeck/cards/renamed.md"
	write(events.TaskUpdated, moved)
	shared := c
	shared.Path = moved.Path // an edited id: two tasks claim one card
	write(events.TaskUpdated, shared)
	for _, board := range []*tasks.Board{b, startBoard(t, conn)} {
		if err := board.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if got := ids(board.AtPath("app", a.Path)); len(got) != 0 {
			t.Fatalf("the card a left still holds %v", got)
		}
		if got := ids(board.AtPath("app", moved.Path)); !slices.Equal(got, []string{"aaaaaa", "cccccc"}) {
			t.Fatalf("the shared card holds %v, want both", got)
		}
	}
	write(events.TaskDeleted, a)
	if got := ids(b.AtPath("app", moved.Path)); !slices.Equal(got, []string{"cccccc"}) {
		t.Fatalf("after a's deletion the card holds %v", got)
	}
	if got := b.AtPath("other", moved.Path); got != nil {
		t.Fatalf("another repo's card holds %v", got)
	}
}

// A retried request is answered with the event its first call wrote, read
// back from the log: on the board that wrote it, by every one of a burst
// of retries at once (one event written), and on a board that replayed
// the log.
func TestRetriedRequestAnswersTheFirstEvent(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	ctx := ctxT(t)
	creating := func(id string) func(map[string]events.Task) (events.TaskEvent, error) {
		return func(map[string]events.Task) (events.TaskEvent, error) {
			return events.TaskEvent{Op: events.TaskCreated, Task: task(id), Source: "mcp"}, nil
		}
	}
	first, prior, err := b.MutateRequest(ctx, "app", "req-1", creating("T-1"))
	if err != nil || prior != nil {
		t.Fatalf("first call: seq %d, prior %v, err %v; want a write", first, prior, err)
	}
	check := func(b *tasks.Board, what string) {
		t.Helper()
		seq, prior, err := b.MutateRequest(ctx, "app", "req-1", creating("T-2"))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if seq != first || prior == nil || prior.Task.ID != "T-1" || prior.Task.Title != "task T-1" || prior.RequestID != "req-1" || prior.Op != events.TaskCreated {
			t.Fatalf("%s: seq %d, prior %+v; want seq %d and the event that created T-1", what, seq, prior, first)
		}
	}
	check(b, "a retry")

	var wg sync.WaitGroup
	seqs := make([]uint64, 8)
	priors := make([]*events.TaskEvent, 8)
	for i := range seqs {
		wg.Go(func() {
			var err error
			seqs[i], priors[i], err = b.MutateRequest(ctx, "app", "req-2", creating(fmt.Sprintf("U-%d", i)))
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	written := ""
	for _, ev := range bustest.Events(t, conn.JS, events.TasksStream) {
		if te, ok := ev.(events.TaskEvent); ok && te.RequestID == "req-2" {
			if written != "" {
				t.Fatalf("req-2 was written twice: %s and %s", written, te.Task.ID)
			}
			written = te.Task.ID
		}
	}
	for i := range seqs {
		if seqs[i] != seqs[0] {
			t.Fatalf("the calls of one request were answered with sequences %v", seqs)
		}
		if priors[i] != nil && priors[i].Task.ID != written {
			t.Fatalf("a retry was answered with %s; the log holds %s", priors[i].Task.ID, written)
		}
	}

	check(startBoard(t, conn), "a retry on a board that replayed the log")
}

// A board made unready by a suspicion its follower's next look does not
// bear out (a Sync that read its position before a replay began) reads
// the log's end again and is ready once more, rather than wait for an
// end nobody reads while it goes on following the log.
func TestBoardUnreadyOnASuspicionBecomesReadyAgain(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := startBoard(t, conn)
	ctx := ctxT(t)
	if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("T-1"), Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	<-b.Ready()
	tasks.Unready(b)
	if _, _, known := b.Replay(); known {
		t.Fatal("the board knows the log's end right after being made unready")
	}
	b.Recheck()
	select {
	case <-b.Ready():
	case <-ctx.Done():
		applied, end, known := b.Replay()
		t.Fatalf("still unready: applied %d, end %d, end known %v", applied, end, known)
	}
	if got := b.Tasks("app"); len(got) != 1 {
		t.Errorf("%d tasks after becoming ready again; want 1", len(got))
	}
}
