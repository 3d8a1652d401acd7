// Package localnode runs the laptop daemon (internal/daemon) in-process on
// a workspace, as `cue up` would, and calls its tools through the NATS
// query service, as `cue mcp` does: what it measures is the product's own
// path from ingest to answer. `cue bench` and `cue eval questions` use it.
package localnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/daemon"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// Options configure Start.
type Options struct {
	// Model is the embedding model ([embed] model): "none", "builtin" or
	// an Ollama model.
	Model string
	// EmbedFiles is [embed] files ("prose" or "all"); empty: the model's
	// default.
	EmbedFiles string
	// EmbedCores is [embed] cores; zero: the config's. An evaluation,
	// which asks nothing while it waits for the vectors, gives embedding
	// every core.
	EmbedCores int
	// Debounce overrides the ingest debounce (the config's default when
	// zero); tests shorten it.
	Debounce time.Duration
	// Logger receives the daemon's logs; nil discards them.
	Logger *slog.Logger
}

// Node is a daemon running in-process and a client of its query service.
type Node struct {
	WS     *workspace.Workspace
	Info   workspace.DaemonInfo
	Conn   *bus.Conn
	Caller tools.Caller
	// Debounce is the ingest debounce the daemon runs with.
	Debounce time.Duration

	stopOnce sync.Once
	cancel   context.CancelFunc
	dead     context.Context // done once the daemon has stopped
	markDead context.CancelFunc
	runErr   error // why, once dead is done
}

// stopWait is how long a call that found no edge waits for the daemon to
// finish stopping, so as to say why it stopped.
const stopWait = 10 * time.Second

// readyTimeout bounds the wait for a daemon's query service.
const readyTimeout = 2 * time.Minute

// Start runs the daemon on root with rate limits off (a measurement calls
// far faster than an agent may) and transcript tailing off (the user's
// sessions are not the measurement's), and returns once its query service
// answers. Stop ends it.
func Start(ctx context.Context, root string, o Options) (*Node, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ws := &workspace.Workspace{Root: root}
	cfg, err := ws.LoadConfig()
	if err != nil {
		return nil, err
	}
	if o.Model != "" {
		cfg.Embed.Model = o.Model
	}
	if o.EmbedFiles != "" {
		cfg.Embed.Files = o.EmbedFiles
	}
	if o.EmbedCores > 0 {
		cfg.Embed.Cores = o.EmbedCores
	}
	cfg.MCP.RateLimitsDisabled = true
	cfg.Transcripts.Disabled = true
	if o.Debounce > 0 {
		cfg.Ingest.Debounce.Duration = o.Debounce
	}
	dctx, cancel := context.WithCancel(ctx)
	ready := make(chan workspace.DaemonInfo, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(dctx, daemon.Options{Workspace: ws, Config: cfg, Logger: log, Ready: func(i workspace.DaemonInfo) { ready <- i }})
	}()
	var info workspace.DaemonInfo
	select {
	case info = <-ready:
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("localnode: daemon failed to start: %w", err)
	case <-time.After(readyTimeout):
		cancel()
		<-done
		return nil, fmt.Errorf("localnode: daemon not ready within %s", readyTimeout)
	}
	conn, err := bus.Connect(ctx, info.NATSURL, bus.ConnectOptions{Name: "cue-localnode"})
	if err != nil {
		cancel()
		<-done
		return nil, err
	}
	caller, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: info.QueryPrefix, Timeout: 30 * time.Second})
	if err != nil {
		conn.Close()
		cancel()
		<-done
		return nil, err
	}
	n := &Node{WS: ws, Info: info, Conn: conn, Caller: caller, Debounce: cfg.Ingest.Debounce.Duration, cancel: cancel}
	n.dead, n.markDead = context.WithCancel(context.Background())
	// dead is done once the daemon's error is kept: calls end on it and
	// Stop waits on it.
	go func() {
		n.runErr = <-done
		n.markDead()
	}()
	return n, nil
}

// Stop closes the client and stops the daemon, waiting for its shutdown;
// it returns the daemon's error, the same on every call.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		n.Conn.Close()
		n.cancel()
	})
	<-n.dead.Done()
	return n.runErr
}

// deadWithin reports whether the daemon has stopped, or stops within d,
// and why.
func (n *Node) deadWithin(d time.Duration) (bool, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-n.dead.Done():
		return true, n.runErr
	case <-t.C:
		return false, nil
	}
}

// Call calls tool with args marshalled to JSON and decodes the result
// into out (when not nil). A tool's refusal is a *tools.Error.
func (n *Node) Call(ctx context.Context, tool string, args any, out any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	// A call is given up when the daemon stops, rather than waiting out
	// the client's timeout on a server that is gone.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(n.dead, cancel)()
	res, err := n.Caller.Call(cctx, tool, b)
	if err != nil && ctx.Err() == nil {
		// "No edge is serving" says to start the daemon, which is not
		// the user's to do here: when this one is stopping, say why.
		wait := time.Duration(0)
		if errors.Is(err, query.ErrNoEdge) || cctx.Err() != nil {
			wait = stopWait
		}
		if dead, why := n.deadWithin(wait); dead {
			return fmt.Errorf("%s: the daemon stopped: %v", tool, why)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			return fmt.Errorf("%s result: %w", tool, err)
		}
	}
	return nil
}

// ReadContext asks read_context for query in mode.
func (n *Node) ReadContext(ctx context.Context, query, mode string, limit int) ([]tools.ContextHit, error) {
	var hits []tools.ContextHit
	err := n.Call(ctx, tools.ReadContext, tools.ReadContextArgs{Query: query, Mode: mode, Limit: limit}, &hits)
	return hits, err
}

// HasDoc reports whether read_doc finds path: false on error 1001.
func (n *Node) HasDoc(ctx context.Context, path string) (bool, error) {
	var doc tools.ReadDocResult
	err := n.Call(ctx, tools.ReadDoc, tools.ReadDocArgs{Path: path}, &doc)
	var te *tools.Error
	if errors.As(err, &te) && te.Code == tools.CodeFileNotFound {
		return false, nil
	}
	return err == nil, err
}
