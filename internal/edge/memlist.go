package edge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// ListMemories returns the newest current memories (none a later one
// superseded) that pass f and that the
// identity in ctx may read, newest update first, at most limit of them
// (all when limit ≤ 0), with every text passed through the guard. It is
// the dashboard's timeline: search_memories ranks by a query, this lists
// without one. A bad filter is an InvalidParams error as search_memories
// returns it.
func (e *Edge) ListMemories(ctx context.Context, f *tools.MemoryFilters, limit int) ([]tools.MemoryHit, error) {
	return e.listMemories(ctx, f, limit, false)
}

// listMemories is ListMemories, with the memories later ones superseded
// when includeSuperseded (left out otherwise).
func (e *Edge) listMemories(ctx context.Context, f *tools.MemoryFilters, limit int, includeSuperseded bool) ([]tools.MemoryHit, error) {
	if e.m == nil {
		return []tools.MemoryHit{}, nil
	}
	allow, err := e.m.memoryFilter(f, access.FromContext(ctx), e.clock.Now())
	if err != nil {
		return nil, err
	}
	s := e.m.mems
	s.mu.RLock()
	candidates := allow.candidatesLocked(s)
	entries := make([]*memEntry, 0, len(candidates))
	for k, me := range candidates {
		if allow.admitsLocked(s, k) && (includeSuperseded || !s.supersededLocked(k)) {
			entries = append(entries, me)
		}
	}
	slices.SortFunc(entries, func(a, b *memEntry) int {
		if c := b.rec.UpdatedAt.Compare(a.rec.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	if limit > 0 && len(entries) > limit {
		entries = entries[:limit]
	}
	out := make([]tools.MemoryHit, len(entries))
	for i, me := range entries {
		out[i] = memoryHit(&me.rec, 0)
		out[i].SupersededBy = s.supersedersLocked(me.key)
	}
	s.mu.RUnlock()
	return out, nil
}

// listMemoriesTool answers list_memories, the CLI's listing: ListMemories
// with the arguments as JSON, or the memories whose hash starts with Hash
// (the CLI prints the first 12 digits).
func (e *Edge) listMemoriesTool(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var a tools.ListMemoriesArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, tools.InvalidParams(tools.ListMemories, err.Error())
	}
	limit := a.Limit
	if a.Hash != "" {
		limit = 0
	}
	hits, err := e.listMemories(ctx, a.Filters, limit, a.IncludeSuperseded || a.Hash != "")
	if err != nil {
		return nil, err
	}
	if a.Hash != "" {
		hits = slices.DeleteFunc(hits, func(h tools.MemoryHit) bool { return !strings.HasPrefix(h.Hash, a.Hash) })
	}
	return json.Marshal(hits)
}
