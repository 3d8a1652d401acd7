package cpumeter

import (
	"context"
	"crypto/sha256"
	"sync"
	"syscall"
	"testing"
	"time"
)

// processCPU is the process's user and system time.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// burn does a fixed amount of computation.
func burn(rounds int) [32]byte {
	var sum [32]byte
	for range rounds {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}

func TestMeterCountsTheWorkOfEveryGoroutineItRuns(t *testing.T) {
	if !Supported {
		t.Skip("no per-thread CPU clock on this platform")
	}
	m := new(Meter)
	ctx := With(context.Background(), m)
	before := processCPU(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { From(ctx).Do(func() { burn(300_000) }) })
	}
	wg.Wait()
	spent := processCPU(t) - before
	if !m.Measured() {
		t.Fatal("Measured is false after metered work")
	}
	// The process did little else meanwhile: the metered work is most of
	// its CPU time, and cannot be more than all of it.
	got := m.Total()
	if got < spent*6/10 || got > spent+spent/20 {
		t.Fatalf("metered %v of the process's %v", got, spent)
	}
}

func TestMeterLeavesOutWaiting(t *testing.T) {
	if !Supported {
		t.Skip("no per-thread CPU clock on this platform")
	}
	m := new(Meter)
	m.Do(func() { time.Sleep(100 * time.Millisecond) })
	if got := m.Total(); got > 20*time.Millisecond {
		t.Fatalf("a 100 ms sleep metered as %v of CPU", got)
	}
}

func TestNilMeterRunsTheWork(t *testing.T) {
	ran := false
	From(context.Background()).Do(func() { ran = true })
	if !ran {
		t.Fatal("a nil Meter did not run the work")
	}
	if From(context.Background()).Measured() {
		t.Fatal("a nil Meter says it measured")
	}
}
