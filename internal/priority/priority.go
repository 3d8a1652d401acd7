// Package priority lets the roles sharing one laptop process divide its
// cores: foreground work (indexing files, materialising the index,
// answering agents) runs at once, and background work (embedding) runs
// only while no foreground work does. Embedding a repository takes far
// longer than indexing it, and without this it took most of the cores the
// keyword index was waiting for. The daemon makes one Gate and hands it to
// the roles; separate processes on a cluster need none (a nil *Gate is
// valid and never waits).
package priority

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// DefaultQuiet is how long foreground work must have stopped before
// background work resumes: long enough to span the gap between one batch
// of files and the next, short enough that embedding starts as soon as
// indexing is done.
const DefaultQuiet = 100 * time.Millisecond

// Gate admits background work while no foreground work runs. Its methods
// are safe for concurrent use, and on a nil *Gate they do nothing.
type Gate struct {
	quiet time.Duration

	mu      sync.Mutex
	active  int
	lastEnd time.Time
	// idle is closed when active falls to zero, and replaced when it
	// rises again.
	idle chan struct{}

	waited time.Duration // total time Wait callers spent held back
	begun  uint64        // pieces of foreground work begun
	cores  int           // SetBackgroundCores; 0: the default
	// slots holds a token per background step computing now: at most
	// BackgroundCores, made at the first Acquire.
	slots     chan struct{}
	slotsOnce sync.Once
}

// New returns a Gate whose background work waits until foreground work has
// been idle for quiet (DefaultQuiet when zero or less).
func New(quiet time.Duration) *Gate {
	if quiet <= 0 {
		quiet = DefaultQuiet
	}
	idle := make(chan struct{})
	close(idle)
	return &Gate{quiet: quiet, idle: idle}
}

// Begin marks the start of a piece of foreground work; the caller must
// call the returned end exactly once when the work is done.
func (g *Gate) Begin() (end func()) {
	if g == nil {
		return func() {}
	}
	g.mu.Lock()
	if g.active == 0 {
		g.idle = make(chan struct{})
	}
	g.active++
	g.begun++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			if g.active--; g.active == 0 {
				g.lastEnd = time.Now()
				close(g.idle)
			}
			g.mu.Unlock()
		})
	}
}

// Wait returns once no foreground work has run for the quiet period, or
// with ctx's error when ctx ends first. Background work calls it between
// steps short enough (a few milliseconds) that foreground work arriving
// meanwhile waits at most one step.
func (g *Gate) Wait(ctx context.Context) error {
	if g == nil {
		return ctx.Err()
	}
	start := time.Now()
	held := false
	defer func() {
		if held {
			g.mu.Lock()
			g.waited += time.Since(start)
			g.mu.Unlock()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.mu.Lock()
		active, idle, lastEnd := g.active, g.idle, g.lastEnd
		g.mu.Unlock()
		if active > 0 {
			held = true
			select {
			case <-idle:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		rest := g.quiet - time.Since(lastEnd)
		if rest <= 0 {
			return nil
		}
		held = true
		t := time.NewTimer(rest)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// Quiet reports how many pieces of foreground work have begun so far, and
// whether none has run for at least d.
func (g *Gate) Quiet(d time.Duration) (begun uint64, quiet bool) {
	if g == nil {
		return 0, true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.begun, g.active == 0 && time.Since(g.lastEnd) >= d
}

// SetBackgroundCores caps how many cores background work computes on at
// once (Acquire); n ≤ 0 restores the default (DefaultBackgroundCores). It
// is read at the first Acquire: set it before background work starts.
func (g *Gate) SetBackgroundCores(n int) {
	g.mu.Lock()
	g.cores = max(n, 0)
	g.mu.Unlock()
}

// BackgroundCores is how many cores background work may compute on at
// once: SetBackgroundCores's, else DefaultBackgroundCores, never more than
// GOMAXPROCS. A nil *Gate lets it have them all.
func (g *Gate) BackgroundCores() int {
	procs := runtime.GOMAXPROCS(0)
	if g == nil {
		return procs
	}
	g.mu.Lock()
	n := g.cores
	g.mu.Unlock()
	if n == 0 {
		n = DefaultBackgroundCores(procs)
	}
	return min(n, procs)
}

// DefaultBackgroundCores is the background's share of procs cores: every
// core but one, at least one. The core left over is a query's the moment
// it arrives: the gate holds background work back only between its steps,
// and a step of the built-in model takes ~8 ms of a core.
func DefaultBackgroundCores(procs int) int { return max(1, procs-1) }

// Acquire waits as Wait does, then for one of BackgroundCores places to
// compute, held until release is called: background steps of every caller
// together never take more cores. A nil *Gate has no cap.
func (g *Gate) Acquire(ctx context.Context) (release func(), err error) {
	if g == nil {
		return func() {}, ctx.Err()
	}
	g.slotsOnce.Do(func() { g.slots = make(chan struct{}, g.BackgroundCores()) })
	for {
		if err := g.Wait(ctx); err != nil {
			return nil, err
		}
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// Foreground work may have begun while this waited for a place.
		g.mu.Lock()
		active := g.active
		g.mu.Unlock()
		if active == 0 {
			return sync.OnceFunc(func() { <-g.slots }), nil
		}
		<-g.slots
	}
}

// Waited is the total time background work has spent held back.
func (g *Gate) Waited() time.Duration {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waited
}

// AfterBursts calls fn each time at least burst pieces of foreground work
// have begun since its last call and none has run for quiet, checking
// every quiet, until ctx ends. The daemon hands the Go runtime's memory
// back to the system so: indexing a repository leaves as much garbage as
// the index it builds, which the runtime returns only slowly.
func (g *Gate) AfterBursts(ctx context.Context, quiet time.Duration, burst uint64, fn func()) {
	var last uint64
	t := time.NewTicker(quiet)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n, ok := g.Quiet(quiet); ok && n-last >= burst {
			fn()
			last = n
		}
	}
}
