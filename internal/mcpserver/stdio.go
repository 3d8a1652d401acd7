package mcpserver

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client on the process's stdin and stdout, the way
// an agent runs `cue mcp`. Stdout carries only protocol messages: the
// server's logger must write elsewhere (stderr). It returns nil when the
// client closes stdin or ctx is cancelled, and the session's error
// otherwise.
func ServeStdio(ctx context.Context, server *mcp.Server) error {
	return Serve(ctx, server, &mcp.StdioTransport{})
}

// Serve serves one client session on t until the client disconnects or ctx
// is cancelled, with ServeStdio's results. Tests and embedders use it with
// mcp.IOTransport or mcp.InMemoryTransport.
func Serve(ctx context.Context, server *mcp.Server, t mcp.Transport) error {
	err := server.Run(ctx, t)
	switch {
	case err == nil, ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil
	}
	return err
}
