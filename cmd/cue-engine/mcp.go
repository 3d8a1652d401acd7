package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/daemon"
	"github.com/cuedeck/cuedeck/internal/mcpserver"
)

// cmdMCP serves MCP over stdio for one agent. The tools run in the
// workspace's daemon, reached over NATS request/reply, so any number of
// agents share one index; the daemon is started in the background first if
// none runs. On a laptop joined to a team as a leaf node, the team's edges
// answer, and the daemon when none does.
func cmdMCP(args []string) error {
	fs, c := newFlags("mcp")
	c.logLevel = envOr("CUE_LOG_LEVEL", "warn")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := c.logger()
	if err != nil {
		return err
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	info, err := startBackground(ws, "info")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, err := bus.Connect(cctx, info.NATSURL, bus.ConnectOptions{Name: "cue-mcp", Logger: log})
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close()
	cfg, err := ws.LoadConfig()
	if err != nil {
		return err
	}
	token := envOr("CUE_TOKEN", cfg.MCP.QueryToken)
	// On a laptop joined to a team: the team's edges first, the daemon
	// when none answers.
	caller, err := daemon.Caller(conn.NC, info, token, log)
	if err != nil {
		return err
	}
	// Each agent's process is its own client for the edge's rate limits.
	client := fmt.Sprintf("cue-mcp:%d", os.Getpid())
	return mcpserver.ServeStdio(ctx, mcpserver.New(caller, mcpserver.Options{Logger: log, Client: client}))
}
