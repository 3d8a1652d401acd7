package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DaemonInfo is what a running daemon publishes about itself in the cache,
// so `cue mcp`, `cue status` and `cue down` can reach it.
type DaemonInfo struct {
	PID         int       `json:"pid"`
	Workspace   string    `json:"workspace"`
	Repo        string    `json:"repo"`
	NATSURL     string    `json:"nats_url"`
	MCPURL      string    `json:"mcp_url,omitempty"`
	QueryPrefix string    `json:"query_prefix"`
	StartedAt   time.Time `json:"started_at"`
	Version     string    `json:"version"`
	// TeamQueryPrefix is set when the daemon's server joins a team as a
	// leaf node: the team's edges serve it, QueryPrefix is the daemon's
	// own, and `cue mcp` asks the team first.
	TeamQueryPrefix string `json:"team_query_prefix,omitempty"`
}

// ErrNoDaemon means no daemon runs for the workspace.
var ErrNoDaemon = errors.New("no CueDeck daemon runs for this workspace")

// WriteDaemonInfo records info atomically.
func (w *Workspace) WriteDaemonInfo(info DaemonInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(w.DaemonFilePath(), b, 0o600)
}

// RemoveDaemonInfo deletes the daemon file if it names process pid: a
// daemon that stops never removes the file of another that runs.
func (w *Workspace) RemoveDaemonInfo(pid int) error {
	b, err := os.ReadFile(w.DaemonFilePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var info DaemonInfo
	if err == nil && json.Unmarshal(b, &info) == nil && info.PID != pid {
		return nil
	}
	err = os.Remove(w.DaemonFilePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// ReadDaemonInfo returns the running daemon's info. If the file is missing,
// or its process is gone, the error wraps ErrNoDaemon.
func (w *Workspace) ReadDaemonInfo() (DaemonInfo, error) {
	var info DaemonInfo
	b, err := os.ReadFile(w.DaemonFilePath())
	if errors.Is(err, os.ErrNotExist) {
		return info, fmt.Errorf("%w (start one with `cue up`)", ErrNoDaemon)
	}
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%w: %s is unreadable (%v); `cue up` rewrites it", ErrNoDaemon, w.DaemonFilePath(), err)
	}
	if !ProcessAlive(info.PID) || w.LockHolder() != info.PID {
		return info, fmt.Errorf("%w: the daemon recorded in %s (pid %d) is gone; start one with `cue up`", ErrNoDaemon, w.DaemonFilePath(), info.PID)
	}
	return info, nil
}

// ProcessAlive reports whether pid names a live process.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// StartingPath is where a starting daemon says what it is doing, until it
// is ready: `cue up --detach` and `cue mcp` show it to the user waiting.
func (w *Workspace) StartingPath() string { return filepath.Join(w.Cache(), "starting") }

// WriteStarting records what a starting daemon is doing, in a line.
func (w *Workspace) WriteStarting(line string) error {
	return writeFileAtomic(w.StartingPath(), []byte(line), 0o644)
}

// ReadStarting returns what a starting daemon last said it was doing, ""
// when it said nothing (or is ready).
func (w *Workspace) ReadStarting() string {
	b, err := os.ReadFile(w.StartingPath())
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// RemoveStarting deletes the starting line: the daemon is ready, or gone.
func (w *Workspace) RemoveStarting() {
	_ = os.Remove(w.StartingPath())
}

// RunningPath is the file a daemon keeps while it runs: found at start, it
// says the daemon before stopped without removing it (killed, crashed, the
// machine lost power). It holds how many did so in a row before the
// daemon that wrote it.
func (w *Workspace) RunningPath() string { return filepath.Join(w.Cache(), "running") }

// MarkRunning records that a daemon runs, and returns how many daemons in
// a row before it stopped without ClearRunning: 0 after a clean stop.
// Call it holding the workspace lock.
func (w *Workspace) MarkRunning() (unclean int, err error) {
	b, err := os.ReadFile(w.RunningPath())
	switch {
	case err == nil:
		// An unreadable count is one stop, unclean like the rest.
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		unclean = max(n, 0) + 1
	case !errors.Is(err, os.ErrNotExist):
		return 0, fmt.Errorf("workspace: %w", err)
	}
	return unclean, writeFileAtomic(w.RunningPath(), []byte(strconv.Itoa(unclean)+"\n"), 0o644)
}

// ClearRunning removes the running file: the daemon stops in order.
func (w *Workspace) ClearRunning() {
	_ = os.Remove(w.RunningPath())
}
