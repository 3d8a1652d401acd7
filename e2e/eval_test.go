package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestEvalSciFactHybridBeatsKeyword builds cue and measures search quality
// on BEIR SciFact with the built-in model: hybrid search must rank better
// than keyword search alone, or embedding documents is not worth its cost,
// and keyword search must not fall below what BM25F reached when this test
// was written.
func TestEvalSciFactHybridBeatsKeyword(t *testing.T) {
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
	// A fresh vector cache: the run embeds every passage, as a first run
	// on a new machine does, and leaves nothing in the user's cache.
	cmd := exec.Command(bin, "eval", "beir", data, "--json", "--cache", t.TempDir())
	cmd.Stderr = os.Stderr // progress, so a slow run shows where it is
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cue eval beir: %v", err)
	}
	var res struct {
		Docs    int `json:"docs"`
		Queries int `json:"queries"`
		Scores  []struct {
			Mode      string  `json:"mode"`
			NDCG10    float64 `json:"ndcg@10"`
			Recall100 float64 `json:"recall@100"`
		} `json:"scores"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	ndcg := map[string]float64{}
	for _, s := range res.Scores {
		ndcg[s.Mode] = s.NDCG10
		t.Logf("%-8s nDCG@10 %.4f recall@100 %.4f", s.Mode, s.NDCG10, s.Recall100)
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
	if ndcg["hybrid"] <= ndcg["keyword"] {
		t.Errorf("hybrid nDCG@10 %.4f does not beat keyword's %.4f", ndcg["hybrid"], ndcg["keyword"])
	}
}
