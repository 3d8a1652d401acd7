package lifecycle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStopsInReverseOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := New(ctx, nil)
	var mu sync.Mutex
	var order []string
	started := make(chan struct{}, 3)
	for _, name := range []string{"store", "query", "http"} {
		g.Start(name, func(ctx context.Context) error {
			started <- struct{}{}
			<-ctx.Done()
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return nil
		})
	}
	for range 3 {
		<-started
	}
	cancel()
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ","); got != "http,query,store" {
		t.Fatalf("stop order %s, want http,query,store", got)
	}
}

func TestFailureStopsTheRest(t *testing.T) {
	g := New(context.Background(), nil)
	stopped := make(chan struct{})
	g.Start("long", func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return nil
	})
	g.Start("broken", func(ctx context.Context) error { return errors.New("disk full") })
	err := g.Wait()
	if err == nil || !strings.Contains(err.Error(), "broken: disk full") {
		t.Fatalf("Wait = %v", err)
	}
	<-stopped
}

// Once BoundStop is set, a component that never stops is left behind and
// the ones started before it are still stopped.
func TestBoundStopLeavesAStuckComponentBehind(t *testing.T) {
	g := New(context.Background(), nil)
	stopped := make(chan struct{})
	g.Start("store", func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return nil
	})
	stuck := make(chan struct{})
	defer close(stuck)
	g.Start("stuck", func(ctx context.Context) error {
		<-stuck // ignores its context, as a close retrying forever does
		return nil
	})
	g.BoundStop(time.Millisecond)
	done := make(chan struct{})
	go func() { g.StopAll(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("StopAll waited on the stuck component")
	}
	select {
	case <-stopped:
	default:
		t.Error("the component started before the stuck one was not stopped")
	}
}
