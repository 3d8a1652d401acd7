package dashboard

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Limits of one answer: read_context and search_memories return at most
// 50 hits; the timeline shows the newest maxTimeline memories.
const (
	maxHits     = 50
	maxTimeline = 500
)

// Memories is what /dashboard/api/memories answers: the memories, oldest
// first (a timeline), and how they were chosen.
type Memories struct {
	Memories []tools.MemoryHit `json:"memories"`
	// Query is the search the memories answer, "" for the newest ones.
	Query string `json:"query,omitempty"`
	// Limit is how many were asked for; when len(Memories) reaches it,
	// older ones were left out.
	Limit int `json:"limit"`
}

// memories answers the timeline: without q the newest memories that pass
// the filters, with q search_memories's hits; either way in time order.
// Query parameters: q, mode, repo, kind, session, since, limit.
func (a *api) memories(w http.ResponseWriter, r *http.Request) {
	ctx, _ := identity(r)
	q := r.URL.Query()
	f := &tools.MemoryFilters{Repo: q.Get("repo"), Kind: q.Get("kind"), Session: q.Get("session"), Since: q.Get("since")}
	if f.Repo == "" && f.Kind == "" && f.Session == "" && f.Since == "" {
		f = nil
	}
	if f != nil && f.Kind != "" && !memory.Kind(f.Kind).Valid() {
		writeError(w, http.StatusBadRequest, "kind "+strconv.Quote(f.Kind)+": use one of decision, rationale, fact, preference, open_question, experience", nil)
		return
	}
	if f != nil && f.Repo != "" && events.ValidateRepo(f.Repo) != nil {
		writeError(w, http.StatusBadRequest, "repo "+strconv.Quote(f.Repo)+": not a repo name (letters, digits, - and _)", nil)
		return
	}
	query := strings.TrimSpace(q.Get("q"))
	limit, err := limitParam(q.Get("limit"), 100, maxTimeline)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	out := Memories{Query: query, Limit: limit}
	switch {
	case query != "":
		out.Limit = min(limit, maxHits)
		err = a.call(ctx, tools.SearchMemories, tools.SearchMemoriesArgs{Query: query, Mode: q.Get("mode"), Limit: out.Limit, Filters: f}, &out.Memories)
	case a.opts.Memories != nil:
		out.Memories, err = a.opts.Memories.ListMemories(ctx, f, limit)
	default:
		writeError(w, http.StatusBadRequest, "this edge lists memories only for a query: give q", nil)
		return
	}
	if err != nil {
		a.fail(w, r, "memories", err)
		return
	}
	if out.Memories == nil {
		out.Memories = []tools.MemoryHit{}
	}
	// A timeline reads in time order, whatever ranked the memories.
	sortByCreated(out.Memories)
	writeJSON(w, http.StatusOK, out)
}

// sortByCreated orders ms oldest first; the listing's or the ranking's
// order breaks ties.
func sortByCreated(ms []tools.MemoryHit) {
	slices.SortStableFunc(ms, func(a, b tools.MemoryHit) int { return a.CreatedAt.Compare(b.CreatedAt) })
}

// Search is what /dashboard/api/search answers.
type Search struct {
	Query   string             `json:"query"`
	Mode    string             `json:"mode"`
	Results []tools.ContextHit `json:"results"`
	// Memories are search_memories's hits for the same query, when asked
	// for (memories=1).
	Memories []tools.MemoryHit `json:"memories,omitempty"`
}

// search runs read_context with the mode and filters of the query
// parameters q, mode, limit, tags (comma-separated), priority, assignee
// and repo. read_context has no repo filter: with repo, the hits of other
// repos are dropped from a deeper search.
func (a *api) search(w http.ResponseWriter, r *http.Request) {
	ctx, _ := identity(r)
	q := r.URL.Query()
	query := strings.TrimSpace(q.Get("q"))
	if query == "" {
		writeError(w, http.StatusBadRequest, "give a query: q=<keywords>", nil)
		return
	}
	limit, err := limitParam(q.Get("limit"), 10, maxHits)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), nil)
		return
	}
	args := tools.ReadContextArgs{Query: query, Limit: limit, Mode: q.Get("mode")}
	var f tools.Filters
	for t := range strings.SplitSeq(q.Get("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			f.Tags = append(f.Tags, t)
		}
	}
	f.Priority, f.Assignee = strings.TrimSpace(q.Get("priority")), strings.TrimSpace(q.Get("assignee"))
	if len(f.Tags) > 0 || f.Priority != "" || f.Assignee != "" {
		args.Filters = &f
	}
	repo := strings.TrimSpace(q.Get("repo"))
	if repo != "" {
		args.Limit = maxHits
	}
	out := Search{Query: query, Mode: args.Mode, Results: []tools.ContextHit{}}
	if out.Mode == "" {
		out.Mode = tools.ModeHybrid
	}
	var hits []tools.ContextHit
	if err := a.call(ctx, tools.ReadContext, args, &hits); err != nil {
		a.fail(w, r, "search", err)
		return
	}
	for _, h := range hits {
		if repo != "" && h.Repo != repo {
			continue
		}
		if len(out.Results) == limit {
			break
		}
		out.Results = append(out.Results, h)
	}
	if q.Get("memories") == "1" {
		margs := tools.SearchMemoriesArgs{Query: query, Limit: limit}
		if m := out.Mode; m == tools.ModeKeyword || m == tools.ModeSemantic || m == tools.ModeHybrid {
			margs.Mode = m
		}
		if repo != "" {
			margs.Filters = &tools.MemoryFilters{Repo: repo}
		}
		if err := a.call(ctx, tools.SearchMemories, margs, &out.Memories); err != nil {
			a.fail(w, r, "memory search", err)
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// limitParam parses a limit: def when empty, else 1..most.
func limitParam(s string, def, most int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > most {
		return 0, &paramError{"limit " + strconv.Quote(s) + ": give a whole number from 1 to " + strconv.Itoa(most)}
	}
	return n, nil
}

type paramError struct{ msg string }

func (e *paramError) Error() string { return e.msg }
