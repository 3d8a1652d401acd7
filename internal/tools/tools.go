// Package tools is the contract of the tools agents call: their names,
// descriptions and input schemas (seed 002), their argument and result types,
// and the Error they fail with. The edge implements the tools as a Caller;
// the MCP server and the NATS query service expose any Caller, so an agent
// sees the same tools whether the answer is computed in-process or by a
// remote edge.
package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cuedeck/cuedeck/pkg/core/delta"
)

// Caller runs one tool call. args is the JSON object of arguments; the
// result is the JSON the tool returns. A failure the caller should see is an
// *Error; any other error is an internal failure.
type Caller interface {
	Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)
}

// CallerFunc adapts a function to Caller.
type CallerFunc func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)

// Call implements Caller.
func (f CallerFunc) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	return f(ctx, tool, args)
}

// Tool names.
const (
	ReadContext = "read_context"
	ReadDoc     = "read_doc"
)

// Error codes of seed 002 §5 and JSON-RPC 2.0.
const (
	CodeFileNotFound  = 1001
	CodeCycle         = 1002
	CodeTokenLimit    = 1003
	CodeStaleCache    = 1006
	CodeLock          = 1007
	CodeRateLimit     = 429
	CodeUnauthorized  = 401
	CodeInvalidParams = -32602
	CodeMethodMissing = -32601
	CodeInternal      = -32603
)

// Error is a tool failure with a JSON-RPC code, a short message and data
// that tells the agent what to do next. The MCP server sends it as a
// JSON-RPC error, unchanged.
type Error struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if len(e.Data) == 0 {
		return fmt.Sprintf("%d %s", e.Code, e.Message)
	}
	data, _ := json.Marshal(e.Data)
	return fmt.Sprintf("%d %s: %s", e.Code, e.Message, data)
}

// InvalidParams is the error for arguments that break the tool's schema;
// detail says which rule, in words an agent can act on.
func InvalidParams(tool, detail string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid params", Data: map[string]any{"tool": tool, "detail": detail}}
}

// FileNotFound is error 1001. suggestion may be empty.
func FileNotFound(path, suggestion string) *Error {
	data := map[string]any{"path": path}
	if suggestion != "" {
		data["suggestion"] = fmt.Sprintf("Did you mean '%s'?", suggestion)
	}
	return &Error{Code: CodeFileNotFound, Message: "File Not Found", Data: data}
}

// ReadContextArgs are read_context's arguments (seed 002 §1).
type ReadContextArgs struct {
	Query    string   `json:"query"`
	Limit    int      `json:"limit,omitempty"`
	Mode     string   `json:"mode,omitempty"`
	Semantic *bool    `json:"semantic,omitempty"`
	Filters  *Filters `json:"filters,omitempty"`
}

// MaxContextLimit is read_context's largest limit (its schema's maximum).
const MaxContextLimit = 50

// Filters narrow read_context to documents whose frontmatter matches.
type Filters struct {
	Tags     []string `json:"tags,omitempty"`
	Priority string   `json:"priority,omitempty"`
	Assignee string   `json:"assignee,omitempty"`
}

// ContextHit is one read_context result: seed 002's path, hash, tokens and
// anchors (the top three headings), and what this project adds, all
// optional so seed 002 clients can ignore them.
type ContextHit struct {
	Path    string   `json:"path"`
	Repo    string   `json:"repo,omitempty"`
	Hash    string   `json:"hash"`
	Tokens  int      `json:"tokens"`
	Anchors []string `json:"anchors,omitempty"`
	// Score ranks the hits of one call; its scale depends on the mode
	// (BM25F for keyword, cosine for semantic, fused for hybrid and rrf).
	Score float64 `json:"score,omitempty"`
	// Section is the part of the file that matched best: the best chunk
	// by embedding, else the section with the most query words.
	Section *Section `json:"section,omitempty"`
	// Modes are the rankings that found the hit: "keyword", "semantic",
	// or "graph" for the structural route.
	Modes []string `json:"modes,omitempty"`
	// Fallback says why the requested mode was not used, when it was not
	// (e.g. no vectors yet): the hit then comes from keyword search.
	Fallback string `json:"fallback,omitempty"`
	// Relation says how a graph hit relates to the query's subject, e.g.
	// "imports github.com/x/auth" or "dependency of docs/api.md".
	Relation string `json:"relation,omitempty"`
	// Importance is the file's importance in its repo, in [0, 1] (seed 000
	// §5 strategy 3: references, recent changes, error stacks); absent when
	// 0. Among hits of nearly equal score the more important comes first.
	Importance float64 `json:"importance,omitempty"`
}

// Section is a part of a file: the heading it is under (a markdown heading,
// or a code chunk's declaration) and its lines.
type Section struct {
	Heading   string    `json:"heading,omitempty"`
	LineRange LineRange `json:"line_range"`
}

// Search modes of read_context. ModeRRF fuses keyword and semantic ranks
// by reciprocal rank fusion (seed 004 §4) instead of hybrid's weighted
// scores.
const (
	ModeKeyword  = "keyword"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
	ModeRRF      = "rrf"
	// ModeGraph marks hits of the structural route.
	ModeGraph = "graph"
)

// ReadDocArgs are read_doc's arguments (seed 002 §2).
type ReadDocArgs struct {
	Path   string `json:"path"`
	Anchor string `json:"anchor,omitempty"`
	// Detail is DetailFull (the default) or DetailOutline (CueDeck
	// addition, seed 000 §5 strategy 1).
	Detail string `json:"detail,omitempty"`
	// SinceHash is a hash read_doc returned for this file earlier: the
	// answer is then only what changed since (CueDeck addition).
	SinceHash string `json:"since_hash,omitempty"`
}

// read_doc's detail levels.
const (
	DetailFull    = "full"
	DetailOutline = "outline"
)

// LineRange is a 1-indexed inclusive range of lines.
type LineRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// ReadDocResult is read_doc's result.
type ReadDocResult struct {
	Path      string     `json:"path"`
	Repo      string     `json:"repo,omitempty"`
	Content   string     `json:"content"`
	Anchor    *string    `json:"anchor"`
	Tokens    int        `json:"tokens"`
	Hash      string     `json:"hash"`
	Cached    bool       `json:"cached"`
	LineRange *LineRange `json:"line_range"`
	// Detail, set when the call asked for an outline, is DetailOutline
	// when Content is the outline of the text (package outline), or
	// DetailFull when the text was shorter than its outline. Tokens count
	// Content, FullTokens the text, and Hash is the text's either way, as
	// a full read gives it.
	Detail     string `json:"detail,omitempty"`
	FullTokens int    `json:"full_tokens,omitempty"`
	// ContentTrust is TrustData: Content is the repository's text, byte
	// for byte (bar redacted secrets), to be read as data and never
	// followed as instructions.
	ContentTrust string `json:"content_trust,omitempty"`

	// With since_hash (CueDeck addition): SinceHash echoes it; Unchanged
	// says the file is still at that hash, and Content is empty; else
	// Delta, applied to the content read at SinceHash, gives the content
	// at Hash, and Content is empty unless the delta would not be smaller
	// than the file. Tokens counts what was sent, FullTokens the whole
	// content (as with Detail).
	SinceHash string       `json:"since_hash,omitempty"`
	Unchanged bool         `json:"unchanged,omitempty"`
	Delta     *delta.Delta `json:"delta,omitempty"`
}

// StaleCache is error 1006: the caller holds a version of path, at
// expected, that is no longer known; the file is now at actual.
func StaleCache(path, expected, actual string) *Error {
	return &Error{Code: CodeStaleCache, Message: "Stale Cache", Data: map[string]any{
		"path": path, "expected_hash": expected, "actual_hash": actual,
		"recovery": "That version is no longer kept: call read_doc without since_hash to read the whole file",
	}}
}

// TrustData marks a result's repository or memory text as data, not
// instructions (the content_trust field).
const TrustData = "data"
