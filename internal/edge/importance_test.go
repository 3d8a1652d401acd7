package edge

import (
	"cmp"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// shopExpected is the order a reader puts testdata/shop's files in, the
// same as package importance's fixture (pkg/core/importance): api.go is
// imported by every package but utils and was in the panic; auth.go was
// edited three times and is imported by api and billing; orders.go is
// where the panic happened; types.go is imported by four files; the README
// links to docs/api.md; nothing points to the rest, tied at zero in path
// order.
var shopExpected = []string{
	"internal/api/api.go",
	"internal/auth/auth.go",
	"internal/orders/orders.go",
	"internal/types/types.go",
	"docs/api.md",
	"README.md",
	"cmd/shop/main.go",
	"go.mod",
	"internal/billing/billing.go",
	"internal/utils/utils.go",
}

// shopRecord is the record an indexer writes for one file of the shop.
func shopRecord(path, content string) events.DocRecord {
	rec := docparse.Build("shop", path, content)
	rec.SHA256, rec.Size, rec.Content = events.SHA256Hex([]byte(content)), int64(len(content)), content
	rec.SourceSeq, rec.ModTime, rec.IndexedAt = 1, testTime, testTime
	return rec
}

// putShop writes testdata/shop into cue_docs as the indexer would after
// auth.go was edited three times in two days and types.go once three weeks
// ago, and returns the last revision.
func (h *harness) putShop() uint64 { return h.putShopEdited(nil) }

// putShopEdited is putShop with each file's content passed through edit.
func (h *harness) putShopEdited(edit func(path, content string) string) uint64 {
	now := time.Now()
	changed := map[string][]time.Time{
		"internal/auth/auth.go":   {now.Add(-40 * time.Hour), now.Add(-26 * time.Hour), now.Add(-3 * time.Hour)},
		"internal/types/types.go": {now.Add(-21 * 24 * time.Hour)},
	}
	h.t.Helper()
	var rev uint64
	root := filepath.Join("testdata", "shop")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		content := string(b)
		if edit != nil {
			content = edit(filepath.ToSlash(rel), content)
		}
		rec := shopRecord(filepath.ToSlash(rel), content)
		rec.Changed = changed[rec.Path]
		rev = h.put(rec)
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return rev
}

// putShopPanic writes the memory an extractor makes of a session whose
// test run panicked in orders.go, called from api.go.
func (h *harness) putShopPanic() uint64 {
	h.t.Helper()
	rec := memRec("shop", memory.KindExperience, "Check for a nil order before placing it", "Place panicked on a nil order",
		"sess-panic", "", []string{"internal/orders/orders.go"}, 0.5, 1, time.Now().Add(-time.Hour))
	rec.ErrorFiles = []string{"/home/ana/shop/internal/orders/orders.go", "/home/ana/shop/internal/api/api.go", "/usr/local/go/src/net/http/server.go"}
	rec.ErrorSeen = time.Now().Add(-time.Hour)
	return h.putMemory(rec)
}

// importanceOrder is the shop's files by the edge's importance, then path.
func (r *running) importanceOrder() ([]string, map[string]float64) {
	scores := make(map[string]float64)
	var ps []string
	for _, p := range shopExpected {
		scores[p] = r.e.Importance("shop", p)
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b string) int { return cmp.Or(cmp.Compare(scores[b], scores[a]), strings.Compare(a, b)) })
	return ps, scores
}

// The point 3 end to end: the shop's files, as the indexer would
// write them, with auth.go's edits and a panic's memory, come out of the
// edge in the order a reader expects; a restarted edge and a fresh one
// (the disk lost) agree, since every input is in the buckets.
func TestImportanceOrdersTheShopAsAReaderWould(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	r := h.start(dir)
	r.wait(h.putShop())
	r.waitMemories(h.putShopPanic())
	got, scores := r.importanceOrder()
	if !slices.Equal(got, shopExpected) {
		t.Fatalf("order:\n got  %q\n want %q\n scores %v", got, shopExpected, scores)
	}
	if s := scores["internal/utils/utils.go"]; s != 0 {
		t.Errorf("utils.go, which nothing imports or touched, scores %v", s)
	}

	r.stop()
	for name, dir := range map[string]string{"restarted": dir, "fresh": ""} {
		e := h.start(dir)
		<-e.m.Ready()
		got, again := e.importanceOrder()
		// The time terms decay from the repo's own latest change, not the
		// clock: the same state scores exactly the same, later or elsewhere.
		if !slices.Equal(got, shopExpected) || !maps.Equal(again, scores) {
			t.Errorf("%s edge: order %q, scores %v; want %v", name, got, again, scores)
		}
		e.stop()
	}
}

// Among equally relevant hits the more important file comes first, and
// the hits say how important they are; a clearly more relevant hit stays
// ahead of a more important one.
func TestReadContextBreaksTiesByImportance(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	// Two notes with the same text score alike; b.md is linked from three
	// other files, a.md from none. c.md is more relevant: it says
	// "checkout flow" in its title too.
	body := "# Checkout\n\nThe checkout flow.\n"
	h.put(mdRecord("shop", "a.md", body, nil))
	h.put(mdRecord("shop", "b.md", body, nil))
	h.put(mdRecord("shop", "c.md", "# Checkout flow\n\nThe checkout flow.\n", nil))
	var rev uint64
	for _, p := range []string{"x.md", "y.md", "z.md"} {
		rev = h.put(shopRecord(p, "# Links\n\nSee [b](b.md).\n"))
	}
	r.wait(rev)
	hits := r.search(map[string]any{"query": "checkout flow", "mode": "keyword", "limit": 3})
	if got := paths(hits); !slices.Equal(got, []string{"c.md", "b.md", "a.md"}) {
		t.Fatalf("order %q, want c.md, then b.md (important) before a.md: %+v", got, hits)
	}
	byPath := map[string]tools.ContextHit{}
	for _, hit := range hits {
		byPath[hit.Path] = hit
	}
	if byPath["a.md"].Score != byPath["b.md"].Score {
		t.Fatalf("a.md and b.md should tie: %v, %v", byPath["a.md"].Score, byPath["b.md"].Score)
	}
	if byPath["b.md"].Importance <= 0 || byPath["a.md"].Importance != 0 || byPath["c.md"].Importance != 0 {
		t.Errorf("importance a %v b %v c %v", byPath["a.md"].Importance, byPath["b.md"].Importance, byPath["c.md"].Importance)
	}
}

// A go.mod too large to keep in memory as plain text still names the
// module, so imports of the shop's packages count as references, at first
// and after a restart.
// The module path has no dot, so only the module can resolve its imports.
func TestImportanceReadsAGoModNotKeptAsPlainText(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	r := h.start(dir)
	r.wait(h.putShopEdited(func(path, content string) string {
		content = strings.ReplaceAll(content, "example.com/shop", "shopmod")
		if path == "go.mod" {
			return content + strings.Repeat("// a long comment that makes go.mod larger than what the edge keeps as plain text\n", 100)
		}
		return content
	}))
	r.waitMemories(h.putShopPanic())
	for _, when := range []string{"first", "after a restart"} {
		if when != "first" {
			r.stop()
			r = h.start(dir)
			<-r.m.Ready()
		}
		if got, scores := r.importanceOrder(); !slices.Equal(got, shopExpected) {
			t.Fatalf("%s: order:\n got  %q\n want %q\n scores %v", when, got, shopExpected, scores)
		}
	}
}

// A code file's declarations are searched as its headings are: the file
// that declares RetryBudget outranks one that only talks about retry
// budgets, and a package's name is not a declaration of it.
func TestCodeDeclarationsRankAsHeadings(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	h.put(shopRecord("pkg/limits/limits.go", "package limits\n\n// Spend takes n from what is left.\nfunc (b *RetryBudget) Spend(n int) bool {\n\tif b.left < n {\n\t\treturn false\n\t}\n\tb.left -= n\n\treturn true\n}\n"))
	h.put(shopRecord("pkg/client/client.go", "package client\n\n// Do sends req; a failure spends the retry budget, and once the\n// retry budget is gone the retry budget stays gone until reset.\nfunc Do(req Request) error {\n\treturn send(req)\n}\n"))
	doc := shopRecord("pkg/budget/doc.go", "package budget\n\n// Nothing here.\nvar x = 1\n")
	rev := h.put(doc)
	r.wait(rev)
	hits := r.search(map[string]any{"query": "retry budget spend", "mode": "keyword", "limit": 3})
	if got := paths(hits); len(got) < 2 || got[0] != "pkg/limits/limits.go" {
		t.Fatalf("order %q, want pkg/limits/limits.go first: %+v", got, hits)
	}
	if f := fieldsOf(&doc); slices.Contains(f.Headings, "package budget") || !slices.Contains(f.Headings, "var x") {
		t.Errorf("headings of doc.go: %q, want its declaration and not its package", f.Headings)
	}
}
