package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/eval/codesearch"
)

// TestEvalSciFactHybridHoldsKeyword builds cue and measures search quality
// on BEIR SciFact with the built-in model, through the daemon as a user
// runs it (every abstract a file the indexer chunks and the embed workers
// embed): hybrid search, the default, must not rank below keyword search
// alone, however weak the model, and keyword search must not fall below
// BM25's published figure.
func TestEvalSciFactHybridHoldsKeyword(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds SciFact with the built-in model, which takes minutes")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, "..", "shared", "data", "scifact")
	if _, err := os.Stat(filepath.Join(data, "corpus.jsonl")); err != nil {
		t.Skipf("no SciFact at %s (BEIR's scifact.zip unpacked there enables this test): %v", data, err)
	}
	// A new workspace: the run embeds every document, as a first run on a
	// new machine does.
	out := runCue(t, buildCue(t), "eval", "beir", data, "--json", "--work", t.TempDir())
	var res struct {
		Docs    int `json:"docs"`
		Queries int `json:"queries"`
		Scores  []struct {
			Mode     string  `json:"mode"`
			NDCG10   float64 `json:"ndcg@10"`
			Recall50 float64 `json:"recall@50"`
		} `json:"scores"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	ndcg := map[string]float64{}
	for _, s := range res.Scores {
		ndcg[s.Mode] = s.NDCG10
		t.Logf("%-8s nDCG@10 %.4f recall@50 %.4f", s.Mode, s.NDCG10, s.Recall50)
	}
	for _, mode := range []string{"keyword", "semantic", "hybrid", "rrf"} {
		if _, ok := ndcg[mode]; !ok {
			t.Fatalf("no %s scores in %s", mode, out)
		}
	}
	if res.Docs != 5183 || res.Queries != 300 {
		t.Errorf("SciFact has 5183 docs and 300 test queries, got %d and %d", res.Docs, res.Queries)
	}
	if ndcg["keyword"] < 0.665 {
		t.Errorf("keyword nDCG@10 %.4f, want at least 0.665", ndcg["keyword"])
	}
	if ndcg["hybrid"] < ndcg["keyword"] {
		t.Errorf("hybrid nDCG@10 %.4f is below keyword's %.4f: the semantic side pulled the default down", ndcg["hybrid"], ndcg["keyword"])
	}
}

// TestEvalCodeKeywordBeatsPlainBM25 builds cue and measures code search
// on the code set drawn from this machine's Go source (the standard
// library and the module cache; internal/eval/codesearch), through the
// daemon with the default model and settings: keyword search must beat
// plain BM25 by 0.05 nDCG@10 (what splitting identifiers, the symbol,
// signature and path fields and the title of a function's file earn),
// and hybrid, the default mode, must not rank below keyword.
func TestEvalCodeKeywordBeatsPlainBM25(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes tens of thousands of functions, which takes minutes")
	}
	out := runCue(t, buildCue(t), "eval", "code", "--modes", "keyword,hybrid", "--json", "--work", t.TempDir())
	var res struct {
		Functions int `json:"functions"`
		Queries   int `json:"queries"`
		Scores    []struct {
			Mode   string  `json:"mode"`
			NDCG10 float64 `json:"ndcg@10"`
			Hit10  float64 `json:"hit@10"`
			Hit50  float64 `json:"hit@50"`
		} `json:"scores"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	ndcg := map[string]float64{}
	for _, s := range res.Scores {
		ndcg[s.Mode] = s.NDCG10
		t.Logf("%-10s nDCG@10 %.4f hit@10 %.3f hit@50 %.3f", s.Mode, s.NDCG10, s.Hit10, s.Hit50)
	}
	for _, mode := range []string{"keyword", "hybrid", codesearch.PlainMode} {
		if _, ok := ndcg[mode]; !ok {
			t.Fatalf("no %s scores in %s", mode, out)
		}
	}
	// The floor for a code set: fewer functions make every
	// ranking easier and the comparison say less.
	if res.Functions < 10000 || res.Queries < 2000 {
		t.Fatalf("the code set holds %d functions and %d queries; want at least 10,000 and 2,000 (is the module cache empty? `go mod download` in the repository fills it)", res.Functions, res.Queries)
	}
	if ndcg["keyword"] < ndcg[codesearch.PlainMode]+0.05 {
		t.Errorf("keyword nDCG@10 %.4f is not 0.05 above plain BM25's %.4f", ndcg["keyword"], ndcg[codesearch.PlainMode])
	}
	if ndcg["hybrid"] < ndcg["keyword"] {
		t.Errorf("hybrid nDCG@10 %.4f is below keyword's %.4f: the semantic side pulled the default down", ndcg["hybrid"], ndcg["keyword"])
	}
}

// buildCue builds cue and cue-engine into a temporary directory and
// returns cue's path: the cue front execs cue-engine from its own
// directory.
func buildCue(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	binDir := t.TempDir()
	build := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "./cmd/cue", "./cmd/cue-engine")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cue ./cmd/cue-engine: %v\n%s", err, out)
	}
	return filepath.Join(binDir, "cue")
}

// runCue runs cue with args and returns its standard output; its
// progress goes to the test's standard error, so a slow run shows where
// it is.
func runCue(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cue %s: %v", strings.Join(args[:min(2, len(args))], " "), err)
	}
	return out
}
