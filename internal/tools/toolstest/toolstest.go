// Package toolstest is a small in-memory tool set for tests of the
// transports that expose a tools.Caller (the MCP server, the NATS query
// service). It behaves like the edge's tools: arguments are checked with
// tools.Validate, results follow seed 002's shapes, and failures are
// *tools.Error values with the seed's codes and data.
package toolstest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"sort"
	"strings"

	"github.com/cuedeck/cuedeck/internal/tools"
)

// Docs is a tools.Caller over a fixed set of markdown documents keyed by
// path.
type Docs map[string]string

// Sample is a document set with a few paths for tests to query.
func Sample() Docs {
	return Docs{
		"docs/auth.md":    "# Auth\n\n## Login Flow\n\nUsers log in with OAuth.\n\n## Tokens\n\nVerifyToken checks the JWT.\n",
		"docs/api.md":     "# API\n\n## Endpoints\n\nGET /v1/cards lists cards.\n",
		"cards/task-a.md": "# Task A\n\nWire the auth flow into the API.\n",
	}
}

// Call implements tools.Caller.
func (d Docs) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args, err := tools.Validate(tool, args)
	if err != nil {
		return nil, err
	}
	switch tool {
	case tools.ReadContext:
		var a tools.ReadContextArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, tools.InvalidParams(tool, err.Error())
		}
		return json.Marshal(d.search(a))
	case tools.ReadDoc:
		var a tools.ReadDocArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, tools.InvalidParams(tool, err.Error())
		}
		content, ok := d[a.Path]
		if !ok {
			return nil, tools.FileNotFound(a.Path, d.closest(a.Path))
		}
		lines := strings.Count(content, "\n")
		res := tools.ReadDocResult{
			Path:      a.Path,
			Content:   content,
			Tokens:    len(strings.Fields(content)),
			Hash:      hash(content),
			LineRange: &tools.LineRange{Start: 1, End: lines},
		}
		if a.Anchor != "" {
			res.Anchor = &a.Anchor
		}
		return json.Marshal(res)
	}
	return nil, &tools.Error{Code: tools.CodeMethodMissing, Message: "Unknown tool", Data: map[string]any{"tool": tool}}
}

// search ranks documents by how many query words they contain.
func (d Docs) search(a tools.ReadContextArgs) []tools.ContextHit {
	words := strings.Fields(strings.ToLower(a.Query))
	hits := []tools.ContextHit{}
	for p, content := range d {
		lower := strings.ToLower(content)
		score := 0
		for _, w := range words {
			if strings.Contains(lower, w) {
				score++
			}
		}
		if score == 0 {
			continue
		}
		hits = append(hits, tools.ContextHit{
			Path:    p,
			Hash:    hash(content),
			Tokens:  len(strings.Fields(content)),
			Anchors: headings(content),
			Score:   float64(score) / float64(len(words)),
		})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Path < hits[j].Path
	})
	if len(hits) > a.Limit {
		hits = hits[:a.Limit]
	}
	return hits
}

// closest suggests the document with the same base name, or the one sharing
// the longest prefix.
func (d Docs) closest(p string) string {
	best, bestLen := "", 0
	for q := range d {
		if path.Base(q) == path.Base(p) {
			return q
		}
		n := 0
		for n < len(p) && n < len(q) && p[n] == q[n] {
			n++
		}
		if n > bestLen || (n == bestLen && q < best) {
			best, bestLen = q, n
		}
	}
	return best
}

func headings(content string) []string {
	var hs []string
	for _, line := range strings.Split(content, "\n") {
		if strings.HasPrefix(line, "## ") {
			hs = append(hs, strings.TrimPrefix(line, "## "))
		}
	}
	return hs
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
