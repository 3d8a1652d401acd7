package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// DefaultTimeout bounds a call whose context has no deadline.
const DefaultTimeout = 10 * time.Second

// ErrNoEdge is matched (errors.Is) by Call's error when no edge answers:
// none is subscribed (nats.ErrNoResponders) or none replied in time.
var ErrNoEdge = errors.New("query: no edge is serving")

// ClientOptions configure NewClient. The zero value is usable.
type ClientOptions struct {
	// Prefix of the tool subjects; DefaultPrefix when empty. It must match
	// the serving edges' Options.Prefix.
	Prefix string
	// Timeout bounds a call whose context has no deadline; DefaultTimeout
	// when zero.
	Timeout time.Duration
	// Token is sent as a bearer token with every call, for edges that
	// require one.
	Token string
}

// Client is a tools.Caller that asks the edges serving its prefix.
type Client struct {
	nc      *nats.Conn
	prefix  string
	timeout time.Duration
	token   string
}

// NewClient returns a Client sending calls over nc. It returns an error
// only for an invalid prefix.
func NewClient(nc *nats.Conn, opts ClientOptions) (*Client, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if err := validPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Client{nc: nc, prefix: opts.Prefix, timeout: opts.Timeout, token: opts.Token}, nil
}

// Call implements tools.Caller. A tool's failure is returned as the
// *tools.Error the edge sent. When no edge answers, the error is a
// *tools.Error (code -32603, with a suggestion) that also matches
// ErrNoEdge and the NATS cause with errors.Is. If ctx is cancelled, the
// error wraps ctx.Err(). The edge's notices reach ctx's collector
// (tools.Notify). The client of ctx's access.Identity travels with
// the call (header Cue-Client), so that the edge's rate limits count each
// agent apart.
func (c *Client) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	subject := Subject(c.prefix, tool)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	req := &nats.Msg{Subject: subject, Data: args, Header: nats.Header{}}
	req.Header.Set(ClientHeader, access.FromContext(ctx).Client)
	if c.token != "" {
		req.Header.Set(AuthHeader, "Bearer "+c.token)
	}
	msg, err := c.nc.RequestMsgWithContext(ctx, req)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, noEdge(subject, "No edge is serving", "Start the workspace daemon with `cue up`.", err)
	case errors.Is(err, nats.ErrMaxPayload):
		return nil, &tools.Error{Code: tools.CodeInvalidParams,
			Message: fmt.Sprintf("Invalid params: the arguments are %d bytes; the NATS server carries at most %d", len(args), c.nc.MaxPayload()),
			Data:    map[string]any{"bytes": len(args), "limit": c.nc.MaxPayload()}}
	case errors.Is(err, context.DeadlineExceeded):
		return nil, noEdge(subject, "No edge answered in time", "Check `cue status`; the edge may be busy or unreachable.", err)
	case err != nil:
		return nil, fmt.Errorf("query %s: %w", subject, err)
	}
	var r reply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		return nil, fmt.Errorf("query %s: malformed reply: %w", subject, err)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	if r.Result == nil {
		return nil, fmt.Errorf("query %s: reply has neither result nor error", subject)
	}
	for _, n := range r.Notices {
		tools.Notify(ctx, n)
	}
	return r.Result, nil
}

// noEdgeError is a *tools.Error for the agent that also keeps its causes
// for the program.
type noEdgeError struct {
	te    *tools.Error
	cause error
}

func noEdge(subject, message, suggestion string, cause error) error {
	te := &tools.Error{Code: tools.CodeInternal, Message: message, Data: map[string]any{"subject": subject, "suggestion": suggestion}}
	return &noEdgeError{te: te, cause: cause}
}

func (e *noEdgeError) Error() string   { return e.te.Error() }
func (e *noEdgeError) Unwrap() []error { return []error{e.te, ErrNoEdge, e.cause} }
