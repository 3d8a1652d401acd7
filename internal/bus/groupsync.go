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
	// Syncs counts the syncs made, Waits the calls that waited for one.
	syncs, waits atomic.Uint64
}

type syncRound struct {
	done chan struct{}
	err  error
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
	return &GroupSync{dir: f, sync: syncFS}, nil
}

// Sync returns once everything written under the store before the call
// is on disk, or ctx ends.
func (g *GroupSync) Sync(ctx context.Context) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	g.waits.Add(1)
	r := g.next
	if r == nil {
		r = &syncRound{done: make(chan struct{})}
		g.next = r
	}
	if !g.running {
		g.running = true
		go g.run()
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gatherFor is how long after a sync began the next one waits to gather
// callers: a sync took 0.4-0.8 ms of the development machine's disk, and
// without a pause a burst of acks made rounds of one or two callers.
// Short, as every answer to an agent's write waits for a round.
const gatherFor = time.Millisecond

// run syncs rounds until none waits.
func (g *GroupSync) run() {
	g.mu.Lock()
	last := time.Time{}
	for g.next != nil {
		if wait := gatherFor - time.Since(last); wait > 0 && !last.IsZero() {
			g.mu.Unlock()
			time.Sleep(wait)
			g.mu.Lock()
		}
		last = time.Now()
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
