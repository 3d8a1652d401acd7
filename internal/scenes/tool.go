package scenes

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// Tool serves get_scene from a workspace's files and passes every other
// tool to next. A scene reads card and doc files as they are on disk,
// which only a process beside the workspace has: `cue up` and `cue mcp`
// serve it; an edge alone answers that the tool needs the workspace. When
// next is a DecisionSource (an *edge.Edge), scenes carry the team's recent
// decisions from it; when it is an ImportanceSource (an *edge.Edge too),
// the files of each depth are packed most important first. repo is the workspace's repo: a caller whose identity
// may not read it gets no scene (1001, as if there were no workspace), and
// log (nil discards) hears of the attempt.
//
// A scene for a session (the MCP session, else the client) that already
// received some of its files sends those as "unchanged since you read it"
// or as a delta (see Seen).
//
// A scene's page opens with tools.SceneNotice, and its result and errors
// pass the security guard like every edge result does.
func Tool(next tools.Caller, fsys fs.FS, repo string, log *slog.Logger) tools.Caller {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	seen := NewSeen()
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool != tools.GetScene {
			return next.Call(ctx, tool, args)
		}
		if id := access.FromContext(ctx); !id.MayRead(repo) {
			log.Warn("tool call refused", "tool", tool, "reason", "repo not readable by this client", "client", id.Client, "repo", repo)
			return nil, &tools.Error{Code: tools.CodeFileNotFound, Message: "Scene Not Available", Data: map[string]any{
				"suggestion": "This client may not read the workspace's repo; use read_context and read_doc on its own repos"}}
		}
		out, err := getScene(next, fsys, args, seen, sessionOf(access.FromContext(ctx)))
		if err != nil {
			return nil, tools.RedactError(err)
		}
		return tools.RedactResult(out), nil
	})
}

// sessionOf is whose scenes id's calls are: the MCP session, else the
// client (a token shared by several stateless clients shares their
// memory of what was sent).
func sessionOf(id access.Identity) string {
	if id.Session != "" {
		return "session:" + id.Session
	}
	return id.Client
}

func getScene(next tools.Caller, fsys fs.FS, args json.RawMessage, seen *Seen, session string) (json.RawMessage, error) {
	raw, err := tools.Validate(tools.GetScene, args)
	if err != nil {
		return nil, err
	}
	var a tools.GetSceneArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, tools.InvalidParams(tools.GetScene, err.Error())
	}
	if a.Expand != "" {
		md, err := Expand(fsys, a.Expand, a.TokenLimit)
		if errors.Is(err, ErrUnknownNode) {
			return nil, &tools.Error{Code: tools.CodeFileNotFound, Message: "Node Not Found", Data: map[string]any{
				"expand": a.Expand, "suggestion": "Use an [expand: …] id from the latest scene; the tree may have changed since"}}
		}
		if err != nil {
			return nil, &tools.Error{Code: tools.CodeInternal, Message: "Expand Failed", Data: map[string]any{"detail": err.Error()}}
		}
		md = tools.SceneNotice + md
		return json.Marshal(tools.GetSceneResult{Markdown: md, Tokens: tokens.Count(md), Budget: a.TokenLimit, ContentTrust: tools.TrustData})
	}
	opts := Options{CardID: a.CardID, Budget: a.TokenLimit, Seen: seen, Session: session}
	if d, ok := next.(DecisionSource); ok {
		opts.Decisions = d
	}
	if s, ok := next.(ImportanceSource); ok {
		opts.Importance = s
	}
	res, err := Build(fsys, opts)
	if err != nil {
		return nil, toolError(a.CardID, err)
	}
	// The notice's tokens are counted, not budgeted: the budget is for
	// the workspace's text.
	md := tools.SceneNotice + res.Markdown
	out := tools.GetSceneResult{
		Markdown: md, CardID: res.Root.ID, Tokens: res.Tokens + tokens.Count(tools.SceneNotice), Budget: res.Budget,
		Nodes: res.Nodes, Included: res.Included, Truncated: res.Truncated, OverBudget: res.OverBudget,
		Redacted: res.Redacted, ContentTrust: tools.TrustData, Outlined: res.Outlined,
	}
	for _, d := range res.Dead {
		out.DeadReferences = append(out.DeadReferences, d.String())
	}
	return json.Marshal(out)
}

// toolError maps Build's errors to the tools' codes: a cycle is 1002 with
// its path, a root that cannot be chosen is 1001 saying how to name one.
func toolError(cardID string, err error) error {
	var ce *CycleError
	switch {
	case errors.As(err, &ce):
		return tools.CircularDependency(ce.Path)
	case errors.Is(err, ErrCardNotFound):
		return &tools.Error{Code: tools.CodeFileNotFound, Message: "Card Not Found", Data: map[string]any{
			"card_id": cardID, "path": tools.CardPath(cardID), "suggestion": "Check the id with list_tasks"}}
	case errors.Is(err, ErrNoActiveCard):
		return &tools.Error{Code: tools.CodeFileNotFound, Message: "No Active Card", Data: map[string]any{
			"suggestion": "Pass card_id, or set one card's status to active with update_task"}}
	case errors.Is(err, ErrSeveralActive):
		return tools.InvalidParams(tools.GetScene, err.Error()+" (pass card_id)")
	}
	// Unreadable files and the like: the message says which.
	return &tools.Error{Code: tools.CodeInternal, Message: "Scene Failed", Data: map[string]any{"detail": err.Error()}}
}
