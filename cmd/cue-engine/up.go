package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/cuedeck/cuedeck/internal/daemon"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

func cmdUp(args []string) error {
	fs, c := newFlags("up")
	detach := fs.Bool("detach", false, "start in the background and return once it is ready")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	if *detach {
		info, err := startBackground(ws, c.logLevel)
		if err != nil {
			return err
		}
		printReady(info, true)
		return nil
	}
	cfg, err := ws.LoadConfig()
	if err != nil {
		return err
	}
	// CUE_RATE_LIMITS=off lifts the per-tool limits for one run (a batch
	// job, a test) without editing the config.
	switch v := os.Getenv("CUE_RATE_LIMITS"); v {
	case "":
	case "off":
		cfg.MCP.RateLimitsDisabled = true
	default:
		return fmt.Errorf("CUE_RATE_LIMITS=%q: only \"off\" is understood (limits are set in [mcp] of the config)", v)
	}
	log, err := c.logger()
	if err != nil {
		return err
	}
	// CUE_CPU_PROFILE=FILE writes a CPU profile of the whole run to
	// FILE.PID, for finding where indexing's time goes (docs/bench.md);
	// the PID keeps a restart's profile from replacing the first run's.
	if path := os.Getenv("CUE_CPU_PROFILE"); path != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
		if err != nil {
			return fmt.Errorf("CUE_CPU_PROFILE: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("CUE_CPU_PROFILE: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	// CUE_ALLOC_PROFILE=FILE writes, at exit, where the run allocated
	// (go tool pprof -sample_index=alloc_space): garbage is what makes
	// the collector a tenth of indexing's CPU.
	if path := os.Getenv("CUE_ALLOC_PROFILE"); path != "" {
		defer func() {
			f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
			if err != nil {
				log.Error("CUE_ALLOC_PROFILE", "err", err)
				return
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				log.Error("CUE_ALLOC_PROFILE", "err", err)
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !ws.Initialised() {
		log.Info("workspace has no .cuedeck directory; running with defaults (`cue init` writes a config)", "workspace", ws.Root)
	}
	err = daemon.Run(ctx, daemon.Options{Workspace: ws, Config: cfg, Logger: log, Ready: func(info workspace.DaemonInfo) {
		printReady(info, false)
	}})
	if err == nil {
		fmt.Fprintln(os.Stderr, "CueDeck stopped cleanly.")
	}
	return err
}

func printReady(info workspace.DaemonInfo, detached bool) {
	self := frontPath()
	fmt.Printf("CueDeck is up for %s (repo %q, pid %d)\n", info.Workspace, info.Repo, info.PID)
	fmt.Printf("  NATS          %s\n", info.NATSURL)
	if info.MCPURL != "" {
		fmt.Printf("  MCP over HTTP %s\n", info.MCPURL)
		// The dashboard shares the MCP listener and its tokens.
		fmt.Printf("  Dashboard     %s\n", strings.TrimSuffix(info.MCPURL, "/mcp")+"/dashboard/")
	}
	fmt.Println("Connect an agent:")
	fmt.Printf("  claude mcp add cuedeck -- %s mcp --workspace %s\n", self, info.Workspace)
	fmt.Printf("  or any MCP client: command `%s mcp --workspace %s` (stdio)", self, info.Workspace)
	if info.MCPURL != "" {
		fmt.Printf(", or Streamable HTTP at %s", info.MCPURL)
	}
	fmt.Println()
	fmt.Printf("Progress: `%s status --workspace %s`.\n", self, info.Workspace)
	if detached {
		fmt.Printf("Stop it with `%s down --workspace %s`.\n", self, info.Workspace)
	} else {
		fmt.Println("Ctrl-C stops it.")
	}
}

// startBackground starts `cue up` for ws as a detached process logging to
// the workspace's daemon log, and waits until it has written its daemon
// file. If a daemon already runs, its info is returned.
func startBackground(ws *workspace.Workspace, logLevel string) (workspace.DaemonInfo, error) {
	if info, err := ws.ReadDaemonInfo(); err == nil {
		return info, nil
	}
	if err := ws.CheckCacheFormat(); err != nil {
		return workspace.DaemonInfo{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return workspace.DaemonInfo{}, err
	}
	if err := os.MkdirAll(ws.Cache(), 0o755); err != nil {
		return workspace.DaemonInfo{}, err
	}
	logFile, err := os.OpenFile(ws.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return workspace.DaemonInfo{}, err
	}
	defer logFile.Close()
	logStart, _ := logFile.Seek(0, io.SeekEnd)
	cmd := exec.Command(self, "up", "--workspace", ws.Root, "--log-level", logLevel)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return workspace.DaemonInfo{}, fmt.Errorf("start daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The daemon says what it is doing while it starts (loading a large
	// index takes seconds); the wait lasts while it keeps saying something
	// new, and the user sees it once the wait is noticeable.
	const stall = 60 * time.Second
	started := time.Now()
	deadline := time.NewTimer(stall)
	defer deadline.Stop()
	said := ""
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			// Lost a race with another starter? Then its daemon serves.
			if info, rerr := ws.ReadDaemonInfo(); rerr == nil {
				return info, nil
			}
			// It lost the lock to a daemon still starting (a session
			// hook's, another agent's): Claude Code starts its hooks and
			// MCP servers at once. Wait for that one.
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == lockExitCode {
				fmt.Fprintf(os.Stderr, "cue: another process (pid %d) is starting this workspace's daemon; waiting for it\n", ws.LockHolder())
				exited = nil
				continue
			}
			if why := lastCueError(ws.LogPath(), logStart); why != "" {
				return workspace.DaemonInfo{}, fmt.Errorf("daemon exited during start: %s (log: %s)", why, ws.LogPath())
			}
			return workspace.DaemonInfo{}, fmt.Errorf("daemon exited during start (%v); see %s", err, ws.LogPath())
		case <-deadline.C:
			return workspace.DaemonInfo{}, fmt.Errorf("the daemon made no progress in %s while starting (last: %q); see %s", stall, said, ws.LogPath())
		case <-tick.C:
			info, err := ws.ReadDaemonInfo()
			if err == nil {
				return info, nil
			}
			if !errors.Is(err, workspace.ErrNoDaemon) {
				return workspace.DaemonInfo{}, err
			}
			if line := ws.ReadStarting(); line != "" && line != said {
				said = line
				deadline.Reset(stall)
				if time.Since(started) > time.Second {
					fmt.Fprintf(os.Stderr, "cue: starting the daemon: %s\n", line)
				}
			}
		}
	}
}

// lastCueError is the last error the daemon wrote to the log at path after
// offset ("cue: …", without the prefix), or "" if it wrote none: what made
// it exit is then said where the user looks, not only in the log.
func lastCueError(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return ""
	}
	why := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "cue: "); ok {
			why = rest
		}
	}
	return why
}
