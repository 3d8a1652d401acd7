package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// daemonLink is `cue mcp`'s way to the workspace's daemon, and it outlives
// the daemon: when the daemon is gone (killed, stopped, upgraded), the
// next call re-reads the daemon file, starts a daemon if none runs (as at
// first start), connects to it and is made there. An agent's MCP server
// never needs restarting.
type daemonLink struct {
	ws  *workspace.Workspace
	log *slog.Logger
	// start returns the running daemon, starting one if none runs;
	// dial connects to it.
	start func() (workspace.DaemonInfo, error)
	dial  func(ctx context.Context, info workspace.DaemonInfo) (*linkConn, error)
	// wait is how long a call waits for a new daemon before it answers
	// with a retryable error (the start goes on behind it).
	wait time.Duration
	// running reads the daemon file (ws.ReadDaemonInfo when nil).
	running func() (workspace.DaemonInfo, error)

	mu      sync.Mutex
	cur     *linkConn
	pending chan struct{} // closed when the running reconnect ends; nil when none runs
	lastErr error         // the last reconnect's failure
}

// linkConn is one connection to one daemon.
type linkConn struct {
	info   workspace.DaemonInfo
	conn   *bus.Conn
	caller tools.Caller

	mu sync.Mutex
	// lost is closed while the connection is down: the daemon may be
	// gone, and calls under way give up rather than wait out their
	// timeout. A reconnection (the same daemon's server restarted in
	// place) gives it a new, open channel.
	lost chan struct{}
}

// newLinkConn follows the state of conn's connection.
func newLinkConn(info workspace.DaemonInfo, conn *bus.Conn, caller tools.Caller) *linkConn {
	l := &linkConn{info: info, conn: conn, caller: caller, lost: make(chan struct{})}
	status := conn.NC.StatusChanged(nats.CONNECTED, nats.RECONNECTING, nats.DISCONNECTED, nats.CLOSED)
	go func() {
		for st := range status {
			l.mu.Lock()
			down := isClosed(l.lost)
			switch {
			case st == nats.CONNECTED && down:
				l.lost = make(chan struct{})
			case st != nats.CONNECTED && !down:
				close(l.lost)
			}
			closed := st == nats.CLOSED
			l.mu.Unlock()
			if closed {
				return
			}
		}
	}()
	return l
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (l *linkConn) close() {
	l.conn.Close()
}

// lostSignal is closed if the connection goes down from now.
func (l *linkConn) lostSignal() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

func (l *linkConn) isLost() bool {
	return isClosed(l.lostSignal()) || !l.conn.NC.IsConnected()
}

// errDaemonLost cancels a call whose connection dropped.
var errDaemonLost = errors.New("the connection to the daemon dropped")

// Call makes the call on the current daemon; when it is gone, on the next.
func (d *daemonLink) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	l := d.current()
	if l != nil && !l.isLost() {
		out, err, sent := d.callOn(ctx, l, tool, args)
		if err == nil || ctx.Err() != nil || !d.gone(l) {
			return out, err
		}
		if sent && tools.Writes(tool) && !hasRequestID(args) {
			// It may have been made before the daemon went: making it
			// again could make it twice.
			d.reconnect(l)
			return nil, &tools.Error{Code: tools.CodeInternal,
				Message: "the CueDeck daemon stopped while this call was under way: it may or may not have been made; the daemon is being started again",
				Data: map[string]any{"reason": "daemon_restarting", "outcome": "unknown", "retryable": true, "retry_after_ms": 1000,
					"suggestion": "Check with list_tasks whether the write was made before making it again, or give writes a request_id: a retry with it writes at most once."}}
		}
	} else if l != nil && !d.gone(l) {
		// Dropped but the same daemon runs: the client reconnects by
		// itself.
		out, err, _ := d.callOn(ctx, l, tool, args)
		return out, err
	}
	done := d.reconnect(l)
	select {
	case <-done:
	case <-time.After(d.wait):
		return nil, &tools.Error{Code: tools.CodeInternal,
			Message: "the CueDeck daemon is not running; it is being started again: retry in a moment",
			Data:    map[string]any{"reason": "daemon_restarting", "retryable": true, "retry_after_ms": 1000}}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	next := d.current()
	if next == nil || next == l {
		d.mu.Lock()
		err := d.lastErr
		d.mu.Unlock()
		return nil, &tools.Error{Code: tools.CodeInternal,
			Message: fmt.Sprintf("the CueDeck daemon is not running and could not be started: %v", err),
			Data: map[string]any{"reason": "daemon_unavailable", "retryable": true, "retry_after_ms": 5000,
				"suggestion": "Run `cue up` in the workspace to see why, or `cue doctor`."}}
	}
	out, err, _ := d.callOn(ctx, next, tool, args)
	return out, err
}

// callOn makes the call on l, giving up when l's connection drops; sent
// is false when the call cannot have reached a daemon.
func (d *daemonLink) callOn(ctx context.Context, l *linkConn, tool string, args json.RawMessage) (out json.RawMessage, err error, sent bool) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lost := l.lostSignal()
	go func() {
		select {
		case <-lost:
			cancel(errDaemonLost)
		case <-cctx.Done():
		}
	}()
	out, err = l.caller.Call(cctx, tool, args)
	if err != nil && errors.Is(err, nats.ErrNoResponders) {
		return nil, err, false
	}
	return out, err, true
}

// gone reports whether l's daemon is no longer the workspace's running
// daemon.
func (d *daemonLink) gone(l *linkConn) bool {
	read := d.running
	if read == nil {
		read = d.ws.ReadDaemonInfo
	}
	info, err := read()
	return err != nil || info.PID != l.info.PID || info.NATSURL != l.info.NATSURL
}

func (d *daemonLink) current() *linkConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cur
}

// reconnect starts, once for every caller that found old gone, finding or
// starting the workspace's daemon and connecting to it; the channel is
// closed when that is over.
func (d *daemonLink) reconnect(old *linkConn) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending != nil {
		return d.pending
	}
	if d.cur != old {
		// Another caller already moved on.
		done := make(chan struct{})
		close(done)
		return done
	}
	done := make(chan struct{})
	d.pending = done
	go func() {
		next, err := d.connectNew()
		d.mu.Lock()
		if err != nil {
			d.lastErr = err
			d.log.Warn("the daemon is gone and could not be reached again", "err", err)
		} else {
			if d.cur != nil {
				d.cur.close()
			}
			d.cur = next
			d.log.Info("connected to the workspace's daemon again", "pid", next.info.PID, "nats", next.info.NATSURL)
		}
		d.pending = nil
		d.mu.Unlock()
		close(done)
	}()
	return done
}

func (d *daemonLink) connectNew() (*linkConn, error) {
	info, err := d.start()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return d.dial(ctx, info)
}

// hasRequestID reports whether a write's arguments carry a request_id:
// made again, it is written at most once.
func hasRequestID(args json.RawMessage) bool {
	var a struct {
		RequestID string `json:"request_id"`
	}
	return json.Unmarshal(args, &a) == nil && a.RequestID != ""
}
