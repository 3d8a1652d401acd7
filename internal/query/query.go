// Package query carries tool calls over NATS request/reply, so that
// `cue mcp` on a laptop can answer from an edge in another process: the
// workspace daemon, or a remote edge reached through a leaf node. Serve
// exposes a tools.Caller as the micro service "cue-query"; Client is a
// tools.Caller that asks it. A *tools.Error crosses the wire intact.
//
// The wire format: a request's body is the tool's JSON arguments, sent to
// <prefix>.<tool>, with headers Cue-Client (who calls, for rate limits)
// and, for edges that require tokens, Authorization: Bearer <token>; the
// reply is {"result": <json>} or {"error": {"code", "message", "data"}};
// a result may come with "notices": the call's tools.Notify texts, such as
// how far indexing got, which older clients ignore.
package query

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cuedeck/cuedeck/internal/tools"
)

// DefaultPrefix is the subject prefix of tool calls. A workspace isolates
// its edges from others on the same NATS system with WorkspacePrefix.
const DefaultPrefix = "cue.query"

// WorkspacePrefix is the subject prefix for one workspace's edges:
// cue.query.<id>.<tool>.
func WorkspacePrefix(id string) string { return DefaultPrefix + "." + id }

// Subject is the subject a tool's calls are sent to.
func Subject(prefix, tool string) string { return prefix + "." + tool }

// validPrefix rejects prefixes that would make subjects with wildcards,
// spaces or empty tokens.
func validPrefix(prefix string) error {
	for tok := range strings.SplitSeq(prefix, ".") {
		if tok == "" || strings.ContainsAny(tok, "*> \t\r\n") {
			return fmt.Errorf("query: invalid subject prefix %q", prefix)
		}
	}
	return nil
}

// Request headers: the calling client, for rate limits, and a bearer
// token, for edges that require one.
const (
	ClientHeader = "Cue-Client"
	AuthHeader   = "Authorization"
)

// reply is the body of every answer.
type reply struct {
	Result  json.RawMessage `json:"result,omitempty"`
	Notices []string        `json:"notices,omitempty"`
	Error   *tools.Error    `json:"error,omitempty"`
}
