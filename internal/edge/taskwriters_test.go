package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// routedEdge is an edge with its own board and task-writer routing on a
// shared bus, as each of a team's edges runs.
type routedEdge struct {
	e     *Edge
	board *tasks.Board
	tw    *TaskWriters
	stop  func()
}

func startRoutedEdge(t *testing.T, conn *bus.Conn, actor, defaultRepo string) *routedEdge {
	t.Helper()
	board := startBoard(t, conn)
	tw := NewTaskWriters(conn.NC, conn.JS, testLogger(t))
	e := New(nil, testLogger(t), WithBoard(board), WithTaskWriters(tw), WithActor(actor), WithDefaultRepo(defaultRepo))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tw.Run(ctx, e.Forwarded) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-tw.Ready():
	case err := <-done:
		t.Fatalf("task writers ended before routing: %v", err)
	}
	return &routedEdge{e: e, board: board, tw: tw, stop: stop}
}

func (r *routedEdge) call(t *testing.T, ctx context.Context, tool string, args any) (json.RawMessage, error) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return r.e.Call(ctx, tool, b)
}

func createdID(t *testing.T, out json.RawMessage) string {
	t.Helper()
	var res struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.ID == "" {
		t.Fatalf("create_task answered %s (%v)", out, err)
	}
	return res.ID
}

// taskEvents reads every event of the task log.
func taskEvents(t *testing.T, js jetstream.JetStream) []events.TaskEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.TaskEvent
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.Decode(m.Data)
		te, ok := ev.(events.TaskEvent)
		if err != nil || !ok {
			t.Fatalf("task log message %d: %v (%T)", seq, err, ev)
		}
		te.Repo = strings.TrimPrefix(m.Subject, events.SubjectTaskPrefix)
		out = append(out, te)
	}
	return out
}

// Two edges write one repo's tasks: the second edge's writes are made by
// the first, the lease holder, and each is recorded once with the actor
// and token of the edge and client that made the call.
func TestTaskWritesOfTwoEdgesAreMadeByTheRepoWriter(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	a := startRoutedEdge(t, conn, "edge-a", "other")
	b := startRoutedEdge(t, conn, "edge-b", "app")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first := createdID(t, must(a.call(t, ctx, tools.CreateTask, map[string]any{"repo": "app", "title": "Claim the lease"})))
	// b's clients name no repo: the repo is b's default, not a's.
	const writes = 40
	var wg sync.WaitGroup
	errs := make(chan error, writes)
	for i := range writes {
		wg.Go(func() {
			args := map[string]any{"title": fmt.Sprintf("From edge b %d", i), "depends_on": []string{first}}
			bctx := access.WithIdentity(ctx, access.Identity{Client: "agent", Token: "agent-token"})
			out, err := b.call(t, bctx, tools.CreateTask, args)
			if err != nil {
				errs <- err
				return
			}
			id := createdID(t, out)
			// Its client reads its write on b at once, as when b wrote.
			if _, ok := b.board.Task("app", id); !ok {
				errs <- fmt.Errorf("task %s created through edge b is not on b's board when the call returns", id)
				return
			}
			_, err = b.call(t, bctx, tools.UpdateTask, map[string]any{"id": id, "updates": map[string]any{"status": "active", "comment": "started"}})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	sent, _ := b.tw.Counts()
	_, answered := a.tw.Counts()
	if sent != 2*writes || answered != 2*writes {
		t.Fatalf("edge b forwarded %d writes and edge a made %d forwarded writes; want %d each", sent, answered, 2*writes)
	}
	created, updated := 0, 0
	for _, te := range taskEvents(t, conn.JS) {
		if te.Task.Title == "Claim the lease" {
			continue
		}
		if te.Actor != "edge-b" || te.Repo != "app" {
			t.Errorf("event %s of %q: actor %q repo %q; want edge b's actor and default repo", te.Op, te.Task.Title, te.Actor, te.Repo)
		}
		switch te.Op {
		case events.TaskCreated:
			created++
		case events.TaskUpdated:
			updated++
			if n := len(te.Task.Comments); n != 1 || te.Task.Comments[0].By != "agent-token" {
				t.Errorf("update of %s: comments %+v; want one by the client's token", te.Task.ID, te.Task.Comments)
			}
		}
	}
	if created != writes || updated != writes {
		t.Errorf("the log holds %d creates and %d updates from edge b; want %d of each", created, updated, writes)
	}

	// A tool error made by the writer reaches b's client as it is.
	_, err := b.call(t, ctx, tools.UpdateTask, map[string]any{"id": "nosuch", "updates": map[string]any{"status": "done"}})
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Fatalf("forwarded update of a missing task: %v; want TaskNotFound", err)
	}
}

// A writer that stops gives its leases up and the next write is made by
// another edge; a lease left by an edge that died without giving it up
// (it answers no one) is taken over by the first edge to write.
func TestTaskWriterGoneIsReplaced(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	a := startRoutedEdge(t, conn, "edge-a", "app")
	b := startRoutedEdge(t, conn, "edge-b", "app")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createdID(t, must(a.call(t, ctx, tools.CreateTask, map[string]any{"title": "a holds the lease"})))
	createdID(t, must(b.call(t, ctx, tools.CreateTask, map[string]any{"title": "made by a"})))
	if sent, _ := b.tw.Counts(); sent != 1 {
		t.Fatalf("edge b forwarded %d writes while a held the lease; want 1", sent)
	}

	a.stop()
	kv := must(conn.JS.KeyValue(ctx, events.TaskWritersBucket))
	if _, err := kv.Get(ctx, events.TaskWriterKey("app")); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("after edge a stopped its lease reads %v; want it given up", err)
	}
	// b trusts what it read for up to a second: it finds a gone when
	// it forwards, and writes itself.
	createdID(t, must(b.call(t, ctx, tools.CreateTask, map[string]any{"title": "made by b"})))
	if sent, _ := b.tw.Counts(); sent != 1 {
		t.Fatalf("edge b forwarded %d writes; want the one made while a held the lease", sent)
	}
	lease := must(kv.Get(ctx, events.TaskWriterKey("app")))
	if string(lease.Value()) != b.tw.subject {
		t.Fatalf("lease of app names %q; want edge b's %q", lease.Value(), b.tw.subject)
	}

	// An edge that died holding the lease of another repo.
	must(kv.Create(ctx, events.TaskWriterKey("lib"), []byte("cue.taskwriter.died")))
	createdID(t, must(b.call(t, ctx, tools.CreateTask, map[string]any{"repo": "lib", "title": "after a writer died"})))
	lease = must(kv.Get(ctx, events.TaskWriterKey("lib")))
	if string(lease.Value()) != b.tw.subject {
		t.Fatalf("lease of lib names %q; want edge b's %q after the dead writer's", lease.Value(), b.tw.subject)
	}
	if n := len(b.board.Tasks("lib")); n != 1 {
		t.Fatalf("lib has %d tasks; want the one write", n)
	}
}

// A lease is renewed while its edge runs, past the bucket's TTL.
func TestTaskWriterLeaseOutlivesItsTTLWhileRenewed(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a lease's TTL")
	}
	conn, _ := bustest.Start(t, bus.Settings{})
	a := startRoutedEdge(t, conn, "edge-a", "app")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createdID(t, must(a.call(t, ctx, tools.CreateTask, map[string]any{"title": "claim"})))
	kv := must(conn.JS.KeyValue(ctx, events.TaskWritersBucket))
	w := must(kv.Watch(ctx, events.TaskWriterKey("app"), jetstream.IgnoreDeletes()))
	defer w.Stop()
	// Each renewal is a new revision; two of them span more than the
	// TTL from the claim.
	var revs []uint64
	for len(revs) < 5 {
		select {
		case e := <-w.Updates():
			if e == nil {
				continue
			}
			if string(e.Value()) != a.tw.subject {
				t.Fatalf("lease names %q; want edge a", e.Value())
			}
			revs = append(revs, e.Revision())
		case <-ctx.Done():
			t.Fatalf("lease renewed %d times before the deadline", len(revs))
		}
	}
	if _, err := kv.Get(ctx, events.TaskWriterKey("app")); err != nil {
		t.Fatalf("lease after %d renewals: %v", len(revs)-1, err)
	}
}

// The forwarding subject takes the task writes only: a read through it
// would skip the token that limits a client to its repos.
func TestForwardedCallsAreTaskWritesOnly(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	a := startRoutedEdge(t, conn, "edge-a", "app")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := must(json.Marshal(ForwardedWrite{Tool: tools.ListTasks, Args: json.RawMessage(`{"repo":"app"}`)}))
	reply := must(conn.NC.RequestWithContext(ctx, a.tw.subject, body))
	var ans forwardedAnswer
	if err := json.Unmarshal(reply.Data, &ans); err != nil {
		t.Fatal(err)
	}
	if ans.Error == nil || ans.Error.Code != tools.CodeInvalidParams || ans.Result != nil {
		t.Fatalf("list_tasks through the forwarding subject answered %s; want -32602", reply.Data)
	}
}
