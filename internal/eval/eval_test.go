package eval

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/internal/embed/static"
	"github.com/cuedeck/cuedeck/internal/tools"
)

func TestMetrics(t *testing.T) {
	rel := map[string]int{"a": 1, "b": 2}
	// Perfect order: b (gain 2) then a (gain 1).
	if got := NDCG([]string{"b", "a", "x"}, rel, 10); math.Abs(got-1) > 1e-12 {
		t.Fatalf("ideal ranking nDCG = %v", got)
	}
	// a first, b third, with trec_eval's linear gains: dcg = 1/log2(2) +
	// 2/log2(4) = 2; ideal = 2 + 1/log2(3). (With 2^rel − 1 gains it
	// would be 2.5 / (3 + 1/log2(3)).)
	want := 2 / (2 + 1/math.Log2(3))
	if got := NDCG([]string{"a", "x", "b"}, rel, 10); math.Abs(got-want) > 1e-12 {
		t.Fatalf("nDCG = %v, want %v", got, want)
	}
	if got := NDCG([]string{"x", "y"}, rel, 10); got != 0 {
		t.Fatal("no relevant hit must score 0")
	}
	if got := Recall([]string{"a", "x", "b"}, rel, 2); got != 0.5 {
		t.Fatalf("recall@2 = %v", got)
	}
}

func TestLoadRejectsNonBEIR(t *testing.T) {
	_, err := Load(t.TempDir())
	if !errors.Is(err, ErrNotBEIR) {
		t.Fatalf("got %v", err)
	}
}

// Run answers through the daemon: every judged query finds its document
// first in keyword mode, and in hybrid mode once the built-in model has
// embedded every file; q0, longer than read_context takes, is asked cut
// (and, as the first query, is the probe that waits for the vectors). The document "statins" is about exercise: were its
// id in its path, read_context's path field would rank it for q2.
func TestRunThroughTheDaemon(t *testing.T) {
	ds, err := Load(filepath.Join("testdata", "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	var phases []string
	scores, err := Run(context.Background(), ds, RunOptions{
		Modes: []string{"keyword", "hybrid"}, Work: work, Debounce: 20 * time.Millisecond,
		Progress: func(phase string, _, _ int) {
			if len(phases) == 0 || phases[len(phases)-1] != phase {
				phases = append(phases, phase)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 2 || scores[0].Mode != "keyword" || scores[1].Mode != "hybrid" {
		t.Fatalf("scores %+v", scores)
	}
	for _, s := range scores {
		if s.Queries != 5 || s.NDCG10 != 1 || s.Recall10 != 1 {
			t.Errorf("%s: %+v, want every judged query's document first", s.Mode, s)
		}
	}
	if !slices.Contains(phases, "embed") || !slices.Contains(phases, "ask hybrid") {
		t.Errorf("progress phases %v", phases)
	}
	b, err := os.ReadFile(filepath.Join(work, "tiny", filepath.FromSlash(DocPath(0))))
	if err != nil || string(b) != "# Melatonin and circadian rhythm\n\nMelatonin secretion by the pineal gland follows the circadian rhythm and rises at night.\n" {
		t.Errorf("document 0 as a file: %q, %v", b, err)
	}
	// A second run on the kept workspace restarts its daemon and answers
	// the same; a file the set does not hold is taken out of it first.
	stray := filepath.Join(work, "tiny", "corpus", "stray.md")
	if err := os.WriteFile(stray, []byte("# Melatonin circadian rhythm melatonin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Run(context.Background(), ds, RunOptions{Modes: []string{"keyword"}, Work: work, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if again[0].NDCG10 != 1 {
		t.Errorf("second run on the kept workspace: %+v", again[0])
	}
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file the set does not hold stayed in the workspace: %v", err)
	}
}

// DocPath names differ for every document and hold no vowel and no digit:
// nothing a query's words could match.
func TestDocPathCarriesNoWords(t *testing.T) {
	seen := map[string]int{}
	for i := range 200000 {
		p := DocPath(i)
		name := strings.TrimSuffix(strings.TrimPrefix(p, "corpus/"), ".md")
		if len(name) < 6 || strings.ContainsAny(name, "aeiouy0123456789") {
			t.Fatalf("DocPath(%d) = %q", i, p)
		}
		if j, ok := seen[p]; ok {
			t.Fatalf("DocPath(%d) = DocPath(%d) = %q", i, j, p)
		}
		seen[p] = i
	}
}

// Shorten cuts at a space within read_context's maxLength, which
// MaxQueryRunes must be, and leaves a query within it alone.
func TestShortenToTheSchemasMaxLength(t *testing.T) {
	var s struct {
		Properties struct {
			Query struct {
				MaxLength int `json:"maxLength"`
			} `json:"query"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tools.Lookup(tools.ReadContext).InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	if s.Properties.Query.MaxLength != MaxQueryRunes {
		t.Fatalf("read_context's query maxLength is %d, MaxQueryRunes %d", s.Properties.Query.MaxLength, MaxQueryRunes)
	}
	long := strings.Repeat("é", 150) + " tail words here that go past the limit " + strings.Repeat("x", 30)
	got := Shorten(long)
	if utf8.RuneCountInString(got) > MaxQueryRunes || !strings.HasPrefix(long, got) || strings.HasSuffix(got, " ") || strings.Contains(got, "x") {
		t.Errorf("Shorten(%d runes) = %q (%d runes)", utf8.RuneCountInString(long), got, utf8.RuneCountInString(got))
	}
	if q := "short query"; Shorten(q) != q {
		t.Errorf("Shorten(%q) = %q", q, Shorten(q))
	}
}

// An evaluation with another model than the built-in one waits for that
// model's vectors: it waited for the built-in model's, which never came,
// until it gave up after ten minutes without progress.
func TestRunWithAStaticModel(t *testing.T) {
	ds, err := Load(filepath.Join("testdata", "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	var pairs []static.Pair
	for _, d := range ds.Docs {
		pairs = append(pairs, static.Pair{Query: d.Title, Doc: d.Text})
	}
	m, err := static.Train(context.Background(), pairs, static.TrainOptions{Name: "tiny", Dims: 16, MinCount: 1, Batch: 2, Epochs: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.static")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	scores, err := Run(ctx, ds, RunOptions{Modes: []string{"semantic"}, Model: "static:" + path, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 1 || scores[0].Mode != "semantic" || scores[0].Queries != 5 {
		t.Fatalf("scores %+v", scores)
	}
}
