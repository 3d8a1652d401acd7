package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// The task log is created again under a running board (a team's cluster
// stream deleted and restored, or recreated): the board drops what it
// held and follows the new log from its start, rather than waiting for
// the new log to pass the old one's sequence.
func TestBoardFollowsARecreatedLog(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	var logs logtest.Buffer
	b := tasks.NewBoard(conn.JS, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	b.LogCheck = 20 * time.Millisecond
	bustest.Run(t, "board", b.Run)
	ctx := ctxT(t)
	for _, tk := range []events.Task{task("aaaaaa"), task("bbbbbb"), task("cccccc")} {
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: tk, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	recreateLogWithOneTask(t, conn)
	var held []string
	defer func() {
		if t.Failed() {
			t.Logf("the board held %v, applied %d; it logged:\n%s", held, b.Applied(), logs.String())
		}
	}()
	bustest.Eventually(t, 20*time.Second, "the board holding the new log's one task", func() bool {
		got := b.Tasks("app")
		held = slices.Sorted(maps.Keys(got))
		_, ok := got["dddddd"]
		return ok && len(got) == 1
	})
}

// Writes asked of a board before Run has looked at the log wait for that
// look. Applied at once, they had no log incarnation to belong to: with
// the log created again before Run's first look (CI met it under load),
// the board took the new log for the one its writes went to and passed
// over the new log's events up to the sequence they had reached.
func TestWritesWaitForTheBoardToKnowItsLog(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := tasks.NewBoard(conn.JS, nil)
	b.LogCheck = time.Hour // only Run's first look can tell the logs apart
	early, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	for _, id := range []string{"aaaaaa", "bbbbbb", "cccccc"} {
		_, err := b.Append(early, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task(id), Source: "mcp"}, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a write before Run looked at the log: %v; want it held until then", err)
		}
	}
	recreateLogWithOneTask(t, conn)

	// A write asked now is made once Run has looked.
	written := make(chan error, 1)
	go func() {
		_, err := b.Append(ctxT(t), events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("eeeeee"), Source: "mcp"}, nil)
		written <- err
	}()
	bustest.Run(t, "board", b.Run)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(b.Tasks("app"))); !slices.Equal(got, []string{"dddddd", "eeeeee"}) {
		t.Fatalf("the board holds %v; the log holds dddddd and eeeeee", got)
	}
}

// The log's block was cut short on disk: the server keeps the stream's
// last sequence but holds fewer messages. The board is ready once it has
// what the log holds, rather than waiting forever for the lost tail.
func TestBoardIsReadyOnALogThatLostItsTail(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t)
	conn, srv := bustest.StartIn(t, dir, bus.Settings{})
	for i := range 20 {
		id := fmt.Sprintf("task%02d", i)
		ev := events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task(id), Source: "mcp"}
		if _, err := bus.PublishEvent(ctx, conn.JS, events.TaskSubject("app"), id, ev); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	srv.Shutdown()
	blk := filepath.Join(dir, "jetstream", "$G", "streams", events.TasksStream, "msgs", "1.blk")
	fi, err := os.Stat(blk)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(blk, fi.Size()/2); err != nil {
		t.Fatal(err)
	}

	conn, _ = bustest.StartIn(t, dir, bus.Settings{})
	b := tasks.NewBoard(conn.JS, nil)
	bustest.Run(t, "board", b.Run)
	select {
	case <-b.Ready():
	case <-ctx.Done():
		t.Fatalf("the board never became ready (applied %d)", b.Applied())
	}
	if n := len(b.Tasks("app")); n == 0 || n >= 20 {
		t.Fatalf("the board holds %d tasks; want those the cut log still holds", n)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatalf("sync on a log that lost its tail: %v", err)
	}
	ev := events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("after1"), Source: "mcp"}
	if _, err := b.Append(ctx, ev, nil); err != nil {
		t.Fatalf("a write after the loss: %v", err)
	}
}

// staleInfoStream answers the task log's state from a lagging replica for
// a few reads: it reports the log ending at its first message.
type staleInfoStream struct {
	jetstream.JetStream
	stale atomic.Int32
}

type staleStream struct{ jetstream.Stream }

func (s staleStream) CachedInfo() *jetstream.StreamInfo {
	info := *s.Stream.CachedInfo()
	info.State.LastSeq = 1
	return &info
}

func (s *staleInfoStream) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	st, err := s.JetStream.Stream(ctx, name)
	if err == nil && name == events.TasksStream && s.stale.Add(-1) >= 0 {
		return staleStream{st}, nil
	}
	return st, err
}

// One stale answer about the log (in a cluster, a replica that stepped
// down) does not make the board drop its tasks and replay: only a
// divergence every confirming read finds does.
func TestBoardKeepsItsTasksOnAStaleAnswer(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	js := &staleInfoStream{JetStream: conn.JS}
	var logs logtest.Buffer
	b := tasks.NewBoard(js, slog.New(slog.NewTextHandler(&logs, nil)))
	b.LogCheck = 20 * time.Millisecond
	bustest.Run(t, "board", b.Run)
	ctx := ctxT(t)
	for _, tk := range []events.Task{task("aaaaaa"), task("bbbbbb"), task("cccccc")} {
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: tk, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	js.stale.Store(2) // the follower's check and the first confirming read
	bustest.Eventually(t, 10*time.Second, "the stale answers read", func() bool { return js.stale.Load() < 0 })
	// A write the follower must deliver: Sync returns once the board
	// follows the log again, after its check.
	if _, err := bus.PublishEvent(ctx, conn.JS, events.TaskSubject("app"), "dddddd", events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("dddddd"), Source: "mcp"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "dropping the board's tasks") {
		t.Fatalf("the board dropped its tasks on a stale answer:\n%s", logs.String())
	}
	if n := len(b.Tasks("app")); n != 4 {
		t.Errorf("%d tasks on the board, want 4", n)
	}
}

// The log is restored from a backup that ends before where the board had
// come, and a write arrives before the board has looked at the log again:
// it is built on the restored log's state and lands in it.
func TestWriteJustAfterTheLogWasRestored(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := tasks.NewBoard(conn.JS, nil)
	b.LogCheck = time.Hour
	bustest.Run(t, "board", b.Run)
	ctx := ctxT(t)
	ids := []string{"aaaaaa", "bbbbbb", "cccccc"}
	for _, id := range ids {
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task(id), Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	backup := bustest.Backup(t, conn.JS, events.TasksStream)
	for range 3 {
		for _, id := range ids {
			tk, _ := b.Task("app", id)
			tk.Notes += "later "
			if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskUpdated, Task: tk, Source: "mcp"}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	bustest.Restore(t, conn, events.TasksStream, backup)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := b.Mutate(wctx, "app", func(current map[string]events.Task) (events.TaskEvent, error) {
		tk, ok := current["bbbbbb"]
		if !ok {
			return events.TaskEvent{}, fmt.Errorf("no task bbbbbb")
		}
		tk.Status = "done"
		return events.TaskEvent{Op: events.TaskUpdated, Task: tk, Source: "mcp"}, nil
	})
	if err != nil {
		t.Fatalf("a write just after the restore: %v", err)
	}
	got := b.Tasks("app")
	if tk := got["bbbbbb"]; tk.Status != "done" || tk.Notes != "" {
		t.Fatalf("after the write the board holds %+v; want the restored task, done", tk)
	}
	if len(got) != 3 {
		t.Fatalf("the board holds %d tasks, the restored log 3", len(got))
	}
}

// unansweredInfoStream leaves requests for the task log's state
// unanswered, as a cluster does while the stream has no leader, for as
// many requests as hang says.
type unansweredInfoStream struct {
	jetstream.JetStream
	hang atomic.Int32
}

func (s *unansweredInfoStream) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	if name == events.TasksStream && s.hang.Add(-1) >= 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.JetStream.Stream(ctx, name)
}

// A request about the log that goes unanswered is asked again, rather
// than holding a write, and every write queued behind it, until the
// caller's deadline.
func TestWriteOutlivesAnUnansweredLogRequest(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	js := &unansweredInfoStream{JetStream: conn.JS}
	b := tasks.NewBoard(js, nil)
	b.LogCheck = time.Hour
	bustest.Run(t, "board", b.Run)
	ctx := ctxT(t)
	if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("aaaaaa"), Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	js.hang.Store(1)
	// A build that fails on the board's state catches up with the log
	// (Sync, which reads its state) before it refuses.
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := b.Mutate(wctx, "app", func(current map[string]events.Task) (events.TaskEvent, error) {
		if _, ok := current["bbbbbb"]; !ok {
			return events.TaskEvent{}, fmt.Errorf("no task bbbbbb")
		}
		return events.TaskEvent{}, nil
	})
	if err == nil || err.Error() != "no task bbbbbb" {
		t.Fatalf("a write whose catching up met an unanswered request: %v; want the build's own refusal", err)
	}
	if n := js.hang.Load(); n >= 0 {
		t.Fatalf("the log's state was never asked for (%d hangs left)", n+1)
	}
}

// unansweredPublishStream stores the first task event published after
// drop is set but gives no answer, as a cluster's stream electing a leader
// may: the publisher waits until its deadline.
type unansweredPublishStream struct {
	jetstream.JetStream
	drop atomic.Bool
}

func (s *unansweredPublishStream) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := s.JetStream.PublishMsg(ctx, msg, opts...)
	if err == nil && s.drop.CompareAndSwap(true, false) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return ack, err
}

// A write whose event was stored but whose answer was lost is published
// again under the same message id, and answers with the stored event:
// written once, within the caller's deadline.
func TestWriteWhoseAnswerWasLost(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	js := &unansweredPublishStream{JetStream: conn.JS}
	b := tasks.NewBoard(js, nil)
	bustest.Run(t, "board", b.Run)
	ctx := ctxT(t)
	if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("aaaaaa"), Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	js.drop.Store(true)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	seq, err := b.Mutate(wctx, "app", func(current map[string]events.Task) (events.TaskEvent, error) {
		tk := current["aaaaaa"]
		tk.Status = "done"
		return events.TaskEvent{Op: events.TaskUpdated, Task: tk, Source: "mcp"}, nil
	})
	if err != nil {
		t.Fatalf("a write whose answer was lost: %v", err)
	}
	if js.drop.Load() {
		t.Fatal("no publish lost its answer")
	}
	if n := len(bustest.Backup(t, conn.JS, events.TasksStream)); n != 2 || seq != 2 {
		t.Fatalf("the log holds %d events and the write answered sequence %d; want the update stored once, at 2", n, seq)
	}
	if got, _ := b.Task("app", "aaaaaa"); got.Status != "done" {
		t.Fatalf("the board holds %+v after the write", got)
	}
}

// lateLogStream answers "stream not found" for the task log's state, as
// many times as notYet says: a server that announced the log created
// answers for it only a moment later.
type lateLogStream struct {
	jetstream.JetStream
	notYet atomic.Int32
}

func (s *lateLogStream) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	if name == events.TasksStream && s.notYet.Add(-1) >= 0 {
		return nil, jetstream.ErrStreamNotFound
	}
	return s.JetStream.Stream(ctx, name)
}

// An announced check that could not read the log yet is made again
// shortly, rather than leave the board on the old log's tasks until its
// next periodic check.
func TestAnnouncedCheckLooksAgainForALogNotThereYet(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	js := &lateLogStream{JetStream: conn.JS}
	b := tasks.NewBoard(js, nil)
	b.LogCheck = time.Hour // only the announcement can bring the check on
	bustest.Run(t, "board", b.Run)
	ctx := ctxT(t)
	if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("aaaaaa"), Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	recreateLogWithOneTask(t, conn)
	js.notYet.Store(3)
	b.Recheck()
	bustest.Eventually(t, 20*time.Second, "the board holding the new log's one task", func() bool {
		got := b.Tasks("app")
		_, ok := got["dddddd"]
		return ok && len(got) == 1
	})
}

// The server announces the log deleted and created again: a board told so
// (bus.OnStreamReplaced) finds it at once, not at its next periodic check,
// and between the two logs it is unready rather than ready with neither
// log's tasks.
func TestBoardFindsALogReplacedWhenTheServerSaysSo(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	b := tasks.NewBoard(conn.JS, nil)
	b.LogCheck = time.Hour // only the advisory can bring the check on
	stop, err := bus.OnStreamReplaced(conn.NC, func(string) { b.Recheck() }, events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	bustest.Run(t, "board", b.Run)
	ctx := ctxT(t)
	old := []string{"aaaaaa", "bbbbbb", "cccccc"}
	for _, id := range old {
		if _, err := b.Append(ctx, events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task(id), Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The board follows the log: its consumer, which a stream deleted and
	// created again would carry on at the old sequence, is running.
	bustest.Eventually(t, 20*time.Second, "the board following the log", func() bool { return b.Applied() == uint64(len(old)) })
	// What a reader sees whenever the board says it is ready: the old
	// log's tasks, or the new one's.
	var wrong atomic.Value
	watching, endWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watching.Err() == nil {
			select {
			case <-b.Ready():
			default:
				continue
			}
			got := b.Tasks("app")
			_, isNew := got["dddddd"]
			if !(len(got) == len(old) && !isNew) && !(len(got) == 1 && isNew) {
				wrong.Store(fmt.Sprint(len(got), " tasks"))
			}
		}
	}()
	recreateLogWithOneTask(t, conn)
	bustest.Eventually(t, 20*time.Second, "the board holding the new log's one task", func() bool {
		got := b.Tasks("app")
		_, ok := got["dddddd"]
		return ok && len(got) == 1
	})
	select {
	case <-b.Ready():
	case <-time.After(20 * time.Second):
		t.Fatal("the board holds the new log but is not ready")
	}
	endWatch()
	<-watched
	if w := wrong.Load(); w != nil {
		t.Errorf("the board was ready holding %v: neither the old log's tasks nor the new one's", w)
	}
}

// recreateLogWithOneTask deletes the task log, provisions it again, empty,
// and writes into it one task of repo app, dddddd.
func recreateLogWithOneTask(t *testing.T, conn *bus.Conn) {
	t.Helper()
	ctx := ctxT(t)
	if err := conn.JS.DeleteStream(ctx, events.TasksStream); err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
	ev := events.TaskEvent{Repo: "app", Op: events.TaskCreated, Task: task("dddddd"), Source: "mcp"}
	if _, err := bus.PublishEvent(ctx, conn.JS, events.TaskSubject("app"), "dddddd", ev); err != nil {
		t.Fatal(err)
	}
}
