// Package mcpserver exposes any tools.Caller to agents over the Model
// Context Protocol, on stdio (`cue mcp` launched by an agent) or Streamable
// HTTP. It owns only the protocol: which tools exist and what they do is the
// Caller's business, so the same server fronts an in-process edge or a
// query.Client that asks a remote one.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/version"
)

// Options configure New. The zero value is usable.
type Options struct {
	// Name and Version are what the server tells clients it is; they
	// default to "cuedeck" and this build's version.Label ("v1.2.3", or
	// "dev+<commit>" for a dev build).
	Name    string
	Version string
	// Logger receives the server's logs; nil discards them. On stdio it
	// must not write to stdout, which carries the protocol.
	Logger *slog.Logger
	// Client names the client of calls that arrive with no token and no
	// session (stdio, stateless HTTP) for rate limits; "local" when empty.
	Client string
}

func (o *Options) setDefaults() {
	if o.Name == "" {
		o.Name = "cuedeck"
	}
	if o.Version == "" {
		o.Version = version.Label()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Client == "" {
		o.Client = access.LocalClient
	}
}

// New returns an MCP server offering every tool of tools.Definitions, each
// answered by caller. Arguments reach the caller as the client sent them;
// validating them is the caller's job, as it is for every other transport.
//
// A result that is a JSON object is sent both as text and as structured
// content; any other result (read_context's array) only as text, which
// every client understands. The call's notices (tools.Notify), such as
// how far indexing got, follow the result as further text blocks. A *tools.Error from the caller reaches the
// client as a JSON-RPC error with the same code, message and data; any
// other error as an internal error (-32603) carrying the error's text.
//
// Each call's context carries an access.Identity: the token's, when an
// access.HTTPGuard authenticated the request; else a client named by the
// MCP session, or opts.Client, with every repo readable.
func New(caller tools.Caller, opts Options) *mcp.Server {
	opts.setDefaults()
	s := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, &mcp.ServerOptions{
		Logger: opts.Logger,
		// The tool set is fixed for the server's life: no list_changed
		// notifications, and no logging capability we don't serve.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	for _, d := range tools.Definitions() {
		s.AddTool(&mcp.Tool{
			Name:        d.Name,
			Description: d.Description,
			InputSchema: d.InputSchema,
		}, handler(caller, d.Name, opts))
	}
	return s
}

// MaxArgumentBytes bounds one call's arguments, whatever the transport:
// the largest (a conversation for prune_conversation) fit well within it,
// and the embedded NATS server carries 8 MiB.
const MaxArgumentBytes = 4 << 20

func handler(caller tools.Caller, tool string, opts Options) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if n := len(req.Params.Arguments); n > MaxArgumentBytes {
			return nil, wireError(tool, &tools.Error{Code: tools.CodeInvalidParams,
				Message: fmt.Sprintf("Invalid params: the arguments are %d bytes; at most %d", n, MaxArgumentBytes),
				Data:    map[string]any{"bytes": n, "limit": MaxArgumentBytes}}, opts.Logger)
		}
		ctx, notices := tools.WithNotices(ctx)
		out, err := caller.Call(access.WithIdentity(ctx, identity(req, opts.Client)), tool, req.Params.Arguments)
		if err != nil {
			return nil, wireError(tool, err, opts.Logger)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}
		if isObject(out) {
			res.StructuredContent = json.RawMessage(out)
		}
		// After the result, so that clients reading the first block find
		// the result as they always did.
		for _, text := range notices.Texts() {
			res.Content = append(res.Content, &mcp.TextContent{Text: text})
		}
		return res, nil
	}
}

// identity is who sent req: the token's identity, else the session's
// client (one agent per session), else the transport's.
func identity(req *mcp.CallToolRequest, client string) access.Identity {
	session := ""
	if req.Session != nil {
		session = req.Session.ID()
	}
	if req.Extra != nil {
		if id, ok := access.IdentityOf(req.Extra.TokenInfo); ok {
			id.Session = session
			return id
		}
	}
	if session != "" {
		return access.Identity{Client: "session:" + session, Session: session}
	}
	return access.Identity{Client: client}
}

// wireError turns a caller's error into the JSON-RPC error the SDK sends
// unchanged. The SDK would send any other error with code 0, so internal
// failures are given -32603 here.
func wireError(tool string, err error, log *slog.Logger) *jsonrpc.Error {
	// Whatever the caller is (an edge guards its own errors, a remote one
	// may be older), nothing leaves unguarded.
	err = tools.RedactError(err)
	var te *tools.Error
	if errors.As(err, &te) {
		// An error quotes at most a short prefix of what it was sent: a
		// 900 KB argument refused for its length is not echoed back.
		we := &jsonrpc.Error{Code: int64(te.Code), Message: shorten(te.Message, maxEchoBytes)}
		if len(te.Data) > 0 {
			data, merr := json.Marshal(shortenValues(te.Data))
			if merr == nil {
				we.Data = data
			} else {
				log.Error("tool error data not encodable", "tool", tool, "error", merr)
			}
		}
		return we
	}
	log.Error("tool call failed", "tool", tool, "error", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: tools.Internal(err).Message}
}

// isObject reports whether raw JSON is an object, skipping leading space.
func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// maxEchoBytes bounds each string an error carries back to the client.
const maxEchoBytes = 512

// shorten cuts s to at most limit bytes (on a rune boundary) and says how
// long it was.
func shorten(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

// shortenValues is data with every string in it shortened.
func shortenValues(data map[string]any) map[string]any {
	out := make(map[string]any, len(data))
	for k, v := range data {
		out[k] = shortenValue(v)
	}
	return out
}

func shortenValue(v any) any {
	switch v := v.(type) {
	case string:
		return shorten(v, maxEchoBytes)
	case map[string]any:
		return shortenValues(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = shortenValue(e)
		}
		return out
	case []string:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = shorten(e, maxEchoBytes)
		}
		return out
	}
	return v
}
