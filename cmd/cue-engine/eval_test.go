package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestEvalBEIRCommand(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "data", "scifact")
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		t.Skipf("SciFact not found at %s (it sits beside the repository in CI); skipping", dir)
	}
	out, err := exec.Command(bin("cue"), "eval", "beir", dir, "--json", "--modes", "keyword").Output()
	if err != nil {
		t.Fatalf("cue eval: %v", err)
	}
	var res struct {
		Docs    int `json:"docs"`
		Queries int `json:"queries"`
		Scores  []struct {
			Mode   string  `json:"mode"`
			NDCG10 float64 `json:"ndcg@10"`
		} `json:"scores"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if res.Docs != 5183 || res.Queries != 300 || len(res.Scores) != 1 || res.Scores[0].Mode != "keyword" || res.Scores[0].NDCG10 < 0.665 {
		t.Fatalf("eval result: %+v", res)
	}
	bad, err := exec.Command(bin("cue"), "eval", "beir", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(bad), "qrels/test.tsv") {
		t.Fatalf("a non-BEIR directory must be refused naming the files: %v %s", err, bad)
	}
}
