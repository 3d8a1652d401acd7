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

// cue eval questions runs the daemon on the fixture and reports each
// mode and form; a directory without usable headings is refused saying
// what it needs.
func TestEvalQuestionsCommand(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "internal", "eval", "questions", "testdata", "site")
	out, err := exec.Command(bin("cue"), "eval", "questions", dir, "--json", "--seed", "3").Output()
	if err != nil {
		t.Fatalf("cue eval questions: %v", err)
	}
	var res struct {
		Seed      uint64 `json:"seed"`
		Files     int    `json:"files"`
		Questions int    `json:"questions"`
		Scores    []struct {
			Mode string  `json:"mode"`
			Form string  `json:"form"`
			Hit3 float64 `json:"hit@3"`
		} `json:"scores"`
		Answers []struct {
			Question string         `json:"question"`
			Path     string         `json:"path"`
			Ranks    map[string]int `json:"ranks"`
		} `json:"answers"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if res.Seed != 3 || res.Files != 6 || res.Questions == 0 || len(res.Answers) != res.Questions || len(res.Scores) != 2 ||
		res.Scores[0].Mode != "keyword" || res.Scores[0].Form != "question" || res.Scores[1].Form != "keywords" {
		t.Fatalf("eval result: %s", out)
	}
	empty := t.TempDir()
	writeFile(t, empty, "README.md", "# Overview\n")
	bad, err := exec.Command(bin("cue"), "eval", "questions", empty).CombinedOutput()
	if err == nil || !strings.Contains(string(bad), "specific headings") {
		t.Fatalf("a directory without specific headings must be refused saying so: %v %s", err, bad)
	}
}
