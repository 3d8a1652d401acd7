package questions

import (
	"context"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/localnode"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/markdown"
)

func TestMain(m *testing.M) {
	// The daemon would read the developer's config under $HOME.
	home, err := os.MkdirTemp("", "cue-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

const fixture = "testdata/site"

func TestGenerateAsksAboutSpecificHeadingsOnly(t *testing.T) {
	fsys := os.DirFS(fixture)
	qs, err := Generate(fsys, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 10 {
		t.Fatalf("%d questions from the fixture; want one per specific heading", len(qs))
	}
	for _, q := range qs {
		src, err := os.ReadFile(path.Join(fixture, q.Path))
		if err != nil {
			t.Fatalf("%q answered by %s: %v", q.Text, q.Path, err)
		}
		doc := markdown.Parse(src)
		found := q.Line == 0 && doc.Frontmatter["title"] == q.Heading
		for _, h := range doc.Headings {
			found = found || (h.Line == q.Line && h.Text == q.Heading)
		}
		if !found {
			t.Errorf("%q: %s has no heading %q at line %d", q.Text, q.Path, q.Heading, q.Line)
		}
		if !strings.Contains(q.Text, q.Keywords) && !strings.Contains(q.Text, lowerFirst(q.Keywords)) {
			t.Errorf("question %q does not ask about %q", q.Text, q.Keywords)
		}
		switch strings.ToLower(q.Heading) {
		case "overview", "how do i do that?", "why is my collector using so much memory?":
			t.Errorf("%q was asked from %q, which names no single subject", q.Text, q.Heading)
		}
	}
	again, err := Generate(fsys, 1, 0)
	if err != nil || !slices.Equal(qs, again) {
		t.Fatalf("the same seed gave other questions: %v", err)
	}
	other, err := Generate(fsys, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(qs, other) {
		t.Fatal("another seed phrased every question the same")
	}
	some, err := Generate(fsys, 1, 4)
	if err != nil || len(some) != 4 {
		t.Fatalf("max 4 gave %d questions (%v)", len(some), err)
	}
}

func TestGenerateRefusesADirectoryWithoutSpecificHeadings(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/README.md", []byte("# Overview\n\n## Example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := GenerateDir(dir, 1, 0); err == nil || !strings.Contains(err.Error(), "specific headings") {
		t.Fatalf("err = %v", err)
	}
	if _, err := GenerateDir(dir+"/README.md", 1, 0); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("a file: err = %v", err)
	}
}

// Run indexes the fixture through the daemon and asks every question in
// both forms; the scores are those of the ranks it reports.
func TestRunAsksThroughTheDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a daemon")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := Run(ctx, Options{Dir: fixture, Seed: 1, Work: t.TempDir(), Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	qs, _ := Generate(os.DirFS(fixture), 1, 0)
	if r.Files != 6 || r.Questions != len(qs) || len(r.Answers) != len(qs) || len(r.Scores) != 2 {
		t.Fatalf("report: files %d, questions %d, answers %d, scores %+v", r.Files, r.Questions, len(r.Answers), r.Scores)
	}
	for _, s := range r.Scores {
		key := s.Mode + "/" + s.Form
		var hit1, mrr float64
		for _, a := range r.Answers {
			rank, ok := a.Ranks[key]
			if !ok {
				t.Fatalf("%q has no rank for %s", a.Text, key)
			}
			if rank == 1 {
				hit1++
			}
			if rank > 0 {
				mrr += 1 / float64(rank)
			}
		}
		n := float64(len(r.Answers))
		if math.Abs(s.Hit1-hit1/n) > 1e-9 || math.Abs(s.MRR10-mrr/n) > 1e-9 || s.Hit3 < s.Hit1 || s.NDCG10 < s.MRR10 {
			t.Errorf("%s: scores %+v disagree with the ranks (hit@1 %.4f, MRR %.4f)", key, s, hit1/n, mrr/n)
		}
	}
	// The fixture holds what made questions miss (issue 18): a FAQ and a
	// blog post that say "how do I", and a shorter translation sharing
	// the page's identifiers. Asked either way, each answer comes first.
	for _, a := range r.Answers {
		for key, rank := range a.Ranks {
			if rank != 1 {
				t.Errorf("%s %q: %s ranked %d, first was %s", key, a.Text, a.Path, rank, a.Top[key])
			}
		}
	}
}

// WaitIndexed waits for the text a file holds now, not for any record of
// its path: a file rewritten under a running daemon (whose ingest waits
// out its debounce before it reads the change) is answered as rewritten
// once WaitIndexed returns.
func TestWaitIndexedWaitsForTheFileAsItReadsNow(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a daemon")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	file := filepath.Join(root, "notes.md")
	if err := os.WriteFile(file, []byte("# Notes\n\nThe first version.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := localnode.Start(ctx, root, localnode.Options{Model: "none", Debounce: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	if err := WaitIndexed(ctx, n, root, []string{"notes.md"}, func(string, int, int) {}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("# Notes\n\nThe second version.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WaitIndexed(ctx, n, root, []string{"notes.md"}, func(string, int, int) {}); err != nil {
		t.Fatal(err)
	}
	var doc tools.ReadDocResult
	if err := n.Call(ctx, tools.ReadDoc, tools.ReadDocArgs{Path: "notes.md"}, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Content, "second version") {
		t.Errorf("read_doc after WaitIndexed: %q, want the second version", doc.Content)
	}
}
