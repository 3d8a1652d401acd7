package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/humanize"
	"github.com/cuedeck/cuedeck/internal/localdb"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// diskGuard watches the disk of the embedded server's store. While it is
// nearly full, or a stream's write failed, the tools that write (tasks)
// answer at once with an error naming the disk, its free space and what
// to do, instead of waiting on a server that does not answer; once space
// returns, a server holding a write error is restarted, which clears it,
// and the clients reconnect by themselves.
type diskGuard struct {
	dir     string
	srv     *bus.Embedded
	minFree uint64
	log     *slog.Logger
	state   atomic.Pointer[diskState]
	// stuck is set when the server could not be restarted: only a
	// restart of CueDeck helps then.
	stuck atomic.Bool
	// freeBytes reads the free space (bus.FreeBytes; tests replace it).
	freeBytes func(dir string) (uint64, error)
	// stores are the Badger directories on the same disk; reserved the
	// size each of their mapped files had when its blocks were reserved.
	stores   []string
	reserved map[string]int64
}

type diskState struct {
	free uint64
	// writeErrors are the streams whose write failed, with the error.
	writeErrors map[string]string
}

// writeRefusedBelow is the free space under which writes are refused:
// below it a publish may be the one that fails.
const writeRefusedBelow = 64 << 20

// reserveBelow is the free space under which the blocks of the local
// stores' mapped files are reserved (see localdb.Reserve): 4–16 MiB per
// store that a disk with room does not need to spend, and that another
// program could not write away between two looks.
const reserveBelow = 1 << 30

func newDiskGuard(dir string, stores []string, srv *bus.Embedded, log *slog.Logger) *diskGuard {
	g := &diskGuard{dir: dir, stores: stores, reserved: map[string]int64{}, srv: srv, minFree: writeRefusedBelow, log: log, freeBytes: bus.FreeBytes}
	g.state.Store(&diskState{free: ^uint64(0)})
	return g
}

// Run checks the disk five times a second until ctx ends.
func (g *diskGuard) Run(ctx context.Context) error {
	// Often enough that a burst of indexing cannot write the margin away
	// between two looks; a look is one statfs.
	t := time.NewTicker(200 * time.Millisecond)
	defer bus.Writes.Open()
	defer t.Stop()
	for {
		g.check()
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (g *diskGuard) check() {
	free, err := g.freeBytes(g.dir)
	if err != nil {
		return
	}
	if free < reserveBelow {
		g.reserve()
	}
	werrs := g.srv.WriteErrors()
	prev := g.state.Load()
	next := &diskState{free: free, writeErrors: werrs}
	g.state.Store(next)
	switch {
	case free < g.minFree && prev.free >= g.minFree:
		bus.Writes.Close(fmt.Sprintf("%s has %s free", g.dir, humanize.Bytes(free)))
		g.log.Error("the disk is nearly full: writes wait, and the tools that write refuse, until space is freed", "dir", g.dir, "free", humanize.Bytes(free), "needed", humanize.Bytes(g.minFree))
	case free >= g.minFree && prev.free < g.minFree:
		bus.Writes.Open()
		g.log.Info("the disk has room again: writes resume", "dir", g.dir, "free", humanize.Bytes(free))
	}
	if len(werrs) > 0 && free >= g.minFree && !g.stuck.Load() {
		g.log.Warn("restarting the embedded NATS server to clear its write errors now that the disk has room", "streams", strings.Join(slices.Sorted(maps.Keys(werrs)), ", "), "free", humanize.Bytes(free))
		if err := g.srv.Restart(30 * time.Second); err != nil {
			g.log.Error("restarting the embedded NATS server failed; stop CueDeck and start it again (cue down, then cue up)", "err", err)
			g.stuck.Store(true)
			return
		}
		g.state.Store(&diskState{free: free})
	}
}

// reserve gives the stores' mapped files their disk blocks, once per file
// and size: a store that writes into a page of a sparse map on a full disk
// is killed (SIGBUS); with its blocks reserved it writes whatever another
// program leaves free.
func (g *diskGuard) reserve() {
	seen := map[string]bool{}
	for _, dir := range g.stores {
		for _, f := range localdb.MappedFiles(dir) {
			seen[f] = true
			fi, err := os.Stat(f)
			if err != nil || g.reserved[f] == fi.Size() {
				continue
			}
			if err := localdb.Reserve(f); err != nil {
				g.log.Warn("could not reserve the disk blocks of a store's write-ahead log; if the disk fills completely the store may stop the daemon (restart it once space is freed: nothing acknowledged is lost)", "file", f, "err", err)
				continue
			}
			if len(g.reserved) == 0 {
				g.log.Info("the disk is getting full: reserved the disk blocks of the local stores' write-ahead logs", "dir", g.dir)
			}
			g.reserved[f] = fi.Size()
		}
	}
	for f := range g.reserved {
		if !seen[f] {
			delete(g.reserved, f)
		}
	}
}

// refusal is the error a write gets now, nil when writes are accepted.
func (g *diskGuard) refusal() *tools.Error {
	st := g.state.Load()
	if st.free >= g.minFree && len(st.writeErrors) == 0 {
		return nil
	}
	data := map[string]any{
		"reason": "disk_full", "path": g.dir, "free_bytes": st.free, "retryable": true,
		"suggestion": fmt.Sprintf("Free space on the disk holding %s (at least %s), then retry: CueDeck resumes by itself.", g.dir, humanize.Bytes(g.minFree)),
	}
	if len(st.writeErrors) > 0 {
		data["streams"] = slices.Sorted(maps.Keys(st.writeErrors))
	}
	if g.stuck.Load() {
		data["retryable"] = false
		data["suggestion"] = "The NATS server stopped answering after the disk filled; free space, then restart CueDeck: cue down, then cue up."
	}
	msg := fmt.Sprintf("the disk is full: %s has %s free; nothing was written", g.dir, humanize.Bytes(st.free))
	if st.free >= g.minFree {
		msg = fmt.Sprintf("a write failed while the disk holding %s was full (it has %s free now); nothing was written", g.dir, humanize.Bytes(st.free))
	}
	return &tools.Error{Code: tools.CodeInternal, Message: msg, Data: data}
}

// filledDuring is the error of a write the disk filled under: the server
// may have stored it before it stopped answering, or may store it once
// space returns.
func (g *diskGuard) filledDuring() *tools.Error {
	free := g.state.Load().free
	return &tools.Error{Code: tools.CodeInternal,
		Message: fmt.Sprintf("the disk holding %s filled while this write was under way (%s free): it may or may not have been stored", g.dir, humanize.Bytes(free)),
		Data: map[string]any{
			"reason": "disk_full", "path": g.dir, "free_bytes": free, "outcome": "unknown", "retryable": true,
			"suggestion": "Free space on that disk; once CueDeck resumes, list_tasks shows whether the write was stored: retry only if it was not.",
		}}
}

// wrap refuses the write tools while the disk is full, and gives up on a
// write under way when the disk fills, rather than waiting on a server
// that may not answer until space returns.
func (g *diskGuard) wrap(c tools.Caller) tools.Caller {
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if !tools.Writes(tool) {
			return c.Call(ctx, tool, args)
		}
		if err := g.refusal(); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		closing := bus.Writes.Closing()
		go func() {
			select {
			case <-closing:
				cancel(errDiskFilled)
			case <-ctx.Done():
			}
		}()
		out, err := c.Call(ctx, tool, args)
		if err != nil && errors.Is(context.Cause(ctx), errDiskFilled) {
			return nil, g.filledDuring()
		}
		return out, err
	})
}

var errDiskFilled = errors.New("the disk filled")
