package tasks_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
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
