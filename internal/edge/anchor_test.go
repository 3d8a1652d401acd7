package edge

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// serverGo is a Go file with what real code has around declarations: a
// floating comment, doc comments, a method of the same name on two types.
const serverGo = `// Package server runs the daemon.
package server

import (
	"os"
	"os/signal"
)

// ---- lifecycle ----

// makeShutdownCh returns a channel closed on the first
// interrupt or terminate signal.
func makeShutdownCh() <-chan struct{} {
	ch := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		<-sig
		close(ch)
	}()
	return ch
}

// Config is the server's configuration.
type Config struct {
	Addr string
}

// Index holds documents.
type Index struct{ docs []string }

// Search returns the documents holding q.
func (ix *Index) Search(q string) []string {
	return ix.docs
}

// Lookup finds one document.
func (ix Index) Lookup(id string) string { return id }

// Cache remembers answers.
type Cache struct{}

// Search answers from the cache.
func (c *Cache) Search(q string) []string { return nil }

var (
	defaultAddr = ":8080"
	debug       bool
)
`

// linesOf is lines first..last of s (1-indexed, inclusive).
func linesOf(s string, first, last int) string {
	return strings.Join(strings.Split(s, "\n")[first-1:last], "\n")
}

func TestReadDocGoSymbols(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.put(codeRecord("app", "internal/server/server.go", serverGo)))

	for _, tc := range []struct {
		anchors     []string
		first, last int
	}{
		// The doc comment is in, the floating "---- lifecycle ----" is not.
		{[]string{"func makeShutdownCh", "makeShutdownCh", "makeShutdownCh()", "#makeShutdownCh"}, 11, 22},
		{[]string{"type Config", "Config", "struct Config"}, 24, 27},
		{[]string{"func (*Index).Search", "(*Index).Search", "Index.Search", "*Index.Search", "func (ix *Index) Search"}, 32, 35},
		{[]string{"func (Index).Lookup", "Index.Lookup", "Lookup"}, 37, 38},
		{[]string{"var (defaultAddr, debug)", "defaultAddr", "debug"}, 46, 49},
	} {
		want := linesOf(serverGo, tc.first, tc.last)
		for _, anchor := range tc.anchors {
			res := r.read(map[string]any{"path": "internal/server/server.go", "anchor": anchor})
			if res.Content != want || res.LineRange == nil || *res.LineRange != (tools.LineRange{Start: tc.first, End: tc.last}) {
				t.Errorf("anchor %q: lines %+v\n%s\nwant lines %d-%d\n%s", anchor, res.LineRange, res.Content, tc.first, tc.last, want)
				continue
			}
			if res.Anchor == nil || *res.Anchor != anchor || res.Hash != events.SHA256Hex([]byte(want)) {
				t.Errorf("anchor %q: %+v", anchor, res)
			}
		}
	}

	// Two methods are called Search: the bare name is ambiguous.
	te := r.readErr(map[string]any{"path": "internal/server/server.go", "anchor": "Search"})
	if te.Code != tools.CodeInvalidParams || !slices.Equal(te.Data["symbols"].([]string), []string{"func (*Index).Search", "func (*Cache).Search"}) {
		t.Fatalf("ambiguous anchor: %v", te)
	}
	if res := r.read(map[string]any{"path": "internal/server/server.go", "anchor": "Cache.Search"}); res.LineRange.Start != 43 {
		t.Fatalf("Cache.Search: %+v", res.LineRange)
	}

	te = r.readErr(map[string]any{"path": "internal/server/server.go", "anchor": "makeShutdwnCh"})
	if te.Code != tools.CodeInvalidParams || te.Data["suggestion"] != "Did you mean 'makeShutdownCh'?" ||
		!strings.Contains(te.Data["detail"].(string), "not a symbol of internal/server/server.go") {
		t.Fatalf("unknown symbol: %v", te)
	}
	wantSymbols := []string{"package server", "func makeShutdownCh", "type Config", "type Index", "func (*Index).Search",
		"func (Index).Lookup", "type Cache", "func (*Cache).Search", "var (defaultAddr, debug)"}
	if got := te.Data["symbols"].([]string); !slices.Equal(got, wantSymbols) {
		t.Fatalf("listed symbols %q, want %q", got, wantSymbols)
	}

	// read_context names the file's types first, by anchors that open them.
	hits := r.search(map[string]any{"query": "shutdown signal", "mode": "keyword"})
	if len(hits) != 1 || !slices.Equal(hits[0].Anchors, []string{"Config", "Index", "Cache"}) {
		t.Fatalf("read_context anchors: %+v", hits)
	}
	for _, a := range append(hits[0].Anchors, hits[0].Section.Heading) {
		if res := r.read(map[string]any{"path": hits[0].Path, "anchor": a}); res.LineRange == nil {
			t.Errorf("anchor %q of read_context does not open: %+v", a, res)
		}
	}
}

// TestReadDocSymbolSpansItsChunks: a declaration the indexer cut into
// several chunks (a small budget) is one symbol, and a class holds its
// methods.
func TestReadDocSymbolSpansItsChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString("import os\n\n\n# Loads a file.\n@cached\ndef load(path):\n")
	for i := range 40 {
		b.WriteString("    step_" + strings.Repeat("x", i%7) + "(path, os.sep)\n\n")
	}
	b.WriteString("\n\nclass Store(Base):\n    \"\"\"Keeps things.\"\"\"\n\n    def __init__(self):\n        self.items = []\n\n    def get(self, key):\n        return self.items[key]\n\n\ndef get(key):\n    return None\n")
	src := b.String()
	rec := docparse.BuildWith("app", "store.py", src, docparse.ChunkOptions{MaxTokens: 60})
	rec.SHA256, rec.Size, rec.SourceSeq, rec.Content = events.SHA256Hex([]byte(src)), int64(len(src)), 1, src
	rec.ModTime, rec.IndexedAt = testTime, testTime
	loadChunks := 0
	for _, c := range rec.Chunks {
		if slices.Equal(c.HeadingPath, []string{"def load(path):"}) {
			loadChunks++
		}
	}
	if loadChunks < 3 {
		t.Fatalf("the fixture should cut load into several chunks, got %d", loadChunks)
	}
	h := newHarness(t)
	r := h.start("")
	r.wait(h.put(rec))
	lines := strings.Split(src, "\n")
	lineOf := func(prefix string) int {
		return slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) }) + 1
	}
	storeAt, topGetAt := lineOf("class Store"), lineOf("def get(key)")
	loadEnd := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "    step_") {
			loadEnd = i + 1
		}
	}
	getEnd := lineOf("        return self.items[key]")
	for _, tc := range []struct {
		anchor      string
		first, last int
	}{
		{"load", lineOf("# Loads a file."), loadEnd},
		{"def load(path):", lineOf("# Loads a file."), loadEnd},
		{"Store", storeAt, getEnd},
		{"class Store", storeAt, getEnd},
		{"Store.get", lineOf("    def get(self"), getEnd},
		{"Store.__init__", lineOf("    def __init__"), lineOf("        self.items = []")},
		{"def get(key):", topGetAt, topGetAt + 1},
	} {
		res := r.read(map[string]any{"path": "store.py", "anchor": tc.anchor})
		if *res.LineRange != (tools.LineRange{Start: tc.first, End: tc.last}) || res.Content != linesOf(src, tc.first, tc.last) {
			t.Errorf("anchor %q: lines %+v, want %d-%d:\n%s", tc.anchor, res.LineRange, tc.first, tc.last, res.Content)
		}
	}
	// A method keeps its indentation.
	if res := r.read(map[string]any{"path": "store.py", "anchor": "Store.get"}); !strings.HasPrefix(res.Content, "    def get(self, key):") {
		t.Errorf("method content %q", res.Content)
	}
	// "get" is a method and a function.
	if te := r.readErr(map[string]any{"path": "store.py", "anchor": "get"}); te.Code != tools.CodeInvalidParams || len(te.Data["symbols"].([]string)) != 2 {
		t.Errorf("ambiguous get: %v", te)
	}
}

func TestReadDocLineRanges(t *testing.T) {
	const ci = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: go test ./...\n"
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll([]events.DocRecord{
		codeRecord("app", ".github/workflows/ci.yml", ci),
		codeRecord("app", "internal/server/server.go", serverGo),
		mdRecord("app", "docs/auth.md", authDoc, nil),
	}))
	for _, tc := range []struct {
		path, anchor string
		first, last  int
	}{
		{".github/workflows/ci.yml", "L4-L5", 4, 5},
		{".github/workflows/ci.yml", "L4-5", 4, 5},
		{".github/workflows/ci.yml", "4-5", 4, 5},
		{".github/workflows/ci.yml", "#L4-L5", 4, 5},
		{".github/workflows/ci.yml", "L5", 5, 5},
		{".github/workflows/ci.yml", "L6-L99", 6, 7}, // clamped to the file
		{"internal/server/server.go", "L13-L14", 13, 14},
		{"docs/auth.md", "L5-L7", 5, 7},
	} {
		res := r.read(map[string]any{"path": tc.path, "anchor": tc.anchor})
		var content string
		switch tc.path {
		case ".github/workflows/ci.yml":
			content = ci
		case "docs/auth.md":
			content = authDoc
		default:
			content = serverGo
		}
		want := linesOf(content, tc.first, tc.last)
		if res.Content != want || *res.LineRange != (tools.LineRange{Start: tc.first, End: tc.last}) || res.Hash != events.SHA256Hex([]byte(want)) {
			t.Errorf("%s %s: %+v\n%q\nwant %d-%d %q", tc.path, tc.anchor, res.LineRange, res.Content, tc.first, tc.last, want)
		}
	}
	for anchor, want := range map[string]string{
		"L99":     "has 7 lines",
		"L5-L4":   "is empty",
		"L0":      "is empty",
		"summary": "has no headings or symbols",
	} {
		te := r.readErr(map[string]any{"path": ".github/workflows/ci.yml", "anchor": anchor})
		if detail, _ := te.Data["detail"].(string); te.Code != tools.CodeInvalidParams || !strings.Contains(detail, want) {
			t.Errorf("anchor %q: %v, want -32602 saying %q", anchor, te, want)
		}
	}
}

func TestReadDocDotPathsAndCards(t *testing.T) {
	const contributing = "# Contributing\n\n## Tests\n\nRun make test.\n"
	const card = "---\nid: abc123\ntitle: Fix login\nstatus: todo\n---\n# Fix login\n\n## Acceptance\n\nUsers stay signed in.\n"
	h := newHarness(t)
	r := h.start("")
	cardRec := mdRecord("app", ".cuedeck/cards/abc123.md", card, map[string]any{"id": "abc123"})
	cardRec.Kind = events.DocCard
	r.wait(h.putAll([]events.DocRecord{mdRecord("app", ".github/CONTRIBUTING.md", contributing, nil), cardRec}))

	if res := r.read(map[string]any{"path": ".github/CONTRIBUTING.md"}); res.Content != strings.TrimSpace(contributing) {
		t.Fatalf(".github read: %+v", res)
	}
	if res := r.read(map[string]any{"path": "app/.github/CONTRIBUTING.md", "anchor": "Tests"}); res.Content != "## Tests\n\nRun make test." {
		t.Fatalf(".github section: %+v", res)
	}
	if res := r.read(map[string]any{"path": ".cuedeck/cards/abc123.md"}); res.Content != strings.TrimSpace(card) {
		t.Fatalf("card read: %+v", res)
	}
	if res := r.read(map[string]any{"path": ".cuedeck/cards/abc123.md", "anchor": "acceptance"}); res.Content != "## Acceptance\n\nUsers stay signed in." {
		t.Fatalf("card section: %+v", res)
	}
}

func TestReadDocHugoHeadings(t *testing.T) {
	const doc = "# Collector {#collector}\n\n## Receivers {#receivers}\n\nReceivers take data in.\n\n## Exporters {: #exporters .wide}\n\nExporters send it out.\n"
	h := newHarness(t)
	r := h.start("")
	// An old record: indexed before the parser read attribute blocks.
	old := mdRecord("app", "docs/old.md", doc, nil)
	for i, t := range []string{"Collector  {#collector}", "Receivers  {#receivers}", "Exporters  {: #exporters .wide}"} {
		old.Headings[i].Text, old.Headings[i].Slug = t, "stale"
	}
	r.wait(h.putAll([]events.DocRecord{mdRecord("app", "docs/collector.md", doc, nil), old}))

	for _, p := range []string{"docs/collector.md", "docs/old.md"} {
		for _, anchor := range []string{"Receivers", "receivers", "#receivers", "Receivers {#receivers}", "Receivers  {#receivers}"} {
			res := r.read(map[string]any{"path": p, "anchor": anchor})
			if res.Content != "## Receivers {#receivers}\n\nReceivers take data in." || *res.LineRange != (tools.LineRange{Start: 3, End: 5}) {
				t.Errorf("%s %q: %+v", p, anchor, res)
			}
		}
		if res := r.read(map[string]any{"path": p, "anchor": "exporters"}); res.LineRange.Start != 7 {
			t.Errorf("%s kramdown id: %+v", p, res)
		}
		te := r.readErr(map[string]any{"path": p, "anchor": "Recievers"})
		if !slices.Equal(te.Data["headings"].([]string), []string{"Collector", "Receivers", "Exporters"}) || te.Data["suggestion"] != "Did you mean 'Receivers'?" {
			t.Errorf("%s unknown anchor: %v", p, te)
		}
	}
	for _, hit := range r.search(map[string]any{"query": "receivers exporters", "mode": "keyword"}) {
		if !slices.Equal(hit.Anchors, []string{"Collector", "Receivers", "Exporters"}) {
			t.Errorf("%s: read_context anchors %q", hit.Path, hit.Anchors)
		}
	}
}

func TestReadDocAnyFileStaysSafe(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll([]events.DocRecord{
		{Repo: "app", Path: "assets/logo.png", Size: 2048, SourceSeq: 1, IndexedAt: testTime,
			Skip: &events.Skip{Reason: events.SkipBinary, Detail: "binary content (NUL byte in the first 8 KiB)"}},
		codeRecord("app", "cmd/commands.go", "package main\n\nfunc run() {}\n"),
		mdRecord("app", "cmd/commands.md", "# Commands\n", nil),
		mdRecord("app", "docs/api.md", "# API\n", nil),
		codeRecord("app", "docs/apis.go", "package docs\n"),
	}))
	te := r.readErr(map[string]any{"path": "assets/logo.png"})
	if te.Code != tools.CodeFileNotFound || te.Message != "File Not Indexed" || te.Data["reason"] != "binary" {
		t.Fatalf("binary: %v", te)
	}
	if te := r.readErr(map[string]any{"path": "assets/logo.png", "anchor": "L1-L2"}); te.Message != "File Not Indexed" {
		t.Fatalf("binary with anchor: %v", te)
	}
	for path, want := range map[string]string{
		"../etc/passwd":         "'..'",
		"cmd/../../etc/shadow":  "'..'",
		"/etc/passwd":           "absolute",
		"/home/u/repo/main.go":  "absolute",
		".github/../../x.yml":   "'..'",
		"./cmd/commands.go":     "'.' segment",
		"cmd\\commands.go":      `'\'`,
		"cmd/commands.go\x00.x": "control character",
		"":                      "empty",
	} {
		te := r.readErr(map[string]any{"path": path})
		detail, _ := te.Data["detail"].(string)
		if te.Code != tools.CodeInvalidParams || !strings.Contains(detail, want) || strings.Contains(detail, "regular expression") {
			t.Errorf("%q: %v, want a plain -32602 mentioning %s", path, te, want)
		}
		if _, ok := te.Data["suggestion"]; ok {
			t.Errorf("%q: a refused path must not be resolved into a suggestion: %v", path, te)
		}
	}
	// Suggestions consider every path, those with the asked extension
	// first.
	for path, want := range map[string]string{
		"cmd/comands.go":  "cmd/commands.go",
		"cmd/comands.md":  "cmd/commands.md",
		"docs/api.go":     "docs/apis.go",
		"docs/api":        "docs/api.md",
		"assets/logo.jpg": "assets/logo.png",
	} {
		if te := r.readErr(map[string]any{"path": path}); te.Code != tools.CodeFileNotFound || te.Data["suggestion"] != "Did you mean '"+want+"'?" {
			t.Errorf("%s: %v, want the suggestion %s", path, te, want)
		}
	}
}
