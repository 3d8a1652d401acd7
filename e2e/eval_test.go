package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	// The cue front execs cue-engine from its own directory.
	binDir := t.TempDir()
	bin := filepath.Join(binDir, "cue")
	build := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "./cmd/cue", "./cmd/cue-engine")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/cue ./cmd/cue-engine: %v\n%s", err, out)
	}
	// A new workspace: the run embeds every document, as a first run on a
	// new machine does.
	cmd := exec.Command(bin, "eval", "beir", data, "--json", "--work", t.TempDir())
	cmd.Stderr = os.Stderr // progress, so a slow run shows where it is
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cue eval beir: %v", err)
	}
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
