package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// testGuard is a disk guard of a real embedded server whose disk has as
// much free space as free holds (10 GiB at first).
func testGuard(t *testing.T) (*diskGuard, *atomic.Uint64) {
	t.Helper()
	srv, err := bus.StartEmbedded(bus.EmbeddedConfig{StoreDir: t.TempDir(), ServerName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	free := &atomic.Uint64{}
	free.Store(10 << 30)
	g := newDiskGuard("/ws/.cuedeck/.cache/nats", nil, srv, slog.New(slog.DiscardHandler))
	g.freeBytes = func(string) (uint64, error) { return free.Load(), nil }
	t.Cleanup(bus.Writes.Open)
	return g, free
}

// A nearly full disk: the tools that write answer at once with the disk,
// its free space and what to do; reads go on; the process's writes to
// JetStream wait at bus.Writes. Space coming back lets all of it through.
func TestDiskGuardRefusesWritesWhileTheDiskIsFull(t *testing.T) {
	g, free := testGuard(t)
	var calls atomic.Int32
	caller := g.wrap(tools.CallerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		calls.Add(1)
		return json.RawMessage(`{}`), nil
	}))
	ctx := context.Background()

	g.check()
	if _, err := caller.Call(ctx, tools.CreateTask, nil); err != nil {
		t.Fatalf("a write with room: %v", err)
	}

	free.Store(3 << 20)
	g.check()
	_, err := caller.Call(ctx, tools.CreateTask, nil)
	var te *tools.Error
	if !errors.As(err, &te) || te.Data["reason"] != "disk_full" || te.Data["retryable"] != true ||
		!strings.Contains(te.Message, "/ws/.cuedeck/.cache/nats has 3 MiB free") {
		t.Fatalf("a write on a full disk: %v", err)
	}
	if _, err := caller.Call(ctx, tools.ReadDoc, nil); err != nil {
		t.Fatalf("a read on a full disk: %v", err)
	}
	if calls.Load() != 2 {
		t.Fatalf("%d calls reached the edge; want the first write and the read", calls.Load())
	}
	waitCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := bus.Writes.Wait(waitCtx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("JetStream writes were not held back: %v", err)
	}

	free.Store(1 << 30)
	g.check()
	if err := bus.Writes.Wait(ctx); err != nil || bus.Writes.Reason() != "" {
		t.Fatalf("writes still held back: %v %q", err, bus.Writes.Reason())
	}
	if _, err := caller.Call(ctx, tools.CreateTask, nil); err != nil {
		t.Fatalf("a write once space is back: %v", err)
	}
}

// A write under way when the disk fills gives up on the server then, with
// an error that says its outcome is unknown, rather than waiting on a
// server that may not answer until space returns.
func TestDiskGuardGivesUpOnAWriteTheDiskFillsUnder(t *testing.T) {
	g, free := testGuard(t)
	g.check()
	started := make(chan struct{})
	caller := g.wrap(tools.CallerFunc(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done() // a server that stopped answering
		return nil, ctx.Err()
	}))
	done := make(chan error, 1)
	go func() {
		_, err := caller.Call(context.Background(), tools.CreateTask, nil)
		done <- err
	}()
	<-started
	free.Store(0)
	g.check()
	err := <-done
	var te *tools.Error
	if !errors.As(err, &te) || te.Data["reason"] != "disk_full" || te.Data["outcome"] != "unknown" ||
		!strings.Contains(te.Message, "may or may not have been stored") {
		t.Fatalf("a write the disk filled under: %v", err)
	}
}
