package edge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// getMemory answers get_memory: the memory of a hash whole, as a detailed
// search_memories hit with its links; one the caller may not read, or
// none, is MemoryNotFound (1001).
func (e *Edge) getMemory(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	args, err := tools.Validate(tools.GetMemory, raw)
	if err != nil {
		return nil, err
	}
	var a tools.GetMemoryArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, tools.InvalidParams(tools.GetMemory, err.Error())
	}
	id := access.FromContext(ctx)
	repo := cmp.Or(a.Repo, e.defaultRepo)
	s := e.m.mems
	s.mu.RLock()
	defer s.mu.RUnlock()
	me := s.byKey[events.MemoryKey(repo, a.Hash)]
	if me == nil && a.Repo == "" {
		// Not the default repo's: the hash in any repo the caller reads.
		for _, cand := range s.byKey {
			if cand.rec.Hash == a.Hash && id.MayRead(cand.rec.Repo) {
				me = cand
				break
			}
		}
	}
	if me != nil && id.MayRead(me.rec.Repo) {
		hit := memoryHit(&me.rec, 0)
		hit.SupersededBy = s.supersedersLocked(me.key)
		return json.Marshal(hit)
	}
	return nil, tools.MemoryNotFound(repo, a.Hash)
}

// searchMemories answers search_memories: the memories that pass the
// filters, ranked in the mode asked for as read_context ranks documents
// (BM25F, cosine, or hybrid's 70/30 fusion). Semantic modes fall back to
// keyword search when the edge has no embedder, no memory vectors yet, or
// the embedder fails, and every hit says so.
func (e *Edge) searchMemories(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	args, err := tools.Validate(tools.SearchMemories, raw)
	if err != nil {
		return nil, err
	}
	var a tools.SearchMemoriesArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, tools.InvalidParams(tools.SearchMemories, err.Error())
	}
	allow, err := e.m.memoryFilter(a.Filters, access.FromContext(ctx), e.clock.Now())
	if err != nil {
		return nil, err
	}
	hits, err := e.rankMemories(ctx, a.Query, a.Mode, a.Limit, allow, a.IncludeSuperseded)
	if err != nil {
		return nil, err
	}
	if a.Detail {
		return json.Marshal(hits)
	}
	briefs := make([]tools.MemoryBrief, len(hits))
	for i, h := range hits {
		briefs[i] = h.Brief()
	}
	return json.Marshal(briefs)
}

// memoryPredicate admits the memories that pass a search's filters and
// that its caller may read. It is asked while the search runs, of the
// candidates the query's words find, rather than listing beforehand every
// memory that passes: with a common kind as the filter that list was a
// pass over tens of thousands of memories, most of a filtered search's
// time at 100,000. A nil *memoryPredicate admits every memory.
type memoryPredicate struct {
	f    *tools.MemoryFilters
	when func(time.Time) bool
	id   access.Identity
}

// memoryFilter checks filters and returns the predicate of filters and
// the repos id may read, nil when nothing is filtered.
func (m *Materialiser) memoryFilter(f *tools.MemoryFilters, id access.Identity, now time.Time) (*memoryPredicate, error) {
	if f == nil {
		f = &tools.MemoryFilters{}
	}
	if !id.Restricted() && f.Repo == "" && f.Kind == "" && f.Session == "" && len(f.Files) == 0 && len(f.Tags) == 0 && f.Since == "" {
		return nil, nil
	}
	since := f.Since
	if _, err := time.Parse(time.DateOnly, since); err == nil {
		since = ">=" + since // "since a day" is from that day on
	}
	when, err := parseWhen(since, now)
	if err != nil {
		return nil, tools.InvalidParams(tools.SearchMemories, "filters.since: "+err.Error())
	}
	return &memoryPredicate{f: f, when: when, id: id}, nil
}

// admitsLocked reports whether the memory under key passes; s.mu is held.
func (p *memoryPredicate) admitsLocked(s *memState, key string) bool {
	me := s.byKey[key]
	if me == nil {
		return false
	}
	return p == nil || p.id.MayRead(me.rec.Repo) && memoryPasses(&me.rec, p.f, p.when)
}

// keep is p's verdict on a memory from the stamp the keyword index keeps
// (memoryStamp), for search.SearchStamped: Refuse when the stamp shows a
// filter fails, Admit when it shows every filter passes and nothing else
// is to be checked (sure: no session, files or tags filter, and no
// superseded memory to leave out), Ask otherwise. nil when p has nothing
// a stamp shows.
func (p *memoryPredicate) keep(s *memState, sure bool) func(stamp uint64) int {
	if p == nil {
		return nil
	}
	f := p.f
	sure = sure && f.Session == "" && len(f.Files) == 0 && len(f.Tags) == 0
	kind := kindCode(memory.Kind(f.Kind))
	var repo uint64
	if f.Repo != "" {
		if repo = s.repos.lookup(f.Repo); repo == 0 {
			return nil // a repo no memory names yet, or past the numbers
		}
	}
	var readable []bool
	if p.id.Restricted() {
		readable = s.repos.readable(p.id)
	}
	if f.Kind == "" && repo == 0 && readable == nil && p.when == nil {
		return nil
	}
	return func(stamp uint64) int {
		verdict := search.Admit
		if !sure {
			verdict = search.Ask
		}
		if f.Kind != "" {
			switch k := stampKind(stamp); {
			case k != kind:
				return search.Refuse
			case k == 0:
				verdict = search.Ask // two kinds this build does not know
			}
		}
		r := stampRepo(stamp)
		if repo != 0 && r != repo {
			if r == 0 {
				verdict = search.Ask // a repo past the numbers
			} else {
				return search.Refuse
			}
		}
		if readable != nil {
			switch {
			case r == 0 || int(r) >= len(readable):
				verdict = search.Ask // past the numbers, or numbered since
			case !readable[r]:
				return search.Refuse
			}
		}
		if p.when != nil {
			secs := stampSeconds(stamp)
			if secs == 0 {
				return search.Ask
			}
			// The update is within this second; the filters' times are
			// spans, so the second's ends agreeing decide it.
			first := time.Unix(secs, 0)
			start, end := p.when(first), p.when(first.Add(time.Second-1))
			switch {
			case !start && !end:
				return search.Refuse
			case start != end:
				verdict = search.Ask
			}
		}
		return verdict
	}
}

// candidatesLocked is the smallest indexed set of memories that holds
// every one p admits (s.byKey when none is smaller); s.mu is held.
func (p *memoryPredicate) candidatesLocked(s *memState) map[string]*memEntry {
	if p == nil {
		return s.byKey
	}
	var sets []map[string]*memEntry
	if p.f.Repo != "" {
		sets = append(sets, s.byRepo[p.f.Repo])
	}
	if p.f.Kind != "" {
		sets = append(sets, s.byKind[p.f.Kind])
	}
	if p.f.Session != "" {
		sets = append(sets, s.bySession[p.f.Session])
	}
	if len(p.f.Files) > 0 {
		union := make(map[string]*memEntry)
		for _, path := range p.f.Files {
			maps.Copy(union, s.byBase[fileBase(path)])
		}
		sets = append(sets, union)
	}
	if len(sets) == 0 {
		return s.byKey
	}
	return slices.MinFunc(sets, func(a, b map[string]*memEntry) int { return len(a) - len(b) })
}

// memoryPasses checks every filter of f on rec; when is the parsed since.
func memoryPasses(rec *events.MemoryRecord, f *tools.MemoryFilters, when func(time.Time) bool) bool {
	switch {
	case f.Repo != "" && rec.Repo != f.Repo,
		f.Kind != "" && string(rec.Kind) != f.Kind,
		f.Session != "" && rec.Session != f.Session,
		when != nil && !when(rec.UpdatedAt):
		return false
	}
	return (len(f.Files) == 0 || touchesAny(rec.FilesTouched, f.Files)) &&
		(len(f.Tags) == 0 || slices.ContainsFunc(rec.Tags, func(t string) bool { return slices.Contains(f.Tags, t) }))
}

// touchesAny reports whether any of files names a file of touched.
func touchesAny(touched, files []string) bool {
	for _, t := range touched {
		for _, f := range files {
			if samePath(t, f) {
				return true
			}
		}
	}
	return false
}

// rankMemories ranks the memories p admits (all when nil). The view's
// lock is held (read) through the searches, so that p can look at the
// memories the indexes find: the indexes are written either outside it
// (the keyword index) or under it (the vectors), never the other way
// round, so taking it first cannot deadlock.
func (e *Edge) rankMemories(ctx context.Context, query, mode string, limit int, p *memoryPredicate, includeSuperseded bool) ([]tools.MemoryHit, error) {
	s := e.m.mems
	fallback := ""
	var qv []float32
	if mode != tools.ModeKeyword {
		var err error
		qv, fallback, err = e.memoryQueryVector(ctx, query)
		if err != nil {
			return nil, err
		}
		if fallback != "" {
			mode = tools.ModeKeyword
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	// Links may be left with no superseder in them: any at all is a cue
	// to look, none spares every candidate two lookups.
	includeSuperseded = includeSuperseded || len(s.supersededBy) == 0 && len(s.autoBy) == 0
	var allow func(string) bool
	switch {
	case p != nil && !includeSuperseded:
		allow = func(id string) bool { return p.admitsLocked(s, id) && !s.supersededLocked(id) }
	case p != nil:
		allow = func(id string) bool { return p.admitsLocked(s, id) }
	case !includeSuperseded:
		allow = func(id string) bool { return !s.supersededLocked(id) }
	}
	keep := p.keep(s, includeSuperseded)
	keyword := func(depth int) []search.Hit {
		if keep != nil {
			return s.index.SearchStamped(query, depth, keep, allow)
		}
		return s.index.SearchFiltered(query, depth, allow)
	}
	semantic := func(depth int) []search.Hit {
		if keep != nil {
			return vectorHits(s.vindex.SearchStamped(qv, depth, keep, allow))
		}
		return vectorHits(s.vindex.Search(qv, depth, allow))
	}
	depth := limit + 8 // slack for memories removed since the index answered
	var kw, sem []search.Hit
	kwScore := map[string]float64{}
	semScore := map[string]float64{}
	switch mode {
	case tools.ModeKeyword:
		kw = keyword(depth)
	case tools.ModeSemantic:
		sem = semantic(depth)
	default:
		// As read_context's hybrid: every candidate is scored by both
		// sides, BM25F (0 when no query term matches) and cosine.
		kw = keyword(fusionDepth(limit))
		sem = semantic(fusionDepth(limit))
		for _, h := range sem {
			semScore[h.ID] = h.Score
		}
		addKeywordScores(s.index, query, sem, kw, kwScore)
		for _, h := range kw {
			if _, ok := semScore[h.ID]; !ok {
				if vh, ok := s.vindex.Score(qv, h.ID); ok {
					semScore[h.ID] = vh.Score
				}
			}
		}
	}
	for _, h := range kw {
		kwScore[h.ID] = h.Score
	}
	for _, h := range sem {
		semScore[h.ID] = h.Score
	}
	ranked := kw
	switch mode {
	case tools.ModeSemantic:
		ranked = sem
	case tools.ModeHybrid:
		lookup := func(m map[string]float64) search.ScoreOf {
			return func(id string) (float64, bool) { v, ok := m[id]; return v, ok }
		}
		ranked = search.FuseHybrid(sem, kw, lookup(semScore), lookup(kwScore))
	}

	out := make([]tools.MemoryHit, 0, min(limit, len(ranked)))
	for _, h := range ranked {
		me := s.byKey[h.ID]
		if me == nil || (allow != nil && !allow(h.ID)) {
			continue
		}
		hit := memoryHit(&me.rec, h.Score)
		hit.SupersededBy = s.supersedersLocked(h.ID)
		hit.Fallback = fallback
		if sc, ok := kwScore[h.ID]; ok && sc > search.KeywordFloor {
			hit.Modes = append(hit.Modes, tools.ModeKeyword)
		}
		if _, ok := semScore[h.ID]; ok && mode != tools.ModeKeyword {
			hit.Modes = append(hit.Modes, tools.ModeSemantic)
		}
		out = append(out, hit)
		if len(out) == limit {
			break
		}
	}
	if mode == tools.ModeHybrid && len(out) > 0 && !slices.ContainsFunc(out, func(h tools.MemoryHit) bool { return slices.Contains(h.Modes, tools.ModeKeyword) }) {
		// Meaning alone always finds something: say that no word did.
		tools.Notify(ctx, NoWordsMatched)
	}
	return out, nil
}

// NoWordsMatched is the notice of a hybrid search_memories answer in
// which no memory holds a word of the query: only the nearest by meaning,
// which may have nothing to do with it.
const NoWordsMatched = "nothing found: no memory holds a word of the query; the hits are only the nearest by meaning and may be unrelated"

// vectorHits drops what search.Hit does not carry.
func vectorHits(vh []vector.Hit) []search.Hit {
	out := make([]search.Hit, len(vh))
	for i, h := range vh {
		out[i] = search.Hit{ID: h.ID, Score: h.Score}
	}
	return out
}

// memoryQueryVector embeds the query for the memory vectors, or says why
// semantic search of memories cannot answer now.
func (e *Edge) memoryQueryVector(ctx context.Context, query string) (qv []float32, fallback string, err error) {
	s := e.m.mems
	if e.emb == nil || s.vindex == nil {
		return nil, "semantic search is off on this edge (no embedding model); answered by keyword search", nil
	}
	if s.vindex.Len() == 0 {
		return nil, fmt.Sprintf("no memory vectors of model %s yet (embeddings trail extraction); answered by keyword search", e.m.model), nil
	}
	vs, err := e.emb.Embed(ctx, []string{query})
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	switch {
	case errors.Is(err, embed.ErrUnavailable):
		e.logger.Warn("embedder unavailable; answering search_memories by keyword search", "model", e.m.model, "err", err)
		return nil, fmt.Sprintf("embedding model %s is unavailable; answered by keyword search", e.m.model), nil
	case err != nil:
		e.logger.Warn("embedding the query failed; answering search_memories by keyword search", "model", e.m.model, "err", err)
		return nil, fmt.Sprintf("embedding the query with %s failed; answered by keyword search", e.m.model), nil
	case len(vs) != 1 || len(vs[0]) != s.vindex.Dimensions():
		return nil, fmt.Sprintf("embedding model %s returned an unusable vector; answered by keyword search", e.m.model), nil
	}
	return vs[0], "", nil
}

// memoryHit is the hit of rec with every text passed through the guard:
// extraction redacts what it stores, but the guard's rules may have grown
// since a memory was written.
func memoryHit(rec *events.MemoryRecord, score float64) tools.MemoryHit {
	files := make([]string, len(rec.FilesTouched))
	for i, f := range rec.FilesTouched {
		files[i] = redact(f)
	}
	return tools.MemoryHit{
		Content:      redact(rec.Content),
		Kind:         string(rec.Kind),
		Rationale:    redact(rec.Rationale),
		FilesTouched: files,
		Tags:         slices.Clone(rec.Tags),
		Confidence:   rec.Confidence,
		Repo:         rec.Repo,
		Session:      redact(rec.Session),
		Agent:        redact(rec.Agent),
		Source:       tools.SourceSpan{Start: rec.Source.Start, End: rec.Source.End},
		Provider:     rec.Provider,
		Model:        rec.Model,
		Outcome:      string(rec.Outcome),
		Extractions:  rec.Extractions,
		CreatedAt:    rec.CreatedAt,
		UpdatedAt:    rec.UpdatedAt,
		Hash:         rec.Hash,
		Supersedes:   slices.Clone(rec.Supersedes),
		Score:        math.Round(score*1e6) / 1e6,
	}
}

func redact(s string) string {
	if s == "" {
		return s
	}
	out, _ := guard.Redact(s)
	return out
}

// DefaultDecisionWindow is how far back RecentDecisions looks by default.
const DefaultDecisionWindow = 30 * 24 * time.Hour

// RecentDecisions returns the memories of repo (the edge's default repo
// when "") of kind decision or experience updated within
// DefaultDecisionWindow before now, best first, at most limit of them
// (memory.DefaultExperienceLimit when limit ≤ 0), for a scene's anchor.
// Texts have passed the guard.
//
// The ranking, seed 004 §3's "newest first" with room for relevance:
//
//  1. memories touching one of files (the scene's focus; path-suffix
//     match) before those that touch none of them;
//  2. then by age in whole days, younger first — recency decides, but
//     within one day a memory the team is surer of wins;
//  3. then higher confidence;
//  4. then more extractions (said again in more batches);
//  5. then the exact update time, newer first; then the key, for a
//     stable order.
func (e *Edge) RecentDecisions(repo string, files []string, now time.Time, limit int) []events.MemoryRecord {
	if e.m == nil {
		return nil
	}
	if repo == "" {
		repo = e.defaultRepo
	}
	if limit <= 0 {
		limit = memory.DefaultExperienceLimit
	}
	cutoff := now.Add(-DefaultDecisionWindow)
	s := e.m.mems
	s.mu.RLock()
	type cand struct {
		e     *memEntry
		focus bool
		days  int64
	}
	var cands []cand
	for k := range s.byRepo[repo] {
		me := s.byKey[k]
		r := &me.rec
		if (r.Kind != memory.KindDecision && r.Kind != memory.KindExperience) || !r.UpdatedAt.After(cutoff) || s.supersededLocked(k) {
			continue
		}
		age := max(now.Sub(r.UpdatedAt), 0)
		cands = append(cands, cand{e: me, focus: len(files) > 0 && touchesAny(r.FilesTouched, files), days: int64(age / (24 * time.Hour))})
	}
	s.mu.RUnlock()
	slices.SortFunc(cands, func(a, b cand) int {
		ra, rb := &a.e.rec, &b.e.rec
		switch {
		case a.focus != b.focus:
			if a.focus {
				return -1
			}
			return 1
		case a.days != b.days:
			return int(a.days - b.days)
		case ra.Confidence != rb.Confidence:
			if ra.Confidence > rb.Confidence {
				return -1
			}
			return 1
		case ra.Extractions != rb.Extractions:
			return rb.Extractions - ra.Extractions
		case !ra.UpdatedAt.Equal(rb.UpdatedAt):
			return rb.UpdatedAt.Compare(ra.UpdatedAt)
		}
		return strings.Compare(a.e.key, b.e.key)
	})
	out := make([]events.MemoryRecord, 0, min(limit, len(cands)))
	for _, c := range cands[:min(limit, len(cands))] {
		r := c.e.rec
		r.Content, r.Rationale, r.Agent, r.Session = redact(r.Content), redact(r.Rationale), redact(r.Agent), redact(r.Session)
		r.FilesTouched = slices.Clone(r.FilesTouched)
		out = append(out, r)
	}
	return out
}
