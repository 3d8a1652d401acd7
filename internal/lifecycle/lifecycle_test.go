package lifecycle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
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
