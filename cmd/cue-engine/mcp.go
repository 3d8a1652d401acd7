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
	"github.com/cuedeck/cuedeck/internal/workspace"
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
	cfg, err := ws.LoadConfig()
	if err != nil {
		return err
	}
	token := envOr("CUE_TOKEN", cfg.MCP.QueryToken)
	link := &daemonLink{
		ws: ws, log: log, wait: 2 * time.Second,
		start: func() (workspace.DaemonInfo, error) { return startBackground(ws, "info") },
		dial: func(ctx context.Context, info workspace.DaemonInfo) (*linkConn, error) {
			conn, err := bus.Connect(ctx, info.NATSURL, bus.ConnectOptions{Name: "cue-mcp", Logger: log})
			if err != nil {
				return nil, err
			}
			// On a laptop joined to a team: the team's edges first, the
			// daemon when none answers.
			caller, err := daemon.Caller(conn.NC, info, token, log)
			if err != nil {
				conn.Close()
				return nil, err
			}
			return newLinkConn(info, conn, caller), nil
		},
	}
	// The first daemon is found or started before serving, as ever: an
	// error here (a broken config, a disk too full) reaches the agent's
	// log at once.
	first, err := link.connectNew()
	if err != nil {
		return err
	}
	link.cur = first
	defer func() {
		if l := link.current(); l != nil {
			l.close()
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Each agent's process is its own client for the edge's rate limits.
	client := fmt.Sprintf("cue-mcp:%d", os.Getpid())
	return mcpserver.ServeStdio(ctx, mcpserver.New(link, mcpserver.Options{Logger: log, Client: client}))
}
