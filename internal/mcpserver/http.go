package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxBodyBytes bounds a request body. Tool arguments are small (a
// query of at most 200 characters, a path): a megabyte is generous.
const DefaultMaxBodyBytes = 1 << 20

// HTTPOptions configure HTTPHandler. The zero value is a stateful handler
// with DefaultMaxBodyBytes.
type HTTPOptions struct {
	// Stateless answers every request on its own, without Mcp-Session-Id:
	// any number of replicas can serve a client, but the server cannot
	// call back into it.
	Stateless bool
	// JSONResponse answers POSTs with application/json instead of an SSE
	// stream.
	JSONResponse bool
	// MaxBodyBytes bounds a request body; larger ones get 413. Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionTimeout closes stateful sessions idle this long; zero keeps
	// them until the client ends them.
	SessionTimeout time.Duration
	// Logger receives the transport's logs; nil discards them.
	Logger *slog.Logger
}

// HTTPHandler serves server over Streamable HTTP at any path it is mounted
// on. The SDK's DNS-rebinding protection stays on: a request that reaches
// a loopback address with a non-loopback Host header gets 403.
func HTTPHandler(server *mcp.Server, opts HTTPOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:           opts.Stateless,
		JSONResponse:        opts.JSONResponse,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		SessionTimeout:      opts.SessionTimeout,
		Logger:              opts.Logger,
	})
}

// DefaultAddr is where ListenAndServe binds when given no address: loopback
// only, on a port the kernel picks.
const DefaultAddr = "127.0.0.1:0"

// shutdownGrace bounds how long in-flight requests may take to finish once
// ListenAndServe's context is cancelled.
const shutdownGrace = 5 * time.Second

// ListenAndServe binds addr (DefaultAddr when empty), calls bound with the
// address it got (if bound is not nil) and serves h until ctx is cancelled.
// Then it stops accepting, ends open event streams (GET), lets in-flight
// requests finish for a few seconds and returns nil. A failure to bind or
// serve is returned as is.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, bound func(net.Addr)) error {
	if addr == "" {
		addr = DefaultAddr
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	if bound != nil {
		bound(ln.Addr())
	}

	// Event streams last as long as their session; they are ended at
	// shutdown so that they don't hold it up for the whole grace period.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           endOnShutdown(streams, h),
		ReadHeaderTimeout: 10 * time.Second,
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	endStreams()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if err != nil {
		err = srv.Close()
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// endOnShutdown cancels GET requests (the standalone event streams) when
// streams is cancelled; other requests keep their own context so they can
// finish during a graceful shutdown.
func endOnShutdown(streams context.Context, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(streams, cancel)
		defer stop()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
