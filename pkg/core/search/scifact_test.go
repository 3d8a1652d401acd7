package search

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// minSciFactNDCG is the floor below which keyword ranking has regressed.
// Published BM25 on SciFact scores 0.665 (BEIR paper).
const minSciFactNDCG = 0.68

// TestSciFactQuality ranks the BEIR SciFact test queries and reports
// nDCG@10 and recall@100. The data set lives beside the repository, in
// ../shared/data/scifact; without it the test is skipped.
func TestSciFactQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping SciFact evaluation in short mode")
	}
	dir := sciFactDir(t)

	ix := NewIndex()
	readJSONL(t, filepath.Join(dir, "corpus.jsonl"), func(line []byte) error {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		ix.Upsert(d.ID, Fields{Title: d.Title, Body: d.Text})
		return nil
	})
	queries := map[string]string{}
	readJSONL(t, filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		err := json.Unmarshal(line, &q)
		queries[q.ID] = q.Text
		return err
	})
	qrels := readQrels(t, filepath.Join(dir, "qrels", "test.tsv"))

	var ndcg, recall float64
	for qid, rel := range qrels {
		text, ok := queries[qid]
		if !ok {
			t.Fatalf("qrels name query %s, which queries.jsonl lacks", qid)
		}
		hits := ix.Search(text, 100)
		ndcg += ndcgAt(hits, rel, 10)
		found := 0
		for _, h := range hits {
			if rel[h.ID] > 0 {
				found++
			}
		}
		recall += float64(found) / float64(len(rel))
	}
	ndcg /= float64(len(qrels))
	recall /= float64(len(qrels))
	t.Logf("SciFact: %d docs, %d queries: nDCG@10 %.4f, recall@100 %.4f (BM25 published: nDCG@10 0.665)",
		ix.Len(), len(qrels), ndcg, recall)
	if ndcg < minSciFactNDCG {
		t.Errorf("nDCG@10 = %.4f, below the floor of %.2f", ndcg, minSciFactNDCG)
	}
}

// ndcgAt scores a ranking with linear gains, as trec_eval does.
func ndcgAt(hits []Hit, rel map[string]int, k int) float64 {
	var dcg float64
	for i, h := range hits[:min(k, len(hits))] {
		dcg += float64(rel[h.ID]) / math.Log2(float64(i+2))
	}
	gains := make([]int, 0, len(rel))
	for _, g := range rel {
		gains = append(gains, g)
	}
	// Ideal order: highest gains first.
	for i := range gains {
		for j := i + 1; j < len(gains); j++ {
			if gains[j] > gains[i] {
				gains[i], gains[j] = gains[j], gains[i]
			}
		}
	}
	var idcg float64
	for i, g := range gains[:min(k, len(gains))] {
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// sciFactDir finds ../shared/data/scifact relative to the repository root,
// the nearest directory above the test holding go.mod.
func sciFactDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("skipping SciFact evaluation: no go.mod above the test directory")
		}
		dir = parent
	}
	data := filepath.Join(dir, "..", "shared", "data", "scifact")
	if _, err := os.Stat(filepath.Join(data, "corpus.jsonl")); err != nil {
		t.Skipf("skipping SciFact evaluation: data set not found at %s", data)
	}
	return data
}

func readJSONL(t *testing.T, path string, each func([]byte) error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if err := each(sc.Bytes()); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// readQrels reads a BEIR qrels file: a header, then query-id, corpus-id and
// relevance separated by tabs.
func readQrels(t *testing.T, path string) map[string]map[string]int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	qrels := map[string]map[string]int{}
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 3 {
			t.Fatalf("%s:%d: want 3 fields, got %q", path, i+1, line)
		}
		score, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		if qrels[f[0]] == nil {
			qrels[f[0]] = map[string]int{}
		}
		qrels[f[0]][f[1]] = score
	}
	return qrels
}
