package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

func cmdStatus(args []string) error {
	fs, c := newFlags("status")
	asJSON := fs.Bool("json", false, "print the whole report as JSON")
	verbose := fs.Bool("verbose", false, "list every skipped file, warning and undecodable record")
	window := fs.Duration("rate-window", 2*time.Second, "while files or vectors are pending, watch the workers this long for rates and ETAs (0: don't)")
	natsURL := fs.String("nats", "", "read a NATS cluster instead of this workspace's daemon")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	var info workspace.DaemonInfo
	url := *natsURL
	if url == "" {
		info, err = ws.ReadDaemonInfo()
		if err != nil {
			return err
		}
		url = info.NATSURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, url, bus.ConnectOptions{Name: "cue-status"})
	if err != nil {
		return err
	}
	defer conn.Close()
	// The backlog is reported for the model this workspace embeds with; a
	// config that does not load leaves status to name the model it finds.
	if *window < 0 {
		return fmt.Errorf("--rate-window %s: use 0 (no rates) or a positive duration such as 2s", *window)
	}
	opts := status.Options{RateWindow: *window, CountLeftOut: true}
	if cfg, err := ws.LoadConfig(); err == nil {
		opts.EmbedModel, _ = provider.ModelID(cfg.Embed.Model)
	}
	rep, err := status.CollectWith(ctx, conn.JS, opts)
	if err != nil {
		return err
	}
	prefix := info.QueryPrefix
	if *natsURL != "" {
		prefix = query.DefaultPrefix
	}
	compareEdge(ctx, conn, prefix, &rep)
	if *natsURL == "" {
		compareFiles(ctx, conn, ws, info.Repo, &rep)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Daemon *workspace.DaemonInfo `json:"daemon,omitempty"`
			status.Report
		}{daemonOrNil(info), rep})
	}
	if info.PID != 0 {
		fmt.Printf("daemon pid %d since %s, NATS %s", info.PID, info.StartedAt.Local().Format(time.DateTime), info.NATSURL)
		if info.MCPURL != "" {
			fmt.Printf(", MCP %s", info.MCPURL)
		}
		fmt.Println()
	}
	rep.Print(os.Stdout, status.PrintOptions{Verbose: *verbose})
	if rep.Edge != nil && len(rep.Edge.Disagreeing()) > 0 {
		return errors.New("the edge does not serve what cue_docs holds; see the remedy above")
	}
	if rep.FileCheck != nil && !rep.FileCheck.Agrees() {
		return errors.New("cue_docs does not hold what the files hold; see the remedy above")
	}
	return nil
}

// compareFiles compares the workspace's own repo's files with the
// documents cue_docs holds, once indexing has caught up (before, the
// differences are the work still queued).
func compareFiles(ctx context.Context, conn *bus.Conn, ws *workspace.Workspace, repo string, rep *status.Report) {
	switch {
	case repo == "":
		return
	case rep.Files != nil && (rep.Files.Pending > 0 || rep.Files.Scanning || rep.Files.Listing):
		rep.FileCheckSkipped = "indexing is under way; run again once it has caught up"
		return
	}
	a, err := status.CompareFiles(ctx, conn.JS, repo, os.DirFS(ws.Root))
	if err != nil {
		rep.FileCheckSkipped = err.Error()
		return
	}
	rep.FileCheck = &a
}

// compareEdge asks the edge at prefix what it serves and sets rep's
// comparison of it with cue_docs, or says why it could not.
func compareEdge(ctx context.Context, conn *bus.Conn, prefix string, rep *status.Report) {
	if prefix == "" {
		return
	}
	a, err := status.CompareServingEdge(ctx, conn, prefix, *rep)
	if err != nil {
		rep.EdgeUnreached = err.Error()
		return
	}
	rep.Edge = &a
}

func daemonOrNil(info workspace.DaemonInfo) *workspace.DaemonInfo {
	if info.PID == 0 {
		return nil
	}
	return &info
}

func cmdDown(args []string) error {
	fs, c := newFlags("down")
	timeout := fs.Duration("timeout", 60*time.Second, "how long to wait for a clean stop")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	pid := ws.LockHolder()
	if pid == 0 {
		fmt.Println("No CueDeck daemon runs for", ws.Root)
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal daemon pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(*timeout)
	for ws.LockHolder() == pid {
		if time.Now().After(deadline) {
			return fmt.Errorf("daemon pid %d still running after %s; see %s", pid, *timeout, ws.LogPath())
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Printf("Stopped the CueDeck daemon (pid %d).\n", pid)
	return nil
}
