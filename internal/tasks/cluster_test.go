package tasks_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Two boards, on two nodes of a three-node cluster, write one repo of a
// replicated task log at once, every write naming its task after how many
// the repo holds, half of them under a client's request id: every write
// lands once under a name of its own, and the boards agree. The writes
// are made one at a time, never chained: with chains the boards broke
// each other's, and nats-server stopped the stream on every replica on
// the first Nats-Expected-Last-Msg-Id that failed ("critical write
// error"), leaving the log without a leader.
func TestConcurrentWritesOnAReplicatedLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	conn, servers := bustest.StartCluster(t, 3, bus.Settings{Replicas: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var boards []*tasks.Board
	for i := range 2 {
		c, err := bus.Connect(ctx, servers[i].ClientURL(), bus.ConnectOptions{Name: fmt.Sprintf("board-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		boards = append(boards, startBoard(t, c))
	}
	const writers, each = 16, 12
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*each)
	for bi, b := range boards {
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					build := func(cur map[string]events.Task) (events.TaskEvent, error) {
						tk := task(fmt.Sprintf("n%05d", len(cur)))
						if _, taken := cur[tk.ID]; taken {
							return events.TaskEvent{}, fmt.Errorf("%s is taken: the state has a gap", tk.ID)
						}
						tk.Title = fmt.Sprintf("board %d writer %d write %d", bi, w, i)
						return events.TaskEvent{Op: events.TaskCreated, Task: tk, Source: "test"}, nil
					}
					var err error
					if i%2 == 0 {
						_, err = b.Mutate(wctx, "r", build)
					} else {
						_, _, err = b.MutateRequest(wctx, "r", fmt.Sprintf("req-%d-%d-%d", bi, w, i), build)
					}
					cancel()
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
	st, info := everyWriteOnce(t, ctx, conn, map[string]*tasks.Board{"on n1": boards[0], "on n2": boards[1]}, "r", 2*writers*each)
	linked := 0
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Nats-Expected-Last-Msg-Id") != "" || strings.Contains(m.Header.Get(jetstream.MsgIDHeader), "+") {
			linked++
		}
	}
	if linked > 0 {
		t.Errorf("%d events were written as later links of a chain on the replicated log", linked)
	}
}
