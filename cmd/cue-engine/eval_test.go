package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/eval"
	"github.com/cuedeck/cuedeck/internal/tools"
)

func TestEvalBEIRCommand(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "data", "scifact")
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		t.Skipf("SciFact not found at %s (it sits beside the repository in CI); skipping", dir)
	}
	out, err := exec.Command(bin("cue"), "eval", "beir", dir, "--json", "--modes", "keyword").Output()
	if err != nil {
		t.Fatalf("cue eval: %v\n%s", err, stderrOf(err))
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

// What cue eval beir ranks is what an agent is answered: on the workspace
// the evaluation kept, a daemon started by `cue mcp` answers every query
// over MCP with the same top 10 in each mode.
func TestEvalRanksAsAnAgentIsAnswered(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	set := filepath.Join(filepath.Dir(here), "..", "..", "internal", "eval", "testdata", "tiny")
	work := t.TempDir()
	out, err := exec.Command(bin("cue"), "eval", "beir", set, "--modes", "keyword,hybrid", "--work", work, "--json", "--ranks").Output()
	if err != nil {
		t.Fatalf("cue eval beir: %v\n%s", err, stderrOf(err))
	}
	var res struct {
		Scores []struct {
			Mode   string              `json:"mode"`
			Ranked map[string][]string `json:"ranked"`
		} `json:"scores"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Scores) != 2 {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	ds, err := eval.Load(set)
	if err != nil {
		t.Fatal(err)
	}
	idOf := map[string]string{}
	for i, d := range ds.Docs {
		idOf[eval.DocPath(i)] = d.ID
	}
	root := filepath.Join(work, "tiny")
	t.Cleanup(func() { exec.Command(bin("cue"), "down", "--workspace", root).Run() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "eval-compare", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin("cue"), "mcp", "--workspace", root)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ask := func(query, mode string) []tools.ContextHit {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_context", Arguments: map[string]any{"query": query, "mode": mode, "limit": 10}})
		if err != nil || res.IsError {
			t.Fatalf("read_context %q: %v %+v", query, err, res)
		}
		var hits []tools.ContextHit
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &hits); err != nil {
			t.Fatal(err)
		}
		return hits
	}
	// The daemon replays its vectors once it is ready.
	bustest.Eventually(t, time.Minute, "semantic answers from vectors", func() bool {
		hits := ask("melatonin", "semantic")
		return len(hits) > 0 && hits[0].Fallback == ""
	})
	compared := 0
	for _, s := range res.Scores {
		for qid, want := range s.Ranked {
			hits := ask(eval.Shorten(ds.Queries[qid]), s.Mode)
			var got []string
			for _, h := range hits {
				if h.Fallback != "" {
					t.Fatalf("%s answer to %q fell back: %s", s.Mode, ds.Queries[qid], h.Fallback)
				}
				got = append(got, idOf[h.Path])
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %q: MCP answers %v, eval ranked %v", s.Mode, ds.Queries[qid], got, want)
			}
			compared++
		}
	}
	if compared != 10 {
		t.Fatalf("compared %d answers, want 5 queries in 2 modes", compared)
	}
}

// stderrOf is the end of what a failed command wrote to stderr, which
// Output keeps in the error.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return ""
	}
	b := ee.Stderr
	return string(b[max(0, len(b)-4096):])
}
