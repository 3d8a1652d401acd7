package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// The daemon's own server restarted in place (as after a full disk): the
// connection drops and comes back to the same daemon, and the link serves
// again rather than giving up on every later call.
func TestDaemonLinkServesAfterTheServerRestartsInPlace(t *testing.T) {
	srv, err := bus.StartEmbedded(bus.EmbeddedConfig{StoreDir: t.TempDir(), ServerName: "link-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	serving, err := bus.Connect(ctx, srv.ClientURL(), bus.ConnectOptions{Name: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(serving.Close)
	// The restart comes once every endpoint is subscribed: a first call
	// can pass while the service still sets up the others.
	ready, served := make(chan struct{}), make(chan error, 1)
	go func() {
		served <- query.Serve(ctx, serving.NC, tools.CallerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		}), query.Options{Prefix: "cue.linktest", Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-served:
		t.Fatalf("the service stopped: %v", err)
	}
	info := workspace.DaemonInfo{PID: 1, NATSURL: srv.ClientURL(), QueryPrefix: "cue.linktest"}
	link := &daemonLink{
		log: slog.New(slog.DiscardHandler), wait: 2 * time.Second,
		running: func() (workspace.DaemonInfo, error) { return info, nil },
		start:   func() (workspace.DaemonInfo, error) { return info, nil },
		dial: func(ctx context.Context, info workspace.DaemonInfo) (*linkConn, error) {
			conn, err := bus.Connect(ctx, info.NATSURL, bus.ConnectOptions{Name: "cue-mcp"})
			if err != nil {
				return nil, err
			}
			caller, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: info.QueryPrefix})
			if err != nil {
				return nil, err
			}
			return newLinkConn(info, conn, caller), nil
		},
	}
	first, err := link.connectNew()
	if err != nil {
		t.Fatal(err)
	}
	link.cur = first
	t.Cleanup(first.close)
	// A request made as the server goes down can be lost with it and
	// wait out its whole timeout; each attempt is bounded so that one
	// such call is followed by another.
	var lastErr error
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := link.Call(ctx, tools.ReadDoc, json.RawMessage(`{}`))
		lastErr = err
		return err
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last call's error: %v", lastErr)
		}
	})
	bustest.Eventually(t, 10*time.Second, "the first call", func() bool { return call() == nil })

	if err := srv.Restart(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 10*time.Second, "both connections back", func() bool {
		return first.conn.NC.IsConnected() && serving.NC.IsConnected()
	})
	bustest.Eventually(t, 20*time.Second, "a call after the restart", func() bool { return call() == nil })
	for i := range 5 {
		if err := call(); err != nil {
			t.Fatalf("call %d after the restart: %v", i, err)
		}
	}
}
