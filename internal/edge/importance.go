package edge

import (
	"bufio"
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/importance"
	"github.com/cuedeck/cuedeck/pkg/core/search"
)

// File importance (seed 000 §5 strategy 3, package importance) from what
// the edge has materialised, per repo:
//
//   - references: the repo's other files that link to a file (markdown
//     links and @doc references, resolved as the graph route resolves
//     them) or import it (Go imports of the module named by the repo's
//     go.mod, relative imports of other languages; importance.References);
//   - recent changes: the times the file's content changed, which the
//     indexer carries from record to record (DocRecord.Changed), decayed
//     by age; being in the bucket, they are the same on every edge and
//     survive a lost disk;
//   - error stacks: the files the extractors found in the stack traces of
//     failed tool output (MemoryRecord.ErrorFiles, matched to the repo's
//     files by path suffix), decayed by when they were seen. Only batches
//     that yielded a memory carry them to the edge.

// ImportanceBoost is the weight of importance in read_context's order:
// hits are ordered by score × (1 + ImportanceBoost × importance). It only
// reorders hits whose scores are within 1% of each other, whatever the
// mode's scale, so relevance decides and importance breaks near-ties.
// The score reported stays the relevance score.
const ImportanceBoost = 0.01

// The time terms decay from the repo's latest change or error stack, not
// from the clock: scores are then a function of the materialised state
// alone, so every edge, and an edge rebuilt from the buckets, answers
// read_context byte for byte alike. "Recent" means recent in the repo's
// own activity; normalising per repo makes the scale of ages matter no
// more than that.

// importanceCache holds each repo's scores until the documents or the
// memories change.
type importanceCache struct {
	mu    sync.Mutex
	repos map[string]*repoImportance
}

type repoImportance struct {
	rev, mrev uint64
	scores    map[string]float64 // path → score
}

// importanceLocked is the importance of d's path in its repo, rounded to
// three decimals. The caller holds m.mu (read).
func (m *Materialiser) importanceLocked(d *doc) float64 {
	return m.repoImportanceLocked(d.rec.Repo)[d.rec.Path]
}

// repoImportanceLocked is repo's scores, from the cache when still
// current. The caller holds m.mu (read); the memories' lock is taken
// inside, after the cache's.
func (m *Materialiser) repoImportanceLocked(repo string) map[string]float64 {
	m.imp.mu.Lock()
	defer m.imp.mu.Unlock()
	c := m.imp.repos[repo]
	if c != nil && c.rev == m.rev && c.mrev == m.mrev {
		return c.scores
	}
	if m.imp.repos == nil {
		m.imp.repos = make(map[string]*repoImportance)
	}
	c = &repoImportance{rev: m.rev, mrev: m.mrev, scores: m.computeImportanceLocked(repo)}
	m.imp.repos[repo] = c
	return c.scores
}

// computeImportanceLocked scores every file of repo as of its latest
// change or error stack.
func (m *Materialiser) computeImportanceLocked(repo string) map[string]float64 {
	var files []importance.File
	var docs []*doc
	inRepo := make(map[string]bool)
	module := ""
	for _, d := range m.docs {
		if d.rec.Repo != repo {
			continue
		}
		docs = append(docs, d)
		inRepo[d.rec.Path] = true
		f := importance.File{Path: d.rec.Path}
		for i, l := range d.rec.Links {
			if l.Kind == "import" {
				f.Imports = append(f.Imports, l.Target)
			} else if len(d.targets[i]) > 0 {
				f.Links = append(f.Links, d.targets[i])
			}
		}
		files = append(files, f)
		if d.rec.Path == "go.mod" {
			module = d.module
		}
	}
	refs := importance.References(files, module)
	errs := m.errorStacks(repo, func(p string) bool { return inRepo[p] })
	signals := make(map[string]importance.Signals, len(docs))
	var latest time.Time
	for _, d := range docs {
		sig := importance.Signals{References: refs[d.rec.Path], Changes: d.rec.Changed, Errors: errs[d.rec.Path]}
		signals[d.rec.Path] = sig
		for _, t := range append(slices.Clone(sig.Changes), sig.Errors...) {
			if t.After(latest) {
				latest = t
			}
		}
	}
	if latest.IsZero() {
		latest = time.Unix(0, 0) // no time terms at all; any fixed instant
	}
	now := latest
	out := make(map[string]float64, len(signals))
	for p, s := range importance.Scores(signals, importance.Options{Now: now}) {
		if s.Score > 0 {
			out[p] = math.Round(s.Score*1000) / 1000
		}
	}
	return out
}

// errorStacks are, per file of repo (has), the times a stack named it:
// once per extraction, however many memories it wrote.
func (m *Materialiser) errorStacks(repo string, has func(string) bool) map[string][]time.Time {
	s := m.mems
	s.mu.RLock()
	defer s.mu.RUnlock()
	type sighting struct {
		path string
		at   time.Time
	}
	seen := make(map[sighting]bool)
	out := make(map[string][]time.Time)
	for k := range s.byRepo[repo] {
		r := &s.byKey[k].rec
		for _, f := range r.ErrorFiles {
			p, ok := importance.MatchPath(f, has)
			if !ok || seen[sighting{p, r.ErrorSeen}] {
				continue
			}
			seen[sighting{p, r.ErrorSeen}] = true
			out[p] = append(out[p], r.ErrorSeen)
		}
	}
	return out
}

// goModule is the module path a go.mod declares, "" if none.
func goModule(gomod string) string {
	sc := bufio.NewScanner(strings.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// boostLocked orders ranked by score × (1 + ImportanceBoost × importance),
// stably. The caller holds m.mu (read).
func (m *Materialiser) boostLocked(ranked []search.Hit) []search.Hit {
	type boosted struct {
		h search.Hit
		s float64
	}
	bs := make([]boosted, len(ranked))
	for i, h := range ranked {
		bs[i] = boosted{h, h.Score}
		if d, ok := m.docs[h.ID]; ok {
			bs[i].s = h.Score * (1 + ImportanceBoost*m.importanceLocked(d))
		}
	}
	slices.SortStableFunc(bs, func(a, b boosted) int { return cmp.Compare(b.s, a.s) })
	out := make([]search.Hit, len(bs))
	for i, b := range bs {
		out[i] = b.h
	}
	return out
}

// Importance is the importance of path in repo, in [0, 1]: what get_scene
// orders the nodes of one depth by (scenes.ImportanceSource). An empty
// repo means the edge's default repo, or else the highest score of path
// in any repo. Callers check access to repo before asking.
func (e *Edge) Importance(repo, path string) float64 {
	if e.m == nil {
		return 0
	}
	if repo == "" {
		repo = e.defaultRepo
	}
	m := e.m
	m.mu.RLock()
	defer m.mu.RUnlock()
	best := 0.0
	for _, k := range m.byPath[path] {
		if d := m.docs[k]; d != nil && (repo == "" || d.rec.Repo == repo) {
			best = max(best, m.importanceLocked(d))
		}
	}
	return best
}
