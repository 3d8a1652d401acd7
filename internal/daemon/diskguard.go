package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/humanize"
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
}

type diskState struct {
	free uint64
	// writeErrors are the streams whose write failed, with the error.
	writeErrors map[string]string
}

// writeRefusedBelow is the free space under which writes are refused:
// below it a publish may be the one that fails.
const writeRefusedBelow = 64 << 20

func newDiskGuard(dir string, srv *bus.Embedded, log *slog.Logger) *diskGuard {
	g := &diskGuard{dir: dir, srv: srv, minFree: writeRefusedBelow, log: log, freeBytes: bus.FreeBytes}
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

// writeTools are the tools that publish.
var writeTools = map[string]bool{tools.CreateTask: true, tools.UpdateTask: true}

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

// wrap refuses the write tools while the disk is full.
func (g *diskGuard) wrap(c tools.Caller) tools.Caller {
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if writeTools[tool] {
			if err := g.refusal(); err != nil {
				return nil, err
			}
		}
		return c.Call(ctx, tool, args)
	})
}
