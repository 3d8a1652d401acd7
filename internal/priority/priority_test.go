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

func TestQuietCountsWorkAndWaitsForItsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(0)
		if n, quiet := g.Quiet(time.Second); n != 0 || !quiet {
			t.Fatalf("fresh gate: %d begun, quiet %v", n, quiet)
		}
		end := g.Begin()
		if _, quiet := g.Quiet(0); quiet {
			t.Fatal("quiet while work runs")
		}
		end()
		if _, quiet := g.Quiet(time.Second); quiet {
			t.Fatal("quiet for a second right after work ended")
		}
		time.Sleep(time.Second)
		if n, quiet := g.Quiet(time.Second); n != 1 || !quiet {
			t.Fatalf("a second after: %d begun, quiet %v", n, quiet)
		}
	})
}

func TestAfterBurstsCallsOnceEachQuietAfterEnoughWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(0)
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		done := make(chan struct{})
		go func() {
			g.AfterBursts(ctx, time.Second, 3, func() { calls++ })
			close(done)
		}()
		for range 2 {
			g.Begin()()
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if calls != 0 {
			t.Fatalf("called after 2 pieces of work, burst 3")
		}
		end := g.Begin() // the third, long
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if calls != 0 {
			t.Fatal("called while work ran")
		}
		end()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if calls != 1 {
			t.Fatalf("%d calls once quiet after a burst, want 1", calls)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if calls != 1 {
			t.Fatalf("%d calls with no new burst, want 1", calls)
		}
		cancel()
		<-done
	})
}

func TestAcquireKeepsBackgroundToItsCores(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(10 * time.Millisecond)
		g.SetBackgroundCores(2)
		var held []func()
		got := make(chan func(), 5)
		for range 5 {
			go func() {
				release, err := g.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				got <- release
			}()
		}
		synctest.Wait()
		for len(got) > 0 {
			held = append(held, <-got)
		}
		if len(held) != 2 {
			t.Fatalf("%d steps computing at once with 2 background cores", len(held))
		}
		// Foreground work begins: a place given back goes to no one until
		// it has been quiet.
		end := g.Begin()
		held[0]()
		held[0]() // releasing twice gives back one place
		time.Sleep(time.Second)
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("a background step started while foreground work ran")
		}
		end()
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		if len(got) != 1 {
			t.Fatalf("%d steps started once the foreground was quiet, want the one place free", len(got))
		}
		// The rest get their turns as places are given back.
		held = append(held[1:], <-got)
		for range 2 {
			held[0]()
			held = append(held[1:], <-got)
		}
		for _, release := range held {
			release()
		}
	})
}

func TestBackgroundCoresDefaultLeavesOneForQueries(t *testing.T) {
	for procs, want := range map[int]int{1: 1, 2: 1, 4: 3, 16: 15} {
		if got := DefaultBackgroundCores(procs); got != want {
			t.Errorf("DefaultBackgroundCores(%d) = %d, want %d", procs, got, want)
		}
	}
	var g *Gate
	if release, err := g.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
}
