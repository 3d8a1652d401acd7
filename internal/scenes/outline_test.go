package scenes

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// bigGo is a Go file of n documented functions with bodies.
func bigGo(n int) string {
	var b strings.Builder
	b.WriteString("// Package store keeps sessions.\npackage store\n\nimport \"strings\"\n")
	for i := range n {
		fmt.Fprintf(&b, "\n// Lookup%d finds session %d by its key, trimming spaces first.\nfunc Lookup%d(m map[string]string, key string) (string, bool) {\n", i, i, i)
		b.WriteString("\tkey = strings.TrimSpace(key)\n\tif key == \"\" {\n\t\treturn \"\", false\n\t}\n\tv, ok := m[key]\n\treturn v, ok\n}\n")
	}
	return b.String()
}

// TestSceneCarriesTheOutlineOfAFileTooLongToFit builds the same scene with
// and without outlines: without, the long Go file does not fit and
// packing stops there, dropping it and the project structure after it;
// with, the file comes as its outline and the structure is there too.
func TestSceneCarriesTheOutlineOfAFileTooLongToFit(t *testing.T) {
	const budget = 2500
	dir := t.TempDir()
	big := bigGo(60)
	writeFiles(t, dir, map[string]string{
		".cuedeck/cards/a.md": card("a", "active", "Fix lookups. Read [the store](../../src/store.go), then @docs/after.md."),
		"src/store.go":        big,
		"docs/after.md":       "# After\n\nThe doc read after the store.\n",
	})
	fsys := openRoot(t, dir).FS()

	seed, err := Build(fsys, Options{Budget: budget, NoOutlines: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Build(fsys, Options{Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	whole := tokens.Count(big)
	t.Logf("src/store.go: %d tokens whole; scene without outlines %d tokens, %d of %d nodes, truncated %v; with outlines %d tokens, %d of %d nodes, outlined %v",
		whole, seed.Tokens, seed.Included, seed.Nodes, seed.Truncated, res.Tokens, res.Included, res.Nodes, res.Outlined)

	if whole < budget || !seed.Truncated || seed.Included != 2 || strings.Contains(seed.Markdown, "### src/store.go") || strings.Contains(seed.Markdown, "## Project Structure") {
		t.Fatalf("without outlines the store should be dropped: %+v", seed)
	}
	if res.Truncated || res.Included != 3 || res.Nodes != 3 || !slices.Equal(res.Outlined, []string{"src/store.go"}) {
		t.Fatalf("with outlines: included %d of %d, truncated %v, outlined %v\n%s", res.Included, res.Nodes, res.Truncated, res.Outlined, res.Markdown)
	}
	for _, want := range []string{
		"### docs/after.md (direct)",
		"### src/store.go (direct; outline: too long to include whole)\n```text\noutline of src/store.go (go, ",
		"package store — Package store keeps sessions. … L2\n",
		"func Lookup0(m map[string]string, key string) (string, bool) — Lookup0 finds session 0 by its key, trimming spaces first. … L7-14\n",
		"## Project Structure (overview)",
	} {
		if !strings.Contains(res.Markdown, want) {
			t.Errorf("scene lacks %q:\n%s", want, res.Markdown)
		}
	}
	if strings.Contains(res.Markdown, "strings.TrimSpace(key)") {
		t.Error("the scene holds the store's bodies")
	}
	if res.Tokens >= budget {
		t.Errorf("scene is %d tokens, budget %d", res.Tokens, budget)
	}
}

// A file of a kind with no outline is dropped as before.
func TestSceneDropsAFileWithNoOutline(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".cuedeck/cards/a.md": card("a", "active", "Read [the data](../../data/big.txt)."),
		"data/big.txt":        strings.Repeat("plain words without structure ", 2000),
	})
	res, err := Build(openRoot(t, dir).FS(), Options{Budget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.Included != 1 || len(res.Outlined) != 0 {
		t.Fatalf("%+v", res)
	}
}

// benchOutlined builds a card referencing 20 Go files of about 5,000
// tokens each (20 functions with 20-line bodies) under a 16,000-token
// budget, with or without outlines.
func benchOutlined(b *testing.B, noOutlines bool) {
	dir := b.TempDir()
	var body strings.Builder
	body.WriteString("package store\n")
	for i := range 20 {
		fmt.Fprintf(&body, "\n// Step%d runs step %d.\nfunc Step%d(x int) int {\n", i, i, i)
		for j := range 20 {
			fmt.Fprintf(&body, "\tx = x*%d + %d // mix\n", j+3, j)
		}
		body.WriteString("\treturn x\n}\n")
	}
	files := map[string]string{}
	var refs []string
	for i := range 20 {
		p := fmt.Sprintf("src/pkg%02d/store.go", i)
		files[p] = body.String()
		refs = append(refs, fmt.Sprintf("[store %d](../../%s)", i, p))
	}
	files[".cuedeck/cards/a.md"] = card("a", "active", "Fix steps in "+strings.Join(refs, ", ")+".")
	writeFiles(b, dir, files)
	fsys := openRoot(b, dir).FS()
	var res Result
	for b.Loop() {
		var err error
		if res, err = Build(fsys, Options{Budget: 16_000, NoOutlines: noOutlines}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tokens.Count(body.String())), "file-tokens")
	b.ReportMetric(float64(res.Included), "nodes-included")
	b.ReportMetric(float64(len(res.Outlined)), "nodes-outlined")
	b.ReportMetric(float64(res.Tokens), "scene-tokens")
}

func BenchmarkBuildLongFilesOutlined(b *testing.B) { benchOutlined(b, false) }
func BenchmarkBuildLongFilesDropped(b *testing.B)  { benchOutlined(b, true) }
