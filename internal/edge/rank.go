package edge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
)

// fusionDepth is how many hits of each ranking the fused modes draw as
// candidates (search.FusionPool, as evaluated); every candidate is then
// scored by both sides.
func fusionDepth(limit int) int { return max(3*limit, search.FusionPool) }

// rank answers read_context in mode: keyword, semantic, hybrid or rrf.
// Semantic modes fall back to keyword search when the edge has no
// embedder, no vectors yet, or the embedder fails, and every hit says so.
// Filters apply before ranking in every mode.
func (e *Edge) rank(ctx context.Context, query, mode string, limit int, sc docScope) ([]tools.ContextHit, error) {
	m := e.m
	fallback := ""
	var qv []float32
	if mode != tools.ModeKeyword {
		var err error
		qv, fallback, err = e.queryVector(ctx, query)
		if err != nil {
			return nil, err
		}
		if fallback != "" {
			e.logger.Debug("answering by keyword search", "mode", mode, "reason", fallback)
			mode = tools.ModeKeyword
		}
	}
	depth := limit + 8 // slack for hits removed since the index answered
	if mode == tools.ModeHybrid || mode == tools.ModeRRF {
		depth = fusionDepth(limit)
	}
	// The origin prior (prior.go) weighs keyword hits inside the index,
	// so its limit counts canonical pages; the other modes' rankings are
	// weighed once fused, from candidates deep enough to hold them.
	prior := m.priorFor(query, mode == tools.ModeKeyword)
	var kw, sem []search.Hit
	var chunks map[string]semHit
	var kwScore map[string]float64
	switch mode {
	case tools.ModeKeyword:
		kw = m.keywordHits(query, depth, sc, prior)
	case tools.ModeSemantic:
		if prior != nil {
			depth = fusionDepth(limit)
		}
		sem, chunks = m.semanticHits(qv, depth, sc, nil)
	default:
		// Every candidate gets both scores: BM25F for any document (0
		// when no query term matches) and its best chunk's cosine.
		kw = m.keywordHits(query, depth, sc, nil)
		sem, chunks = m.semanticHits(qv, depth, sc, kw)
		kwScore = make(map[string]float64, len(kw)+len(sem))
		addKeywordScores(m.index, query, sem, kw, kwScore)
	}
	var ranked []search.Hit
	semanticOf := func(id string) (float64, bool) {
		c, ok := chunks[id]
		return c.Score, ok
	}
	keywordOf := func(id string) (float64, bool) {
		s, ok := kwScore[id]
		return s, ok
	}
	switch mode {
	case tools.ModeKeyword:
		ranked = kw
	case tools.ModeSemantic:
		ranked = sem
	case tools.ModeHybrid:
		ranked = search.FuseHybrid(sem, kw, semanticOf, keywordOf)
	case tools.ModeRRF:
		ranked = search.FuseCandidatesRRF(sem, kw, semanticOf, keywordOf)
	}
	inKeyword := make(map[string]bool, len(kw))
	for _, h := range kw {
		inKeyword[h.ID] = true
	}
	for id, s := range kwScore {
		if s > search.KeywordFloor {
			inKeyword[id] = true
		}
	}
	qterms := search.QueryTerms(query)

	if mode != tools.ModeKeyword {
		weigh(ranked, prior)
	}

	// Sections found from the content are filled in after the lock is
	// let go: content may be read from the store, whose lock comes first.
	var needSection []*doc
	m.mu.RLock()
	ranked = m.boostLocked(ranked)
	out := make([]tools.ContextHit, 0, min(limit, len(ranked)))
	for _, h := range ranked {
		d, ok := m.docs[h.ID]
		if !ok || d.rec.Skip != nil || !sc.admits(d) {
			continue
		}
		hit := m.hitLocked(d, h.Score)
		hit.Fallback = fallback
		if inKeyword[h.ID] {
			hit.Modes = append(hit.Modes, tools.ModeKeyword)
		}
		if c, ok := chunks[h.ID]; ok {
			hit.Modes = append(hit.Modes, tools.ModeSemantic)
			// The chunk's lines are those of the content embedded: name
			// them only if that is still the document's content.
			if c.sha == d.rec.SHA256 {
				hit.Section = &tools.Section{Heading: chunkHeading(d, c.StartLine), LineRange: tools.LineRange{Start: c.StartLine, End: c.EndLine}}
			}
		}
		if hit.Section == nil && len(qterms) > 0 && d.rec.Size <= maxSectionContent {
			needSection = append(needSection, d)
		} else {
			needSection = append(needSection, nil)
		}
		out = append(out, hit)
		if len(out) == limit {
			break
		}
	}
	m.mu.RUnlock()
	for i, d := range needSection {
		if d == nil {
			continue
		}
		// A document replaced since it was ranked keeps no section.
		if content, _, err := m.content(d); err == nil {
			out[i].Section = keywordSection(d, content, qterms)
		}
	}
	return out, nil
}

// hitLocked is the seed 002 part of a hit.
func (m *Materialiser) hitLocked(d *doc, score float64) tools.ContextHit {
	return tools.ContextHit{
		Path:    d.rec.Path,
		Repo:    d.rec.Repo,
		Hash:    d.rec.SHA256,
		Tokens:  d.rec.Tokens,
		Anchors: d.anchors,
		Score:   math.Round(score*1e6) / 1e6,
		// Importance (importance.go) is the same for every query; it
		// breaks near-ties of the score.
		Importance: m.importanceLocked(d),
	}
}

// queryVector embeds the query. fallback, when not empty, says why
// semantic search cannot answer now; err is ctx's error once it ends.
func (e *Edge) queryVector(ctx context.Context, query string) (qv []float32, fallback string, err error) {
	if e.emb == nil {
		return nil, "semantic search is off on this edge (no embedding model); answered by keyword search", nil
	}
	if e.m.vindex == nil || e.m.vindex.Len() == 0 {
		return nil, fmt.Sprintf("no vectors of model %s yet (embeddings trail indexing); answered by keyword search", e.m.model), nil
	}
	vs, err := e.emb.Embed(ctx, []string{query})
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	switch {
	case errors.Is(err, embed.ErrUnavailable):
		e.logger.Warn("embedder unavailable; answering by keyword search", "model", e.m.model, "err", err)
		return nil, fmt.Sprintf("embedding model %s is unavailable; answered by keyword search", e.m.model), nil
	case err != nil:
		e.logger.Warn("embedding the query failed; answering by keyword search", "model", e.m.model, "err", err)
		return nil, fmt.Sprintf("embedding the query with %s failed; answered by keyword search", e.m.model), nil
	case len(vs) != 1 || len(vs[0]) != e.m.vindex.Dimensions():
		e.logger.Warn("embedder returned a vector of the wrong shape; answering by keyword search", "model", e.m.model)
		return nil, fmt.Sprintf("embedding model %s returned an unusable vector; answered by keyword search", e.m.model), nil
	}
	return vs[0], "", nil
}

// keywordHits runs the keyword index over the documents in sc, each
// score multiplied by prior (when not nil).
func (m *Materialiser) keywordHits(query string, depth int, sc docScope, prior func(string) float64) []search.Hit {
	weight := prior
	if sc.narrows() {
		// The allowed set is taken under m.mu and released before the
		// index is searched, because writers lock m.mu and then the
		// index: holding them the other way round could deadlock.
		allowed := m.filtered(sc)
		weight = func(id string) float64 {
			switch {
			case !allowed[id]:
				return 0
			case prior != nil:
				return prior(id)
			}
			return 1
		}
	}
	return m.index.SearchWeighted(query, depth, weight)
}

// addKeywordScores puts into scores the BM25F score of each fused
// candidate, kw's hits and the semantic hits sem, that has one (a
// candidate no query term matches has none, as fusion expects). Those of
// kw come with it; the semantic side's others are looked up, where
// ranking every document that holds a query term to have them took most
// of a hybrid search's time (40 of 50 ms with 100,000 memories).
func addKeywordScores(ix *search.Index, query string, sem, kw []search.Hit, scores map[string]float64) {
	for _, h := range kw {
		scores[h.ID] = h.Score
	}
	var ids []string
	for _, h := range sem {
		if _, ok := scores[h.ID]; !ok {
			ids = append(ids, h.ID)
		}
	}
	for i, s := range ix.Scores(query, ids) {
		if s > search.KeywordFloor {
			scores[ids[i]] = s
		}
	}
}

// semHit is a semantic hit's best chunk and the SHA-256 of the content its
// vectors embed.
type semHit struct {
	vector.Hit
	sha string
}

// semanticHits searches the vector index over the documents in sc,
// and scores the documents of also (keyword candidates) that the search
// did not return, so fusion knows every candidate's cosine; chunks holds
// the best chunk of each. It holds m.mu's read lock across the search:
// the vector index is only written under m.mu, so what it returns agrees
// with m.docs.
func (m *Materialiser) semanticHits(qv []float32, depth int, sc docScope, also []search.Hit) (hits []search.Hit, chunks map[string]semHit) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var allow func(string) bool
	if sc.narrows() {
		// Called from the search's goroutines; m.docs cannot change while
		// the read lock is held, so concurrent reads are safe.
		allow = func(id string) bool {
			d := m.docs[id]
			return d != nil && sc.admits(d)
		}
	}
	vhits := m.vindex.Search(qv, depth, allow)
	hits = make([]search.Hit, len(vhits))
	chunks = make(map[string]semHit, len(vhits)+len(also))
	for i, h := range vhits {
		hits[i] = search.Hit{ID: h.ID, Score: h.Score}
		chunks[h.ID] = semHit{h, m.vecSHALocked(h.ID)}
	}
	for _, h := range also {
		if _, ok := chunks[h.ID]; ok {
			continue
		}
		if vh, ok := m.vindex.Score(qv, h.ID); ok {
			chunks[h.ID] = semHit{vh, m.vecSHALocked(h.ID)}
		}
	}
	return hits, chunks
}

// vecSHALocked is the SHA-256 of the content key's vectors embed.
func (m *Materialiser) vecSHALocked(key string) string {
	if vs := m.vecs[key]; vs != nil {
		return vs.sha
	}
	return ""
}

// chunkHeading names the section a chunk starting at line is in: the
// heading path of the indexer's chunk there, else the innermost markdown
// heading around the line.
func chunkHeading(d *doc, line int) string {
	for _, c := range d.rec.Chunks {
		if c.StartLine == line && len(c.HeadingPath) > 0 {
			return c.HeadingPath[len(c.HeadingPath)-1]
		}
	}
	heading := ""
	for _, h := range d.rec.Headings {
		if h.Line <= line && line <= h.EndLine {
			heading = h.Text // later headings around the line are deeper
		}
	}
	return heading
}

// maxSectionContent bounds the files whose hits look for their keyword
// section: scanning a larger one costs more than the rest of the query.
const maxSectionContent = 1 << 20

// keywordSection is the section of d with the most query words: its
// indexer chunks, else its markdown sections (from a heading to the next).
// It is nil when no section holds a query word (the document matched on
// its path or title).
func keywordSection(d *doc, content string, qterms []string) *tools.Section {
	if len(qterms) == 0 || content == "" {
		return nil
	}
	type span struct {
		heading    string
		start, end int
	}
	var spans []span
	for _, c := range d.rec.Chunks {
		h := ""
		if len(c.HeadingPath) > 0 {
			h = c.HeadingPath[len(c.HeadingPath)-1]
		}
		spans = append(spans, span{h, c.StartLine, c.EndLine})
	}
	if len(spans) == 0 {
		hs := d.rec.Headings
		for i, h := range hs {
			end := h.EndLine
			if i+1 < len(hs) {
				end = hs[i+1].Line - 1
			}
			spans = append(spans, span{h.Text, h.Line, end})
		}
	}
	if len(spans) == 0 {
		return nil
	}
	lines := strings.Split(content, "\n")
	best, bestScore := -1, 0
	for i, s := range spans {
		if s.start < 1 || s.end < s.start || s.start > len(lines) {
			continue
		}
		text := strings.Join(lines[s.start-1:min(s.end, len(lines))], "\n")
		score := termScore(search.Tokenize(s.heading), qterms) * 2
		if mayHoldTerm(text, qterms) {
			score += termScore(search.Tokenize(text), qterms)
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return nil
	}
	s := spans[best]
	return &tools.Section{Heading: s.heading, LineRange: tools.LineRange{Start: s.start, End: s.end}}
}

// mayHoldTerm is false when no word of text can match a query term as
// termScore matches them: every word Tokenize makes is a piece of the
// text lower-cased without joiners, and a matching word holds the term or
// its first five letters. It spares tokenising the sections of a large
// file that do not.
func mayHoldTerm(text string, qterms []string) bool {
	bare := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, text)
	for _, q := range qterms {
		if strings.Contains(bare, q[:min(len(q), 5)]) {
			return true
		}
	}
	return false
}

// termScore scores words against the query terms: ten per distinct term
// present and one per occurrence, so a section with every term beats one
// repeating a single term. A word matches a term it equals or shares a
// prefix of at least five letters with, a cheap stand-in for stemming.
func termScore(words, qterms []string) int {
	score := 0
	for _, q := range qterms {
		n := 0
		for _, w := range words {
			if w == q || sharedStem(w, q) {
				n++
			}
		}
		if n > 0 {
			score += 10 + n
		}
	}
	return score
}

// sharedStem reports whether a and b agree up to the last two letters of
// the shorter, over five letters at least ("tokens"/"token",
// "configure"/"configuration").
func sharedStem(a, b string) bool {
	const minStem = 5
	n := min(len(a), len(b))
	if n < minStem {
		return false
	}
	p := 0
	for p < n && a[p] == b[p] {
		p++
	}
	return p >= max(minStem, n-2)
}
