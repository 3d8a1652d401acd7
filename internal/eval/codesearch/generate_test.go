package codesearch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/eval"
)

func TestQuery(t *testing.T) {
	for _, tc := range []struct{ doc, name, want string }{
		{"Get returns the value stored under key, or \"\" when there is none.\nMore text.", "Get", `returns the value stored under key, or "" when there is none.`},
		{"Put stores value under key, replacing what Put stored there before.", "Put", "stores value under key, replacing what stored there before."},
		{"Len reports how many keys.", "Len", "reports how many keys."},
		{"Len reports.", "Len", ""},                            // too few words left
		{"Deprecated: use New.", "Make", ""},                   // says nothing of what it does
		{"Getter returns a Get.", "Get", "Getter returns a ."}, // whole words only
		{strings.Repeat("word ", 60) + "end.", "X", ""},        // longer than read_context takes
	} {
		if got := Query(tc.doc, tc.name); got != tc.want {
			t.Errorf("Query(%q, %q) = %q, want %q", tc.doc, tc.name, got, tc.want)
		}
	}
}

// The generator finds the documented exported functions and methods of a
// tree, draws the queries said once, strips the doc comments from the
// code, and writes a set `cue eval beir` loads.
func TestGenerateAndWrite(t *testing.T) {
	set, err := Generate(Options{Roots: []string{"testdata/tree"}, Queries: 10})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range set.Functions {
		names = append(names, f.Name)
		if strings.Contains(f.Code, "//") || !strings.HasPrefix(f.Code, "func ") || f.Package != "store" {
			t.Errorf("%s: code %q package %q", f.Name, f.Code, f.Package)
		}
	}
	if got := strings.Join(names, ","); got != "Store.Get,Store.Put,Store.Len,New,Make" {
		t.Errorf("functions %s", got)
	}
	// Make's query is empty (only "Deprecated"): four drawn.
	if len(set.Queries) != 4 {
		t.Fatalf("queries %v", set.Queries)
	}
	two, _ := Generate(Options{Roots: []string{"testdata/tree"}, Queries: 2})
	again, _ := Generate(Options{Roots: []string{"testdata/tree"}, Queries: 2})
	if !slices.Equal(two.Queries, again.Queries) || len(two.Queries) != 2 {
		t.Errorf("two draws of the same seed: %v and %v", two.Queries, again.Queries)
	}
	if got := set.FilePath(0); got != "tree/store/store_go/f00000.go" {
		t.Errorf("file path %q", got)
	}
	dir := t.TempDir()
	if err := set.Write(dir); err != nil {
		t.Fatal(err)
	}
	ds, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Docs) != len(set.Functions) || len(ds.Queries) != 4 || len(ds.Qrels) != 4 {
		t.Errorf("loaded %d docs, %d queries, %d qrels", len(ds.Docs), len(ds.Queries), len(ds.Qrels))
	}
	if _, err := os.Stat(filepath.Join(dir, "qrels", "test.tsv")); err != nil {
		t.Error(err)
	}
}

// Run indexes the functions as files through the daemon and asks each
// query with read_context: every query is scored, and those whose words
// the function's code holds find its file.
func TestRunThroughTheDaemon(t *testing.T) {
	set, err := Generate(Options{Roots: []string{"testdata/tree"}, Queries: 10})
	if err != nil {
		t.Fatal(err)
	}
	// A kept workspace holds a file of an earlier, larger set: it is taken
	// out before the daemon indexes this one.
	work := t.TempDir()
	stale := filepath.Join(work, "code", "old_go", "f99999.go")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("package old\n\nfunc Stale() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), set, RunOptions{Work: work, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file of an earlier set stayed in the workspace: %v", err)
	}
	if r.Functions != 5 || r.Queries != 4 || len(r.Scores) != 2 || r.Scores[0].Mode != "keyword" || r.Scores[1].Mode != PlainMode {
		t.Fatalf("report %+v", r)
	}
	// "reports how many keys." shares no word with Len's code; the three
	// others share theirs, whole words for plain BM25 too.
	for _, s := range r.Scores {
		if s.Queries != 4 || s.Hit10 != 0.75 || s.Hit50 != 0.75 || s.NDCG10 <= 0 || s.NDCG10 > s.Hit10 {
			t.Errorf("scores %+v", s)
		}
	}
}

// TestScoresCountDeepAnswersApart: an answer below the tenth counts for
// hit@50 alone, one past the fiftieth for nothing.
func TestScoresCountDeepAnswersApart(t *testing.T) {
	sc := Scores{Queries: 4}
	sc.add(1, 1)
	sc.add(0, 30)
	sc.add(0, 51)
	sc.add(0, 0)
	sc.average()
	if sc.Hit1 != 0.25 || sc.Hit10 != 0.25 || sc.Hit50 != 0.5 || sc.MRR10 != 0.25 || sc.NDCG10 != 0.25 {
		t.Fatalf("scores %+v", sc)
	}
}

// TestGenerateLeavesOutTests: a test function is no answer to search for,
// documented and exported as it may be.
func TestGenerateLeavesOutTests(t *testing.T) {
	root := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(filepath.Join(root, "door"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"door.go":      "package door\n\n// Open swings the door wide open.\nfunc Open() {}\n",
		"door_test.go": "package door\n\n// TestOpen checks that the door swings open.\nfunc TestOpen(t *testing.T) { Open() }\n",
	} {
		if err := os.WriteFile(filepath.Join(root, "door", name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Generate(Options{Roots: []string{root}, Queries: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Functions) != 1 || s.Functions[0].Name != "Open" {
		t.Fatalf("functions %+v; want Open alone", s.Functions)
	}
}
