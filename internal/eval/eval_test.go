package eval

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
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

func sciFact(t *testing.T) string {
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "data", "scifact")
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		t.Skipf("SciFact not found at %s (it sits beside the repository in CI); skipping", dir)
	}
	return dir
}

// TestSciFactKeyword: keyword ranking must reach BM25's published nDCG@10
// (0.665) on SciFact.
func TestSciFactKeyword(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ds, err := Load(sciFact(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Docs) != 5183 || len(ds.Qrels) != 300 {
		t.Fatalf("SciFact: %d docs, %d queries", len(ds.Docs), len(ds.Qrels))
	}
	s, err := Evaluate(context.Background(), ds, "keyword", KeywordRanker(ds, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("keyword: nDCG@10 %.4f recall@10 %.4f recall@100 %.4f", s.NDCG10, s.Recall10, s.Recall100)
	if s.NDCG10 < 0.665 {
		t.Fatalf("keyword nDCG@10 %.4f is below BM25's published 0.665", s.NDCG10)
	}
}
