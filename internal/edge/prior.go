package edge

import (
	"cmp"
	"slices"
	"sync"

	"github.com/cuedeck/cuedeck/pkg/core/origin"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// The origin prior (issue 18): a documentation site holds each page once
// in its own language and again in each translation, and blog posts
// retell what its pages say; a translation keeps the page's code and
// identifiers and is often shorter, so keyword search may rank it, or a
// post, above the page itself. read_context multiplies the score of a
// page in another language than its repo's default by TranslationPrior,
// and of a post by PostPrior, unless the query asks for them: written in
// or naming that language, or mentioning translations, a blog, news, a
// post or an announcement (origin.AsksOf). A document's origin is read
// from its path and frontmatter when it is materialised (origin.Of);
// its repo's default language is the most common among the repo's pages
// (those that say none counting as one more language), recounted when
// the documents change.
const (
	TranslationPrior = 0.5
	PostPrior        = 0.9
)

// priorCache holds what the prior needs of the documents until they
// change.
type priorCache struct {
	mu  sync.Mutex
	rev uint64
	set bool
	// marked holds the documents the prior may weigh: in another
	// language than their repo's default, or posts. It is replaced, never
	// changed, so a query reads it without a lock.
	marked map[string]origin.Origin
}

// docOrigin is d's origin when it is a page (markdown or text); code and
// cards have none.
func docOrigin(rec *events.DocRecord) origin.Origin {
	if rec.Kind != events.DocMarkdown && rec.Kind != events.DocText {
		return origin.Origin{}
	}
	return origin.Of(rec.Path, rec.Frontmatter)
}

// markedLocked is the documents the prior may weigh, each with the
// language that sets it apart ("" when none does). The caller holds m.mu
// (read).
func (m *Materialiser) markedLocked() map[string]origin.Origin {
	c := &m.prior
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set && c.rev == m.rev {
		return c.marked
	}
	counts := map[string]map[string]int{} // repo → language → pages
	for _, d := range m.docs {
		if d.rec.Skip != nil || (d.rec.Kind != events.DocMarkdown && d.rec.Kind != events.DocText) {
			continue
		}
		if counts[d.rec.Repo] == nil {
			counts[d.rec.Repo] = map[string]int{}
		}
		counts[d.rec.Repo][d.origin.Lang]++
	}
	defaults := make(map[string]string, len(counts))
	for repo, byLang := range counts {
		langs := make([]string, 0, len(byLang))
		for l := range byLang {
			langs = append(langs, l)
		}
		// Most pages first; a tie goes to "" and then in name order, so
		// every edge picks alike.
		slices.SortFunc(langs, func(a, b string) int { return cmp.Or(cmp.Compare(byLang[b], byLang[a]), cmp.Compare(a, b)) })
		defaults[repo] = langs[0]
	}
	marked := map[string]origin.Origin{}
	for key, d := range m.docs {
		o := d.origin
		if o.Lang == defaults[d.rec.Repo] {
			o.Lang = ""
		}
		if o != (origin.Origin{}) {
			marked[key] = o
		}
	}
	c.rev, c.set, c.marked = m.rev, true, marked
	return marked
}

// priorFor returns the weight of each document key for query, or nil when
// every document weighs 1. Posts are weighed only when posts is set:
// keyword mode weighs them, the fused modes do not, since fused scores lie
// close together in [0, 1], where PostPrior cost the questions a post
// answers more than it gained the others (task's docs, hybrid, asked as
// keywords: hit@1 0.810 -> 0.801).
func (m *Materialiser) priorFor(query string, posts bool) func(key string) float64 {
	m.mu.RLock()
	marked := m.markedLocked()
	m.mu.RUnlock()
	if len(marked) == 0 {
		return nil
	}
	asks := origin.AsksOf(query)
	return func(key string) float64 {
		o, ok := marked[key]
		if !ok {
			return 1
		}
		w := 1.0
		if o.Lang != "" && !asks.Lang(o.Lang) {
			w *= TranslationPrior
		}
		if posts && o.Post && !asks.Posts {
			w *= PostPrior
		}
		return w
	}
}

// weigh multiplies each hit's score by prior, which the caller then
// sorts (boostLocked).
func weigh(hits []search.Hit, prior func(string) float64) {
	if prior == nil {
		return
	}
	for i := range hits {
		hits[i].Score *= prior(hits[i].ID)
	}
}
