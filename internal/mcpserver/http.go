package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/access"
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
	// SessionTimeout closes stateful sessions idle this long; zero means
	// DefaultSessionTimeout, negative keeps them until the client ends
	// them.
	SessionTimeout time.Duration
	// BodyReadTimeout bounds reading one request body; zero means the
	// default, BodyReadTimeout.
	BodyReadTimeout time.Duration
	// Logger receives the transport's logs; nil discards them.
	Logger *slog.Logger
	// Tokens, when it holds any, must authenticate every request; each
	// call then runs with the token's identity and repos.
	Tokens *access.Tokens
	// AllowedOrigins are browser origins admitted besides the server's
	// own; any other Origin gets 403.
	AllowedOrigins []string
	// MaxInFlight bounds the POSTs (the calls) being served at once;
	// beyond it a request gets 503 with Retry-After. Zero means
	// DefaultMaxInFlight. Event streams (GET) are not counted.
	MaxInFlight int
	// MaxSessions bounds the stateful sessions open at once; a request
	// that would open another gets 503 with Retry-After. Zero means
	// DefaultMaxSessions.
	MaxSessions int
}

// DefaultMaxSessions is the bound on stateful sessions open at once: each
// holds a little memory and a goroutine until its client ends it or it
// idles out (SessionTimeout), so clients that open sessions and walk away
// must not pile them up without bound.
const DefaultMaxSessions = 1024

// DefaultMaxInFlight is the bound on POSTs served at once: far above what
// a team's agents send, far below what exhausts memory.
const DefaultMaxInFlight = 256

// HTTPHandler serves server over Streamable HTTP at any path it is mounted
// on, behind an access.HTTPGuard (Origin check, bearer tokens when
// configured). The SDK's DNS-rebinding protection stays on: a request that
// reaches a loopback address with a non-loopback Host header gets 403.
func HTTPHandler(server *mcp.Server, opts HTTPOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	guard := access.HTTPOptions{Tokens: opts.Tokens, AllowedOrigins: opts.AllowedOrigins, Logger: opts.Logger}
	return access.HTTPGuard(limitInFlight(limitSessions(server, limitBody(mcpHandler(server, opts), opts), opts), opts), guard)
}

// limitSessions answers 503, with Retry-After and a log line, a POST that
// would open a stateful session (it names none) while opts.MaxSessions are
// open.
func limitSessions(server *mcp.Server, h http.Handler, opts HTTPOptions) http.Handler {
	if opts.Stateless {
		return h
	}
	n := opts.MaxSessions
	if n <= 0 {
		n = DefaultMaxSessions
	}
	timeout := opts.SessionTimeout
	if timeout == 0 {
		timeout = DefaultSessionTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Requests opening sessions at the same moment may each pass the
	// count: the bound can be passed by as many as arrive together (at
	// most MaxInFlight), never grow without end.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			h.ServeHTTP(w, r)
			return
		}
		open := 0
		for range server.Sessions() {
			open++
		}
		if open >= n {
			log.Warn("http request refused", "reason", "too many sessions", "status", http.StatusServiceUnavailable, "limit", n, "remote", r.RemoteAddr)
			access.CloseAfterRefusal(w)
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("Service Unavailable: %d sessions are open, the most this server keeps; end sessions no longer used (DELETE with their Mcp-Session-Id), or wait for idle ones to close (after %s)", n, timeout), http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// limitInFlight answers 503, with Retry-After and a log line, a POST that
// arrives while opts.MaxInFlight are being served, instead of letting
// requests pile up without bound.
func limitInFlight(h http.Handler, opts HTTPOptions) http.Handler {
	n := opts.MaxInFlight
	if n <= 0 {
		n = DefaultMaxInFlight
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		default:
			log.Warn("http request refused", "reason", "too many requests in flight", "status", http.StatusServiceUnavailable, "limit", n, "remote", r.RemoteAddr)
			access.CloseAfterRefusal(w)
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("Service Unavailable: %d requests are being served, the most this server takes at once; retry in a second", n), http.StatusServiceUnavailable)
		}
	})
}

// limitBody refuses, with 413 and a log line, a request whose declared
// length is over the limit, before anything reads it; a body that only
// turns out too long while read (chunked) is cut off by the SDK's own
// limit.
func limitBody(h http.Handler, opts HTTPOptions) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > opts.MaxBodyBytes {
			log.Warn("http request refused", "reason", "body too large", "status", http.StatusRequestEntityTooLarge,
				"bytes", r.ContentLength, "limit", opts.MaxBodyBytes, "remote", r.RemoteAddr, "path", r.URL.Path)
			access.CloseAfterRefusal(w)
			http.Error(w, fmt.Sprintf("Request Entity Too Large: at most %d bytes", opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func mcpHandler(server *mcp.Server, opts HTTPOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		Stateless:           opts.Stateless,
		JSONResponse:        opts.JSONResponse,
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		SessionTimeout:      opts.SessionTimeout,
		Logger:              opts.Logger,
	})
	if opts.BodyReadTimeout <= 0 {
		opts.BodyReadTimeout = BodyReadTimeout
	}
	return readBody(h, !opts.Stateless, opts.MaxBodyBytes, opts.BodyReadTimeout)
}

// DefaultSessionTimeout closes a stateful session idle this long: a client
// that went away without ending its session leaves nothing behind.
const DefaultSessionTimeout = 30 * time.Minute

// BodyReadTimeout bounds reading one request body: a client that sends
// it slowly, or not at all, does not hold a connection for longer.
const BodyReadTimeout = 10 * time.Second

// readBody reads a POST's body within timeout and refuses a
// JSON-RPC batch with -32600, as stdio does (MCP has had no batching since
// 2025-06-18; the SDK would answer a batch of any size); on a stateful
// handler it also answers server/discover (refuseDiscover).
func readBody(h http.Handler, stateful bool, maxBody int64, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		r.Body.Close()
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batches are not supported (MCP has no JSON-RPC batching since 2025-06-18): send one message per request"}}` + "\n"))
			return
		}
		if stateful && refuseDiscover(w, body) {
			return
		}
		// The SDK enforces the body limit on what is passed on.
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// refuseDiscover answers server/discover on a stateful handler as a server
// from before protocol 2026-07-28 would, with the legacy versions it
// speaks, so that every client falls back to the initialize handshake; it
// reports whether body was that request.
//
// The SDK answers discover on a stateful handler with the legacy versions
// but then rejects 2026-07-28 requests; mcp-go v1.2.1 ignores the list,
// settles on 2026-07-28 and fails on its first call.
func refuseDiscover(w http.ResponseWriter, body []byte) bool {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.Method == "server/discover" && len(msg.ID) > 0 {
		writeUnsupportedVersion(w, msg.ID)
		return true
	}
	return false
}

func writeUnsupportedVersion(w http.ResponseWriter, id json.RawMessage) {
	legacy := slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })
	data, _ := json.Marshal(map[string]any{"supported": legacy})
	resp, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error": map[string]any{
			"code":    mcp.CodeUnsupportedProtocolVersion,
			"message": "server/discover needs a stateless server; use initialize",
			"data":    json.RawMessage(data),
		},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Write(resp)
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
// requests finish for a few seconds and returns nil, or an error wrapping
// context.DeadlineExceeded if some did not. A failure to bind or serve is
// returned as is.
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
	return ServeListener(ctx, ln, h)
}

// ServeListener serves h on ln until ctx is cancelled, then shuts down as
// ListenAndServe does. It closes ln. Callers that must know the address
// before serving (to advertise it) bind first and call this.
func ServeListener(ctx context.Context, ln net.Listener, h http.Handler) error {
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
	err := srv.Shutdown(sctx)
	if err != nil {
		// Requests outlived the grace period: cut them off.
		srv.Close()
		err = fmt.Errorf("mcpserver: graceful shutdown: %w", err)
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
