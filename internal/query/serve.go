package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// ServiceName and QueueGroup name the micro service every edge runs; the
// edges of one prefix share its calls.
const (
	ServiceName = "cue-query"
	QueueGroup  = "cue-query"
)

// Options configure Serve. The zero value is usable.
type Options struct {
	// Prefix of the tool subjects; DefaultPrefix when empty.
	Prefix string
	// Version is the service's semantic version in micro's info; "0.0.0"
	// when empty.
	Version string
	// MaxConcurrent bounds the calls running at once; 64 when zero. Further
	// requests wait in the subscription's queue.
	MaxConcurrent int
	// CallTimeout bounds one call on this side; 30 s when zero. A client
	// gives up sooner with its own timeout.
	CallTimeout time.Duration
	// Logger receives failures and refused calls; nil discards them.
	Logger *slog.Logger
	// Tokens, when it holds any, must authenticate every call (header
	// Authorization: Bearer); the call then runs with the token's
	// identity and repos. Without tokens every call may read every repo:
	// NATS permissions decide who may publish to the tool subjects.
	Tokens *access.Tokens
	// Ready, if set, is called once the endpoints are subscribed at the
	// server, so that calls from any connection reach them.
	Ready func()
	// Docs, if set, answers EdgeDocsEndpoint: what the edge holds of
	// cue_docs, for `cue status` and `cue doctor` to compare with the
	// bucket. Tokens apply as to the tools; a token sees its repos only.
	Docs func() events.EdgeDocs
}

func (o *Options) setDefaults() {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Version == "" {
		o.Version = "0.0.0"
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 64
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// errShuttingDown answers the few requests that reach a service after it
// has stopped taking work; another edge of the queue group may answer a
// retry.
var errShuttingDown = &tools.Error{
	Code:    tools.CodeInternal,
	Message: "Edge shutting down",
	Data:    map[string]any{"suggestion": "Retry: another edge may answer."},
}

// Serve answers the calls of every tool in tools.Definitions, and of
// tools.ListMemories, with caller,
// as the micro service ServiceName in queue group QueueGroup, one endpoint
// per tool on subject <prefix>.<tool>. It blocks until ctx is cancelled,
// then stops the service, lets the calls in flight finish and returns nil.
// It returns an error if the prefix is invalid or the service cannot be
// added.
func Serve(ctx context.Context, nc *nats.Conn, caller tools.Caller, opts Options) error {
	opts.setDefaults()
	if err := validPrefix(opts.Prefix); err != nil {
		return err
	}
	if opts.Docs != nil {
		caller = docsCaller{Caller: caller, docs: opts.Docs}
	}
	s := &server{nc: nc, caller: caller, opts: opts, calls: make(chan func())}
	// Calls in flight at shutdown finish; they are bounded by CallTimeout.
	s.callCtx = context.WithoutCancel(ctx)
	for range opts.MaxConcurrent {
		go s.work()
	}
	// Also on the returns below that fail before serving.
	defer s.close()

	svc, err := micro.AddService(nc, micro.Config{
		Name:        ServiceName,
		Version:     opts.Version,
		Description: "CueDeck tool calls",
		QueueGroup:  QueueGroup,
		Metadata:    map[string]string{"prefix": opts.Prefix},
	})
	if err != nil {
		return err
	}
	// list_memories is no MCP tool but `cue memories` lists through it.
	names := []string{tools.ListMemories}
	for _, d := range tools.Definitions() {
		names = append(names, d.Name)
	}
	if opts.Docs != nil {
		names = append(names, EdgeDocsEndpoint)
	}
	for _, name := range names {
		err := svc.AddEndpoint(name, s.handler(name), micro.WithEndpointSubject(Subject(opts.Prefix, name)))
		if err != nil {
			svc.Stop()
			return err
		}
	}

	// Calls from other connections find the endpoints only once the
	// server has processed the subscriptions.
	if err := flushSubscriptions(ctx, nc); err != nil {
		svc.Stop()
		return err
	}
	if opts.Ready != nil && ctx.Err() == nil {
		opts.Ready()
	}

	<-ctx.Done()
	// Shut down in order: stop routing new calls here, make sure the
	// server has seen the unsubscribe (calls routed before it are already
	// queued locally), then wait for the calls in flight.
	if err := svc.Stop(); err != nil {
		opts.Logger.Warn("query: stop service", "error", err)
	}
	// Cut off from its server, the connection can have no calls routed
	// here, and a flush would only wait out its timeout (10 s) for a PONG
	// that cannot come, holding up the process's shutdown.
	if nc.IsConnected() {
		if err := nc.FlushTimeout(stopFlushTimeout); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			opts.Logger.Warn("query: flush after stop", "error", err)
		}
	}
	s.close()
	return nil
}

// flushSubscriptions returns once the server has processed what nc sent
// so far. A connection that drops meanwhile (the server restarting in
// place as the edge starts) fails the flush, as if closed, though it
// reconnects and sends every subscription again: flush again once it is
// back, rather than give up serving. It fails when nc is closed for good
// or ctx ends.
func flushSubscriptions(ctx context.Context, nc *nats.Conn) error {
	pause := 50 * time.Millisecond
	for {
		err := nc.Flush()
		if err == nil || nc.IsClosed() {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// stopFlushTimeout bounds the wait for the server to confirm the
// unsubscribe at shutdown.
const stopFlushTimeout = 2 * time.Second

type server struct {
	nc      *nats.Conn
	caller  tools.Caller
	opts    Options
	callCtx context.Context
	// calls hands each call to one of MaxConcurrent workers, waiting
	// while all are busy. A worker outlives its calls so that its stack
	// does too: a goroutine per call started with the smallest stack and
	// was copied, each call, as it grew to what argument validation
	// (jsonschema's recursion) needs — 4-5 % of the daemon's CPU with 64
	// agents writing tasks.
	calls chan func()

	mu        sync.Mutex
	closed    bool
	running   sync.WaitGroup
	closeOnce sync.Once
}

// work runs calls until the server closes.
func (s *server) work() {
	for call := range s.calls {
		call()
	}
}

// begin counts a call in, unless the server has closed.
func (s *server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.running.Add(1)
	return true
}

// close refuses new calls, waits for those running and stops the
// workers. Calling it again does nothing.
func (s *server) close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.running.Wait()
		close(s.calls)
	})
}

func (s *server) handler(tool string) micro.HandlerFunc {
	return func(req micro.Request) {
		if !s.begin() {
			s.respond(req, tool, nil, errShuttingDown)
			return
		}
		// Waiting for a worker here holds up this endpoint's
		// subscription: backpressure instead of unbounded goroutines.
		s.calls <- func() {
			defer s.running.Done()
			id, err := s.identify(req.Headers())
			if err != nil {
				s.opts.Logger.Warn("query: call refused", "tool", tool, "reason", err.Error())
				s.respond(req, tool, nil, unauthorized(err))
				return
			}
			ctx, cancel := context.WithTimeout(access.WithIdentity(s.callCtx, id), s.opts.CallTimeout)
			defer cancel()
			ctx, notices := tools.WithNotices(ctx)
			out, err := s.caller.Call(ctx, tool, json.RawMessage(req.Data()))
			s.respondNoting(req, tool, out, notices.Texts(), err)
		}
	}
}

// identify is the caller of a request with headers h: the token's
// identity when the service requires tokens, else the client it names.
func (s *server) identify(h micro.Headers) (access.Identity, error) {
	client := nats.Header(h).Get(ClientHeader)
	if client == "" {
		client = "nats"
	}
	if !s.opts.Tokens.Enabled() {
		return access.Identity{Client: "nats:" + client}, nil
	}
	id, err := s.opts.Tokens.Authenticate(access.BearerSecret(nats.Header(h).Get(AuthHeader)))
	if err != nil {
		return access.Identity{}, err
	}
	// One token may serve several agents: each keeps its own limits.
	id.Client += "/" + client
	return id, nil
}

// unauthorized is the error of a call without a valid token. It uses HTTP's
// 401 as its code, as the 429 of rate limits does.
func unauthorized(err error) *tools.Error {
	msg := "Unauthorized: no bearer token"
	if errors.Is(err, access.ErrBadToken) {
		msg = "Unauthorized: the bearer token matches none configured"
	}
	return &tools.Error{Code: tools.CodeUnauthorized, Message: msg, Data: map[string]any{
		"suggestion": "Set the team token for this edge (config [query] token, or CUE_TOKEN)"}}
}

// respond publishes the reply itself rather than through micro.Request:
// micro reads the request's state when the handler returns, which races
// with an answer sent later from the call's goroutine. (So micro's stats
// count requests, not their errors or processing time.)
func (s *server) respond(req micro.Request, tool string, out json.RawMessage, err error) {
	s.respondNoting(req, tool, out, nil, err)
}

// respondNoting is respond with the call's notices beside a result.
func (s *server) respondNoting(req micro.Request, tool string, out json.RawMessage, notices []string, err error) {
	msg := &nats.Msg{Subject: req.Reply()}
	if err == nil {
		if len(out) == 0 {
			out = json.RawMessage("null")
		}
		msg.Data, err = json.Marshal(reply{Result: out, Notices: notices})
	}
	if err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			s.opts.Logger.Error("query: tool call failed", "tool", tool, "error", err)
			te = tools.Internal(err)
		}
		body, merr := json.Marshal(reply{Error: te})
		if merr != nil {
			// Data that does not encode: keep code and message.
			body, _ = json.Marshal(reply{Error: &tools.Error{Code: te.Code, Message: te.Message}})
		}
		// The micro error headers tell NATS tooling the call failed; the
		// body carries the error for the client.
		msg.Header = nats.Header{
			micro.ErrorHeader:     []string{te.Message},
			micro.ErrorCodeHeader: []string{strconv.Itoa(te.Code)},
		}
		msg.Data = body
	}
	if msg.Subject == "" {
		return // a publish, not a request: nobody to answer
	}
	if perr := s.nc.PublishMsg(msg); perr != nil {
		s.opts.Logger.Warn("query: respond", "tool", tool, "error", perr)
	}
}

// EdgeDocsEndpoint is the endpoint, beside the tools, that answers with
// the serving edge's events.EdgeDocs. No tool has its name.
const EdgeDocsEndpoint = "edge_docs"

// docsCaller answers EdgeDocsEndpoint from docs and every tool with the
// Caller.
type docsCaller struct {
	tools.Caller
	docs func() events.EdgeDocs
}

func (c docsCaller) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if tool != EdgeDocsEndpoint {
		return c.Caller.Call(ctx, tool, args)
	}
	held := c.docs()
	id := access.FromContext(ctx)
	for repo := range held.Repos {
		if !id.MayRead(repo) {
			delete(held.Repos, repo)
		}
	}
	return json.Marshal(held)
}

// AskEdgeDocs asks an edge serving c's prefix what it holds of cue_docs.
// Edges started before the endpoint existed answer with ErrNoEdge.
func AskEdgeDocs(ctx context.Context, c *Client) (events.EdgeDocs, error) {
	var held events.EdgeDocs
	out, err := c.Call(ctx, EdgeDocsEndpoint, nil)
	if err != nil {
		return held, err
	}
	if err := json.Unmarshal(out, &held); err != nil {
		return held, fmt.Errorf("query %s: malformed answer: %w", EdgeDocsEndpoint, err)
	}
	return held, nil
}
