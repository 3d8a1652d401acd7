package edge

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Phrases of structural queries the graph answers: reverse ones ask which
// documents link to or import the subject, forward ones what the subject
// links to or imports. search.DefaultClassifier decides that a query is
// structural; these decide which way it points.
var (
	reversePhrases = []string{"who imports", "what imports", "what calls", "who calls", "who uses", "dependents of", "callers of"}
	forwardPhrases = []string{"dependencies of", "deps of", "imports of"}
)

// structuralQuery splits a structural query into its direction and
// subject: the first word after the phrase, without quotes and final
// punctuation. ok is false when no phrase is known or no subject follows.
func structuralQuery(q string) (subject string, forward, ok bool) {
	lower := strings.ToLower(q)
	for _, set := range []struct {
		phrases []string
		forward bool
	}{{forwardPhrases, true}, {reversePhrases, false}} {
		for _, p := range set.phrases {
			i := strings.Index(lower, p)
			if i < 0 {
				continue
			}
			words := strings.Fields(q[i+len(p):])
			for len(words) > 1 && slices.Contains([]string{"the", "package", "file", "module", "doc"}, strings.ToLower(words[0])) {
				words = words[1:]
			}
			if len(words) == 0 {
				return "", false, false
			}
			s := strings.Trim(words[0], "`'\"“”‘’()[]<>,;:?!")
			s = strings.TrimSuffix(s, ".")
			s = strings.TrimPrefix(s, "./")
			return s, set.forward, s != ""
		}
	}
	return "", false, false
}

// graphHits answers a structural query from the documents' links and
// imports, or returns nil when it is not one the graph can answer. Hits
// carry modes ["graph"], the relation, and the line of the link as their
// section; filters apply as in every mode.
func (m *Materialiser) graphHits(query string, limit int, sc docScope) []tools.ContextHit {
	subject, forward, ok := structuralQuery(query)
	if !ok {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var hits []graphHit
	if forward {
		hits = m.dependenciesLocked(subject)
	} else {
		hits = m.dependentsLocked(subject)
	}
	slices.SortFunc(hits, func(a, b graphHit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.d.rec.Repo, b.d.rec.Repo), strings.Compare(a.d.rec.Path, b.d.rec.Path))
	})
	out := make([]tools.ContextHit, 0, min(limit, len(hits)))
	for _, g := range hits {
		if g.d.rec.Skip != nil || !sc.admits(g.d) {
			continue
		}
		h := m.hitLocked(g.d, g.score)
		h.Modes = []string{tools.ModeGraph}
		h.Relation = g.relation
		if g.line > 0 {
			h.Section = &tools.Section{Heading: chunkHeading(g.d, g.line), LineRange: tools.LineRange{Start: g.line, End: g.line}}
		}
		out = append(out, h)
		if len(out) == limit {
			break
		}
	}
	return out
}

type graphHit struct {
	d        *doc
	score    float64
	relation string
	line     int // of the link in d, 0 when not in d
}

// linkTargets are the names a link's target goes by: as written and, for
// a relative markdown link, resolved against the linking file's
// directory; an @doc reference also with ".md". External links have none.
func linkTargets(from string, l events.Link) []string {
	t := strings.TrimPrefix(l.Target, "./")
	switch l.Kind {
	case "external":
		return nil
	case "link":
		if t == "" {
			return nil // an anchor of the same document
		}
		if strings.HasPrefix(t, "/") {
			return []string{strings.TrimPrefix(t, "/")}
		}
		return []string{t, path.Join(path.Dir(from), t)}
	case "ref":
		if !strings.HasSuffix(t, ".md") {
			return []string{t, t + ".md"}
		}
	}
	return []string{t}
}

// namesSubject reports whether a path or import path is the subject: equal
// to it, ending with it after a '/', or its file name, with or without
// the extension when the subject has none.
func namesSubject(name, subject string) bool {
	if name == subject || strings.HasSuffix(name, "/"+subject) {
		return true
	}
	base := path.Base(name)
	if base == subject {
		return true
	}
	return path.Ext(subject) == "" && strings.TrimSuffix(base, path.Ext(base)) == subject && path.Ext(base) != ""
}

// dependentsLocked are the documents with a link or import naming subject,
// scored by how many they have.
func (m *Materialiser) dependentsLocked(subject string) []graphHit {
	var hits []graphHit
	for _, d := range m.docs {
		var g *graphHit
		for li, l := range d.rec.Links {
			for _, t := range d.targets[li] {
				// A link into a directory's file links to the directory
				// (a package) too; an import names a package already.
				inDir := l.Kind != "import" && namesSubject(path.Dir(t), subject)
				if t == d.rec.Path || !namesSubject(t, subject) && !inDir {
					continue
				}
				if g == nil {
					verb := "links to "
					if l.Kind == "import" {
						verb = "imports "
					}
					hits = append(hits, graphHit{d: d, relation: verb + l.Target, line: l.Line})
					g = &hits[len(hits)-1]
				}
				g.score++
				break
			}
		}
	}
	return hits
}

// dependenciesLocked are the documents the subject links to or imports.
// The subject is a file (path, suffix or name) or, failing that, a
// directory, whose files' links all count (a Go package). An import names
// the directory that is the longest suffix of its path; the package is
// represented by its doc.go, the file named after it, or its first file.
func (m *Materialiser) dependenciesLocked(subject string) []graphHit {
	var subjects []*doc
	for _, d := range m.docs {
		if namesSubject(d.rec.Path, subject) {
			subjects = append(subjects, d)
		}
	}
	if len(subjects) == 0 {
		for _, d := range m.docs {
			if dir := path.Dir(d.rec.Path); dir == subject || strings.HasSuffix(dir, "/"+subject) {
				subjects = append(subjects, d)
			}
		}
	}
	if len(subjects) == 0 {
		return nil
	}
	byDir := make(map[string][]*doc)
	for _, d := range m.docs {
		dir := path.Dir(d.rec.Path)
		byDir[dir] = append(byDir[dir], d)
	}
	seen := make(map[*doc]int) // doc → index in hits
	var hits []graphHit
	add := func(d, from *doc, l events.Link) {
		if slices.Contains(subjects, d) {
			return
		}
		if i, ok := seen[d]; ok {
			hits[i].score++
			return
		}
		seen[d] = len(hits)
		verb := "linked from "
		if l.Kind == "import" {
			verb = "imported by "
		}
		hits = append(hits, graphHit{d: d, score: 1, relation: verb + from.rec.Path + " as " + l.Target})
	}
	for _, s := range subjects {
		for i, l := range s.rec.Links {
			if l.Kind == "import" {
				if d := packageDoc(byDir, l.Target); d != nil {
					add(d, s, l)
				}
				continue
			}
			for _, t := range s.targets[i] {
				if keys := m.byPath[path.Clean(t)]; len(keys) > 0 {
					add(m.docs[keys[0]], s, l)
					break
				}
			}
		}
	}
	return hits
}

// packageDoc is the file representing the directory whose path is the
// longest suffix of the import path, or nil.
func packageDoc(byDir map[string][]*doc, importPath string) *doc {
	for suffix := importPath; suffix != ""; {
		if ds := byDir[suffix]; len(ds) > 0 {
			name := path.Base(suffix)
			return slices.MinFunc(ds, func(a, b *doc) int {
				rank := func(d *doc) int {
					switch path.Base(d.rec.Path) {
					case "doc.go":
						return 0
					case name + ".go":
						return 1
					}
					return 2
				}
				return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.rec.Path, b.rec.Path))
			})
		}
		_, rest, ok := strings.Cut(suffix, "/")
		if !ok {
			break
		}
		suffix = rest
	}
	return nil
}
