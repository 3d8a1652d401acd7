package priority

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestWaitPassesWhenNothingRan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(50 * time.Millisecond)
		start := time.Now()
		if err := g.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Wait took %v with no foreground work ever", d)
		}
	})
}

func TestWaitHoldsBackgroundUntilForegroundIsQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(50 * time.Millisecond)
		end := g.Begin()
		passed := make(chan time.Time, 1)
		go func() {
			if err := g.Wait(context.Background()); err != nil {
				t.Error(err)
			}
			passed <- time.Now()
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-passed:
			t.Fatal("background passed while foreground work ran")
		default:
		}
		// A second piece of work overlapping the first keeps it held.
		end2 := g.Begin()
		end()
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		select {
		case <-passed:
			t.Fatal("background passed while the second piece of work ran")
		default:
		}
		end2()
		ended := time.Now()
		at := <-passed
		if got := at.Sub(ended); got != 50*time.Millisecond {
			t.Errorf("background resumed %v after the foreground ended, want the quiet period 50ms", got)
		}
		if w := g.Waited(); w != at.Sub(ended)+1200*time.Millisecond {
			t.Errorf("Waited = %v", w)
		}
	})
}

func TestForegroundDuringQuietPeriodRestartsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(100 * time.Millisecond)
		g.Begin()()
		passed := make(chan time.Time, 1)
		go func() {
			g.Wait(context.Background())
			passed <- time.Now()
		}()
		time.Sleep(60 * time.Millisecond)
		end := g.Begin()
		time.Sleep(30 * time.Millisecond)
		end()
		last := time.Now()
		if got := (<-passed).Sub(last); got != 100*time.Millisecond {
			t.Errorf("background resumed %v after the last foreground work, want 100ms", got)
		}
	})
}

func TestWaitEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(0)
		g.Begin()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := g.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v, want the context's deadline", err)
		}
	})
}

func TestEndTwiceCountsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(10 * time.Millisecond)
		end := g.Begin()
		hold := g.Begin()
		end()
		end()
		passed := make(chan struct{})
		go func() { g.Wait(context.Background()); close(passed) }()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-passed:
			t.Fatal("a repeated end released work another caller still holds")
		default:
		}
		hold()
		<-passed
	})
}

func TestNilGate(t *testing.T) {
	var g *Gate
	g.Begin()()
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("nil Gate Wait on a cancelled context = %v", err)
	}
	if g.Waited() != 0 {
		t.Fatal("nil Gate waited")
	}
}
