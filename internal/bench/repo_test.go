package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/ingest"
)

func paths(files []repoFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

// The walk applies ingest's rules: .git/info/exclude, nested .gitignore
// files (a deeper one can re-include), the default excludes and the
// never-published config, which no .gitignore can bring back.
func TestIndexableFilesFollowsIngestRules(t *testing.T) {
	root := t.TempDir()
	for rel, content := range map[string]string{
		".git/HEAD":                 "ref: refs/heads/main\n",
		".git/info/exclude":         "local-notes.md\n",
		"local-notes.md":            "mine\n",
		".gitignore":                "*.log\n/out/\n",
		"app.log":                   "x\n",
		"out/bin.go":                "package out\n",
		"src/out/kept.go":           "package out\n",
		"src/.gitignore":            "!keep.log\n",
		"src/keep.log":              "kept by the deeper rule\n",
		"src/main.go":               "package main\n",
		"vendor/v/v.go":             "package v\n",
		"web/node_modules/m/m.js":   "x\n",
		".cuedeck/config.toml":      "[workspace]\n",
		".cuedeck/cards/a.md":       "---\nid: a\n---\n",
		".cuedeck/.cache/daemon.js": "{}\n",
		".cuedeck/SCENE.md":         "# Scene\n",
	} {
		if err := writeFile(root, rel, content); err != nil {
			t.Fatal(err)
		}
	}
	exclude := append(slices.Clone(ingest.DefaultExclude), "!.cuedeck/config.toml")
	exclude = append(exclude, ingest.NeverPublished...)
	files, err := indexableFiles(root, exclude)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".cuedeck/cards/a.md", ".gitignore", "src/.gitignore", "src/keep.log", "src/main.go", "src/out/kept.go"}
	if got := paths(files); !slices.Equal(got, want) {
		t.Fatalf("indexable files:\n got %v\nwant %v", got, want)
	}
	if files[4].Size != int64(len("package main\n")) {
		t.Errorf("size of %s: %d", files[4].Path, files[4].Size)
	}
}

// A limited copy spans the tree, keeps the order and copies the bytes
// and permission bits.
func TestSpreadAndCopy(t *testing.T) {
	var files []repoFile
	for _, p := range []string{"a/1.go", "a/2.go", "b/1.go", "b/2.go", "c/1.go", "c/2.go"} {
		files = append(files, repoFile{Path: p})
	}
	if got := paths(spread(files, 3)); !slices.Equal(got, []string{"a/1.go", "b/1.go", "c/1.go"}) {
		t.Errorf("spread 3: %v", got)
	}
	if got := spread(files, 0); len(got) != 6 {
		t.Errorf("spread 0 keeps all: %v", paths(got))
	}
	src, dst := t.TempDir(), t.TempDir()
	if err := writeFile(src, "tools/run.sh", "#!/bin/sh\necho hi\n"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(src, "tools/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFiles(src, dst, []repoFile{{Path: "tools/run.sh"}}, nil); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dst, "tools/run.sh"))
	b, _ := os.ReadFile(filepath.Join(dst, "tools/run.sh"))
	if err != nil || st.Mode().Perm() != 0o755 || string(b) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("copy: %v %v %q", st, err, b)
	}
}

// Queries are literal text of their source (so rg finds it), half
// identifiers and half phrases, the same for the same seed, and never
// drawn from tests.
func TestDeriveQueries(t *testing.T) {
	root := t.TempDir()
	sources := map[string]string{
		"strings/replace.go": `// Copyright 2009 The Go Authors.

package strings

// NewReplacer returns a new Replacer from a list of old, new string pairs.
func NewReplacer(oldnew ...string) *Replacer { return nil }

// Replacer replaces a list of strings with replacements.
type Replacer struct{}

// WriteString writes s to w with all replacements performed.
func (r *Replacer) WriteString(w io.Writer, s string) (n int, err error) { return }

func helper() {} // no doc comment: no query
`,
		"strings/replace_test.go": "// TestReplacerOnly checks.\nfunc TestReplacerOnly(t *testing.T) {}\n",
		"docs/release.md":         "# Releases\n\n## Rolling back a release\n\nSteps.\n",
		"tools/build.py":          "# Compile every package for the target platform.\ndef compile_all(target):\n    pass\n",
	}
	var files []repoFile
	for rel, content := range sources {
		if err := writeFile(root, rel, content); err != nil {
			t.Fatal(err)
		}
		files = append(files, repoFile{Path: rel, Size: int64(len(content))})
	}
	qs, err := deriveQueries(root, files, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 6 {
		t.Fatalf("queries: %+v", qs)
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		if !strings.Contains(sources[q.Source], q.Text) || strings.HasSuffix(q.Source, "_test.go") {
			t.Errorf("query %+v is not text of its source", q)
		}
		if q.Kind == QueryIdentifier && strings.Contains(q.Text, " ") || q.Kind == QueryPhrase && len(strings.Fields(q.Text)) < 2 {
			t.Errorf("query %+v", q)
		}
	}
	if kinds[QueryIdentifier] != 3 || kinds[QueryPhrase] != 3 {
		t.Errorf("kinds %v in %+v", kinds, qs)
	}
	again, err := deriveQueries(root, files, 6, 1)
	if err != nil || !slices.Equal(again, qs) {
		t.Errorf("seed 1 twice: %+v, then %+v (%v)", qs, again, err)
	}
	// The whole candidate set: identifiers and their doc comments'
	// first words, headings; nothing from the test file.
	id, ph := candidates("strings/replace.go", sources["strings/replace.go"])
	var ids, phs []string
	for _, q := range id {
		ids = append(ids, q.Text)
	}
	for _, q := range ph {
		phs = append(phs, q.Text)
	}
	if !slices.Equal(ids, []string{"NewReplacer", "Replacer", "WriteString"}) ||
		!slices.Equal(phs, []string{"returns a new Replacer from a", "replaces a list of strings with", "writes s to w with all"}) {
		t.Errorf("candidates: %q %q", ids, phs)
	}
}

func TestSetTOMLKey(t *testing.T) {
	text := "[embed]\n# model\nmodel = \"builtin\"\n\n[transcripts]\ndisabled = false\n"
	got, err := setTOMLKey(text, "transcripts", "disabled", "true")
	if err != nil || got != "[embed]\n# model\nmodel = \"builtin\"\n\n[transcripts]\ndisabled = true\n" {
		t.Fatalf("%q %v", got, err)
	}
	// A key only another section holds is added to this one.
	got, err = setTOMLKey(text, "embed", "disabled", "true")
	if err != nil || got != "[embed]\ndisabled = true\n# model\nmodel = \"builtin\"\n\n[transcripts]\ndisabled = false\n" {
		t.Fatalf("a key outside its section: %q %v", got, err)
	}
	if _, err := setTOMLKey(text, "scene", "token_limit", "1"); err == nil || !strings.Contains(err.Error(), "no [scene]") {
		t.Fatalf("a missing section: %v", err)
	}
}

func TestPeakRSSOfThisProcess(t *testing.T) {
	v, ok := peakRSS(os.Getpid())
	if runtime.GOOS != "linux" {
		if ok {
			t.Fatalf("peak RSS %d without /proc", v)
		}
		return
	}
	if !ok || v < 1<<20 {
		t.Fatalf("peak RSS %d, %v", v, ok)
	}
	if _, ok := peakRSS(-1); ok {
		t.Fatal("a process that does not exist has a peak RSS")
	}
}

// A cache's size is told by part: each stream of the embedded server and
// each role's state, the largest first, the rest as other; the parts sum
// to the total.
func TestDiskPartsNameStreamsAndStates(t *testing.T) {
	dir := t.TempDir()
	for p, n := range map[string]int{
		"nats/jetstream/$G/streams/KV_cue_vectors/msgs/1.blk": 64 << 10,
		"nats/jetstream/$G/streams/KV_cue_vectors/msgs/2.blk": 32 << 10,
		"nats/jetstream/$G/streams/KV_cue_docs/msgs/1.blk":    48 << 10,
		"nats/jetstream/$G/streams/KV_cue_docs/meta.inf":      100,
		"state/edge/000001.sst":                               40 << 10,
		"state/embed/000001.sst":                              8 << 10,
		"FORMAT":                                              10,
	} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(strings.Repeat("x", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	parts, _, allocated, err := diskParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var sum int64
	for _, p := range parts {
		names = append(names, p.Name)
		sum += p.AllocatedBytes
	}
	want := []string{"KV_cue_vectors", "KV_cue_docs", "state/edge", "state/embed", "other"}
	if !slices.Equal(names, want) || sum != allocated {
		t.Fatalf("parts %+v (sum %d of %d), want %v largest first", parts, sum, allocated, want)
	}
	if got := diskPartsText(parts, 2); !strings.HasPrefix(got, "KV_cue_vectors ") || !strings.Contains(got, ", KV_cue_docs ") || !strings.Contains(got, ", 3 more ") {
		t.Errorf("text %q", got)
	}
}
