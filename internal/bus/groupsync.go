package bus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// GroupSync makes durable, for many writers at once, what an embedded
// server has written to its store: the server writes each message to the
// file before it acknowledges it (a crash of the process loses nothing)
// and a writer that must not acknowledge onward before its effect
// survives a power cut calls Sync first. Callers that arrive while a
// sync runs share the next one, so a burst of acknowledgements costs a
// sync or two instead of one per message, which is what the server's own
// sync_always costs.
type GroupSync struct {
	// fileMu guards dir against Close while a sync uses it.
	fileMu sync.RWMutex
	dir    *os.File
	closed bool
	// sync is syncFS; tests replace it.
	sync func(*os.File) error
	mu   sync.Mutex
	// running is true while a goroutine syncs rounds; next gathers the
	// callers of the round that starts when the running one ends.
	running bool
	next    *syncRound
	// lastStart is when the last round began; sooner wakes run when a
	// caller brings the next round's start forward.
	lastStart time.Time
	sooner    chan struct{}
	// Syncs counts the syncs made, Waits the calls that waited for one.
	syncs, waits atomic.Uint64
}

type syncRound struct {
	done chan struct{}
	err  error
	// due is when the round may start at the latest.
	due time.Time
}

// NewGroupSync syncs the file system holding dir. It fails where the
// system cannot sync a file system on its own (syncFS).
func NewGroupSync(dir string) (*GroupSync, error) {
	if !canSyncFS {
		return nil, errNoSyncFS
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("bus: open %s to sync it: %w", dir, err)
	}
	return &GroupSync{dir: f, sync: syncFS, sooner: make(chan struct{}, 1)}, nil
}

// Sync returns once everything written under the store before the call
// is on disk, or ctx ends.
func (g *GroupSync) Sync(ctx context.Context) error {
	return g.Join(0)(ctx)
}

// Join joins the next sync and returns the wait for it: it returns once
// everything written under the store before Join is on disk, or its ctx
// ends, so that work needing the sync only later goes on meanwhile. The
// sync starts no later than within after the one before it started
// (gatherFor when less): bulk work that waits for many syncs at once
// gives a longer within, and the syncs it joins gather more writes each;
// a caller that gives less starts the round sooner for all.
func (g *GroupSync) Join(within time.Duration) (wait func(context.Context) error) {
	if g == nil {
		return func(context.Context) error { return nil }
	}
	within = max(within, gatherFor)
	g.mu.Lock()
	g.waits.Add(1)
	r := g.next
	if r == nil {
		r = &syncRound{done: make(chan struct{}), due: g.lastStart.Add(within)}
		g.next = r
	} else if due := g.lastStart.Add(within); due.Before(r.due) {
		r.due = due
		select {
		case g.sooner <- struct{}{}:
		default:
		}
	}
	if !g.running {
		g.running = true
		go g.run()
	}
	g.mu.Unlock()
	return func(ctx context.Context) error {
		select {
		case <-r.done:
			return r.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// gatherFor is the least time between the starts of two syncs: a sync
// took 0.4-0.8 ms of the development machine's disk, and without a pause
// a burst of acks made rounds of one or two callers. Short, as every
// answer to an agent's write waits for a round.
const gatherFor = time.Millisecond

// run syncs rounds until none waits.
func (g *GroupSync) run() {
	g.mu.Lock()
	for g.next != nil {
		if wait := time.Until(g.next.due); wait > 0 {
			g.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-g.sooner:
				t.Stop()
			}
			g.mu.Lock()
			continue
		}
		g.lastStart = time.Now()
		r := g.next
		g.next = nil
		g.mu.Unlock()
		g.fileMu.RLock()
		err := errSyncClosed
		if !g.closed {
			err = g.sync(g.dir)
		}
		g.fileMu.RUnlock()
		if err != nil {
			r.err = fmt.Errorf("bus: sync the JetStream store: %w", err)
		}
		g.syncs.Add(1)
		close(r.done)
		g.mu.Lock()
	}
	g.running = false
	g.mu.Unlock()
}

// Stats returns how many syncs were made and how many calls waited.
func (g *GroupSync) Stats() (syncs, waits uint64) {
	if g == nil {
		return 0, 0
	}
	return g.syncs.Load(), g.waits.Load()
}

// Close releases the directory.
func (g *GroupSync) Close() error {
	if g == nil {
		return nil
	}
	g.fileMu.Lock()
	defer g.fileMu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	if g.dir == nil {
		return nil
	}
	return g.dir.Close()
}

// errSyncClosed answers the callers of a sync after its server stopped.
var errSyncClosed = errors.New("the embedded server has stopped")
