package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/core/card"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Kinds of generated files.
const (
	KindMarkdown   = "markdown"
	KindGo         = "go"
	KindPython     = "python"
	KindTypeScript = "typescript"
	KindCard       = "card"
)

// File is one generated file.
type File struct {
	// Path is slash-separated, relative to the corpus root.
	Path string
	Kind string
	// Marker is a word only this file contains, so that a keyword search
	// for it finds this file and no other.
	Marker string
	// Heading is a second-level heading of a markdown file (an anchor for
	// read_doc), empty for code.
	Heading string
	Bytes   int
}

// Corpus is a generated workspace.
type Corpus struct {
	Root  string
	Files []File
	// Cards are the ids of the task cards; Active is the one with status
	// active, whose scene get_scene packs.
	Cards  []string
	Active string
	// Queries are keyword queries drawn from the corpus vocabulary: words
	// many files share, as an agent would search for a concept.
	Queries []string
	Bytes   int64
}

// CountKind is the number of files of kind.
func (c *Corpus) CountKind(kind string) int {
	n := 0
	for _, f := range c.Files {
		if f.Kind == kind {
			n++
		}
	}
	return n
}

// The vocabulary of the generated project: a backend with services,
// storage and a web front. Topics name directories and appear in prose and
// identifiers, so a keyword query hits a realistic share of files.
var (
	topics = []string{"auth", "billing", "cache", "search", "storage", "scheduler", "gateway", "ledger",
		"metrics", "session", "upload", "webhook", "invoice", "catalog", "inventory", "shipping",
		"notification", "profile", "audit", "payment", "quota", "tenant", "export", "import"}
	nouns = []string{"request", "token", "client", "server", "handler", "queue", "worker", "record", "index",
		"snapshot", "config", "policy", "timeout", "retry", "batch", "stream", "cursor", "schema",
		"migration", "endpoint", "middleware", "connection", "transaction", "checksum", "replica",
		"partition", "lease", "deadline", "backoff", "buffer", "payload", "header", "signature"}
	verbs = []string{"validates", "retries", "caches", "streams", "rejects", "rotates", "persists", "shards",
		"batches", "compacts", "replays", "throttles", "encrypts", "signs", "verifies", "indexes",
		"flushes", "drains", "schedules", "reconciles", "publishes", "subscribes", "expires", "refreshes"}
	adjectives = []string{"idempotent", "stale", "durable", "concurrent", "bounded", "optimistic", "eventual",
		"expired", "pending", "partial", "encrypted", "compressed", "sorted", "sharded", "cached",
		"transient", "distributed", "atomic", "lazy", "incremental"}
	sections = []string{"Overview", "Architecture", "Configuration", "Failure modes", "Retry policy",
		"Data model", "Migration", "Operations", "Security", "Testing", "Performance", "Open questions",
		"Deployment", "Monitoring", "Rollback", "Limits", "Examples", "Glossary"}
	people = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"}
	tags   = []string{"backend", "frontend", "infra", "bug", "perf", "security", "docs", "api"}
)

// marker is a word that no generated text contains except the file with
// index i: a fixed prefix and the index spelled in letters.
func marker(seed uint64, i int) string {
	var b strings.Builder
	b.WriteString("zq")
	b.WriteByte(byte('a' + seed%26))
	for _, d := range fmt.Sprint(i) {
		b.WriteByte(byte('a' + (d - '0')))
	}
	b.WriteString("x")
	return b.String()
}

type gen struct {
	r    *rand.Rand
	seed uint64
}

func (g *gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g *gen) sentence() string {
	s := fmt.Sprintf("The %s %s %s the %s %s", g.pick(topics), g.pick(nouns), g.pick(verbs), g.pick(adjectives), g.pick(nouns))
	switch g.r.IntN(4) {
	case 0:
		s += fmt.Sprintf(" before the %s %s", g.pick(nouns), g.pick([]string{"expires", "is flushed", "times out", "is retried"}))
	case 1:
		s += fmt.Sprintf(" so that every %s stays %s", g.pick(nouns), g.pick(adjectives))
	case 2:
		s += fmt.Sprintf(" when the %s service is %s", g.pick(topics), g.pick(adjectives))
	}
	return s + "."
}

func (g *gen) paragraph() string {
	n := 2 + g.r.IntN(5)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.sentence()
	}
	return strings.Join(parts, " ")
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// Generate writes a corpus of n files deterministic from seed under root
// (created if missing): markdown docs with headings, sections, code
// blocks and links between them; Go, Python and TypeScript sources; task
// cards under .cuedeck/cards with one active card whose body references
// docs; and .cuedeck/rules.md. n counts every file written.
func Generate(root string, n int, seed uint64) (*Corpus, error) {
	if n < minFiles {
		return nil, fmt.Errorf("bench: a corpus needs at least %d files, got %d", minFiles, n)
	}
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed: seed}
	c := &Corpus{Root: root}
	if err := os.MkdirAll(filepath.Join(root, ".cuedeck"), 0o755); err != nil {
		return nil, err
	}
	rules := "# Rules\n\n- Run go vet and the tests before committing.\n- Keep handlers idempotent: retries happen.\n"
	if err := os.WriteFile(filepath.Join(root, ".cuedeck", "rules.md"), []byte(rules), 0o644); err != nil {
		return nil, err
	}
	c.Files = append(c.Files, File{Path: ".cuedeck/rules.md", Kind: KindMarkdown, Heading: "", Bytes: len(rules)})
	c.Bytes += int64(len(rules))

	nCards := min(max(n/100, 10), 200)
	rest := n - 1 - nCards
	// Plan paths first so that docs can link to docs written later.
	type plan struct {
		path, kind string
		headings   []string
	}
	plans := make([]plan, rest)
	for i := range plans {
		topic := topics[i%len(topics)]
		var p plan
		switch r := g.r.IntN(100); {
		case r < 45:
			p.kind = KindMarkdown
			p.path = fmt.Sprintf("docs/%s/%s-%s-%d.md", topic, g.pick(nouns), g.pick(nouns), i)
			hs := 3 + g.r.IntN(4)
			used := map[string]bool{}
			for len(p.headings) < hs {
				h := g.pick(sections)
				if !used[h] {
					used[h] = true
					p.headings = append(p.headings, h)
				}
			}
		case r < 80:
			p.kind = KindGo
			p.path = fmt.Sprintf("internal/%s/%s_%d.go", topic, g.pick(nouns), i)
		case r < 90:
			p.kind = KindPython
			p.path = fmt.Sprintf("services/%s/%s_%d.py", topic, g.pick(nouns), i)
		default:
			p.kind = KindTypeScript
			p.path = fmt.Sprintf("web/src/%s/%s%d.ts", topic, title(g.pick(nouns)), i)
		}
		plans[i] = p
	}
	var docs []int
	for i, p := range plans {
		if p.kind == KindMarkdown {
			docs = append(docs, i)
		}
	}
	for i, p := range plans {
		m := marker(seed, len(c.Files))
		var body string
		heading := ""
		switch p.kind {
		case KindMarkdown:
			var b strings.Builder
			if g.r.IntN(3) == 0 {
				fmt.Fprintf(&b, "---\ntitle: %s %s\ntags: [%s, %s]\n---\n\n", title(topics[i%len(topics)]), g.pick(nouns), g.pick(tags), g.pick(tags))
			}
			fmt.Fprintf(&b, "# %s %s\n\n%s Reference: %s.\n\n", title(topics[i%len(topics)]), g.pick(nouns), g.paragraph(), m)
			for j, h := range p.headings {
				fmt.Fprintf(&b, "## %s\n\n%s\n\n", h, g.paragraph())
				if g.r.IntN(3) == 0 {
					fmt.Fprintf(&b, "### %s %s\n\n%s\n\n", title(g.pick(adjectives)), g.pick(nouns), g.paragraph())
				}
				if g.r.IntN(3) == 0 && len(docs) > 1 {
					other := plans[docs[g.r.IntN(len(docs))]]
					if other.path != p.path {
						rel, _ := filepath.Rel(filepath.Dir(p.path), other.path)
						fmt.Fprintf(&b, "See [%s](%s#%s) for the %s side.\n\n", other.headings[0], filepath.ToSlash(rel), anchorSlug(other.headings[0]), g.pick(topics))
					}
				}
				if j == 1 && g.r.IntN(2) == 0 {
					fmt.Fprintf(&b, "```go\n%s := %s.New%s(ctx, cfg)\nif err != nil {\n\treturn fmt.Errorf(\"%s: %%w\", err)\n}\n```\n\n",
						g.pick(nouns), topics[i%len(topics)], title(g.pick(nouns)), g.pick(verbs))
				}
			}
			body, heading = b.String(), p.headings[0]
		case KindGo:
			body = g.goFile(topics[i%len(topics)], m)
		case KindPython:
			body = g.pyFile(topics[i%len(topics)], m)
		case KindTypeScript:
			body = g.tsFile(topics[i%len(topics)], m)
		}
		if err := writeFile(root, p.path, body); err != nil {
			return nil, err
		}
		c.Files = append(c.Files, File{Path: p.path, Kind: p.kind, Marker: m, Heading: heading, Bytes: len(body)})
		c.Bytes += int64(len(body))
	}

	// Cards: a chain of dependencies here and there, one active card
	// referencing docs by section, as a person starting work would.
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	taken := map[string]bool{}
	for i := range nCards {
		m := marker(seed, len(c.Files))
		t := events.Task{
			Title:    fmt.Sprintf("%s the %s %s (%s)", title(g.pick(verbs)), g.pick(topics), g.pick(nouns), m),
			Status:   card.Statuses[g.r.IntN(3)],
			Priority: g.pick(card.Priorities),
			Created:  base.Add(time.Duration(i) * time.Hour), Updated: base.Add(time.Duration(i) * time.Hour),
		}
		if i == 0 {
			t.Status = "active"
		} else if t.Status == "active" {
			t.Status = "todo"
		}
		if g.r.IntN(2) == 0 {
			t.Assignee = g.pick(people)
		}
		t.Tags = []string{g.pick(tags)}
		t.ID = tasks.NewID(t.Created, t.Title, func(id string) bool { return taken[id] })
		taken[t.ID] = true
		if i > 0 && g.r.IntN(3) == 0 {
			t.DependsOn = []string{c.Cards[g.r.IntN(len(c.Cards))]}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s\n\n", g.paragraph())
		for k := 0; k < 2 && len(docs) > 0; k++ {
			d := plans[docs[g.r.IntN(len(docs))]]
			fmt.Fprintf(&b, "See @%s#%s.\n", d.path, d.headings[g.r.IntN(len(d.headings))])
		}
		data, err := card.Render(card.Card{Task: t, Body: b.String()})
		if err != nil {
			return nil, fmt.Errorf("bench: card: %w", err)
		}
		p := card.Path(t.ID)
		if err := writeFile(root, p, string(data)); err != nil {
			return nil, err
		}
		if i == 0 {
			c.Active = t.ID
		}
		c.Cards = append(c.Cards, t.ID)
		c.Files = append(c.Files, File{Path: p, Kind: KindCard, Marker: m, Bytes: len(data)})
		c.Bytes += int64(len(data))
	}

	// Queries an agent would type: a topic and a noun, a single noun, a
	// verb.
	for i := 0; len(c.Queries) < 8; i++ {
		var q string
		switch i % 3 {
		case 0:
			q = g.pick(topics) + " " + g.pick(nouns)
		case 1:
			q = g.pick(nouns)
		default:
			q = g.pick(adjectives) + " " + g.pick(nouns)
		}
		if !slices.Contains(c.Queries, q) {
			c.Queries = append(c.Queries, q)
		}
	}
	return c, nil
}

// anchorSlug is a heading as a GitHub-style link fragment.
func anchorSlug(h string) string { return strings.ReplaceAll(strings.ToLower(h), " ", "-") }

func writeFile(root, rel, content string) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

func (g *gen) goFile(topic, m string) string {
	var b strings.Builder
	typ := title(g.pick(nouns))
	fmt.Fprintf(&b, "// Package %s %s %s %s. Marker %s.\npackage %s\n\n", topic, g.pick(verbs), g.pick(adjectives), g.pick(nouns)+"s", m, topic)
	fmt.Fprintf(&b, "import (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"time\"\n\n\t\"example.com/app/internal/%s\"\n)\n\n", g.pick(topics))
	fmt.Fprintf(&b, "// Err%s is returned when the %s is %s.\nvar Err%s = errors.New(\"%s: %s %s\")\n\n", typ, g.pick(nouns), g.pick(adjectives), typ, topic, g.pick(adjectives), g.pick(nouns))
	fmt.Fprintf(&b, "// %s %s.\ntype %s struct {\n", typ, g.sentence(), typ)
	for range 3 + g.r.IntN(4) {
		fmt.Fprintf(&b, "\t%s %s\n", title(g.pick(nouns)), g.pick([]string{"string", "int", "time.Duration", "[]byte", "map[string]int", "*Client"}))
	}
	b.WriteString("}\n\n")
	for range 2 + g.r.IntN(4) {
		fn := title(g.pick(verbs)) + title(g.pick(nouns))
		fmt.Fprintf(&b, "// %s %s\n// %s\nfunc (x *%s) %s(ctx context.Context, %s string, timeout time.Duration) error {\n", fn, g.sentence(), g.sentence(), typ, fn, g.pick(nouns))
		fmt.Fprintf(&b, "\tctx, cancel := context.WithTimeout(ctx, timeout)\n\tdefer cancel()\n")
		fmt.Fprintf(&b, "\tif err := x.%s(ctx); err != nil {\n\t\treturn fmt.Errorf(\"%s %s: %%w\", err)\n\t}\n", title(g.pick(verbs)), g.pick(verbs), g.pick(nouns))
		fmt.Fprintf(&b, "\tfor i := 0; i < %d; i++ {\n\t\tif x.%s == nil {\n\t\t\treturn Err%s\n\t\t}\n\t}\n\treturn nil\n}\n\n", 1+g.r.IntN(9), title(g.pick(nouns)), typ)
	}
	return b.String()
}

func (g *gen) pyFile(topic, m string) string {
	var b strings.Builder
	cls := title(g.pick(nouns)) + title(g.pick(nouns))
	fmt.Fprintf(&b, "\"\"\"%s service: %s Marker %s.\"\"\"\n\nimport logging\nimport time\nfrom dataclasses import dataclass\n\nlog = logging.getLogger(%q)\n\n\n", title(topic), g.sentence(), m, topic)
	fmt.Fprintf(&b, "@dataclass\nclass %s:\n    \"\"\"%s\"\"\"\n\n", cls, g.sentence())
	for range 2 + g.r.IntN(3) {
		fmt.Fprintf(&b, "    %s: str = %q\n", g.pick(nouns), g.pick(adjectives))
	}
	for range 2 + g.r.IntN(3) {
		fmt.Fprintf(&b, "\n    def %s_%s(self, %s, retries=%d):\n        \"\"\"%s\"\"\"\n        for attempt in range(retries):\n            try:\n                return self._%s(%s)\n            except TimeoutError:\n                log.warning(\"%s %s, attempt %%d\", attempt)\n                time.sleep(0.1 * attempt)\n        raise RuntimeError(\"%s %s\")\n",
			g.pick(verbs), g.pick(nouns), g.pick(nouns), 1+g.r.IntN(5), g.sentence(), g.pick(verbs), g.pick(nouns), g.pick(nouns), g.pick(adjectives), g.pick(adjectives), g.pick(nouns))
	}
	return b.String()
}

func (g *gen) tsFile(topic, m string) string {
	var b strings.Builder
	iface := title(g.pick(nouns))
	fmt.Fprintf(&b, "// %s view: %s Marker %s.\nimport { api } from '../api';\n\nexport interface %s {\n", title(topic), g.sentence(), m, iface)
	for range 3 + g.r.IntN(3) {
		fmt.Fprintf(&b, "  %s: %s;\n", g.pick(nouns), g.pick([]string{"string", "number", "boolean", "Date"}))
	}
	b.WriteString("}\n\n")
	for range 2 + g.r.IntN(3) {
		fn := g.pick(verbs) + title(g.pick(nouns))
		fmt.Fprintf(&b, "/** %s */\nexport async function %s(id: string): Promise<%s> {\n  const res = await api.get(`/%s/${id}/%s`);\n  if (!res.ok) {\n    throw new Error('%s %s');\n  }\n  return (await res.json()) as %s;\n}\n\n",
			g.sentence(), fn, iface, topic, g.pick(nouns), g.pick(adjectives), g.pick(nouns), iface)
	}
	return b.String()
}
