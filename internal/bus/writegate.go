package bus

import (
	"context"
	"sync"
)

// Writes holds back this process's writes to JetStream while the disk of
// the embedded server is nearly full: a server whose disk fills mid-write
// keeps the stream's write error until it restarts, and may stop
// answering and grow without bound meanwhile. Publishers (PublishEvent)
// and workers (before each fetch) wait at it; the daemon's disk guard
// closes and opens it. Open unless closed: roles on a cluster never wait.
var Writes = &WriteGate{}

// WriteGate is a gate writes wait at while it is closed.
type WriteGate struct {
	mu     sync.Mutex
	closed bool
	reason string
	open   chan struct{} // closed when the gate opens; nil while open
	shut   chan struct{} // closed when the gate closes; nil while closed
}

// closedChan is what Closing returns for a gate already closed.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Closing returns a channel closed when the gate closes: at once if it is
// closed. A write already past the gate can give up on it then.
func (g *WriteGate) Closing() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return closedChan
	}
	if g.shut == nil {
		g.shut = make(chan struct{})
	}
	return g.shut
}

// Close holds writes back, for reason (which Reason returns).
func (g *WriteGate) Close(reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reason = reason
	if !g.closed {
		g.closed, g.open = true, make(chan struct{})
		if g.shut != nil {
			close(g.shut)
			g.shut = nil
		}
	}
}

// Open lets writes through again.
func (g *WriteGate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.closed = false
		close(g.open)
		g.open = nil
	}
}

// Reason is why the gate is closed, "" while it is open.
func (g *WriteGate) Reason() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		return ""
	}
	return g.reason
}

// Wait returns once the gate is open, or ctx's error.
func (g *WriteGate) Wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
