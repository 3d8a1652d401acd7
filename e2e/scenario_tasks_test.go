package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestClusterTaskChainsOnReplicatedLog: two task boards, each on its own
// connection as two team edges are, write one repo at once into the
// cluster's three-replica task log, every write naming its task after how
// many the repo holds: a write built on a state that missed an event would
// reuse a name. On the replicated stream the boards write one event at a
// time (chains are for a single-replica log: nats-server checks a chained
// event's Nats-Expected-Last-Msg-Id only as it applies it, and on a
// replicated stream a mismatch there stops the stream on every replica;
// internal/tasks TestConcurrentWritesOnAReplicatedLog), every write lands
// once under a name of its own, and the boards agree.
func TestClusterTaskChainsOnReplicatedLog(t *testing.T) {
	s := StartScenario(t, 4*time.Minute, ClusterOptions{Indexers: 1})
	ctx, c := s.Ctx, s.C
	info, err := mustStream(ctx, t, s.JS, events.TasksStream).Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 {
		t.Fatalf("%s has %d replicas, want 3", events.TasksStream, info.Config.Replicas)
	}
	var boards []*tasks.Board
	for range 2 {
		js, err := jetstream.New(c.Connect(ctx))
		if err != nil {
			t.Fatal(err)
		}
		b := tasks.NewBoard(js, nil)
		bctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- b.Run(bctx) }()
		t.Cleanup(func() { cancel(); <-done })
		boards = append(boards, b)
	}
	for _, b := range boards {
		select {
		case <-b.Ready():
		case <-ctx.Done():
			t.Fatal("a board never replayed the task log")
		}
	}

	const writers, each = 16, 12
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(boards)*writers*each)
	for bi, b := range boards {
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					_, err := b.Mutate(wctx, "alpha", func(cur map[string]events.Task) (events.TaskEvent, error) {
						id := fmt.Sprintf("c%05d", len(cur))
						if _, taken := cur[id]; taken {
							return events.TaskEvent{}, fmt.Errorf("%s is taken: the state has a gap", id)
						}
						at := time.Now().UTC()
						return events.TaskEvent{Op: events.TaskCreated, Source: "e2e", Task: events.Task{
							ID: id, Title: fmt.Sprintf("board %d writer %d write %d", bi, w, i), Status: "todo", Priority: "medium",
							Created: at, Updated: at, Path: ".cuedeck/cards/" + id + ".md"}}, nil
					})
					cancel()
					if err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := len(boards) * writers * each
	for i, b := range boards {
		if err := b.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		got := b.Tasks("alpha")
		titles := map[string]bool{}
		for _, tk := range got {
			titles[tk.Title] = true
		}
		if len(got) != want || len(titles) != want {
			t.Errorf("board %d: %d tasks with %d distinct writes, want %d of each", i+1, len(got), len(titles), want)
		}
	}
	info, err = mustStream(ctx, t, s.JS, events.TasksStream).Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(want) {
		t.Errorf("the replicated log holds %d events for %d writes", info.State.Msgs, want)
	}
	// On a replicated log the boards write one event at a time: no event
	// may carry a chain position in its Nats-Msg-Id.
	st := mustStream(ctx, t, s.JS, events.TasksStream)
	linked := 0
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("task log message %d: %v", seq, err)
		}
		if strings.Contains(m.Header.Get(jetstream.MsgIDHeader), "+") {
			linked++
		}
	}
	if linked > 0 {
		t.Errorf("%d events were written as later links of a chain on the replicated log", linked)
	}
	t.Logf("%d writes by 2 boards × %d writers into the R3 task log in %s (%.0f writes/s); the log holds %d events, %d of them chained",
		want, writers, elapsed.Round(time.Millisecond), float64(want)/elapsed.Seconds(), info.State.Msgs, linked)
	s.Done()
}

func mustStream(ctx context.Context, t *testing.T, js jetstream.JetStream, name string) jetstream.Stream {
	t.Helper()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	return st
}
