// Package eval measures search quality on BEIR-format data sets (corpus.jsonl,
// queries.jsonl, qrels/test.tsv): it indexes the documents as files with
// the daemon and asks every test query with read_context in each mode
// (Run), and reports nDCG@10, recall@10 and recall@50. `cue eval beir DIR`
// prints the table; tests run it on SciFact to guard ranking quality.
package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cuedeck/cuedeck/internal/tools"
)

// Doc is a corpus document.
type Doc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Dataset is a loaded BEIR directory.
type Dataset struct {
	Name    string
	Docs    []Doc
	Queries map[string]string
	// Qrels maps a query id to its relevant doc ids and grades (> 0).
	Qrels map[string]map[string]int
}

// ErrNotBEIR says a directory lacks the BEIR files.
var ErrNotBEIR = errors.New("not a BEIR directory")

// Load reads a BEIR directory with the test split.
func Load(dir string) (*Dataset, error) {
	for _, f := range []string{"corpus.jsonl", "queries.jsonl", filepath.Join("qrels", "test.tsv")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("%w: %s has no %s (expected corpus.jsonl, queries.jsonl and qrels/test.tsv)", ErrNotBEIR, dir, f)
		}
	}
	ds := &Dataset{Name: filepath.Base(dir), Queries: map[string]string{}, Qrels: map[string]map[string]int{}}
	if err := readJSONL(filepath.Join(dir, "corpus.jsonl"), func(b []byte) error {
		var d Doc
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		ds.Docs = append(ds.Docs, d)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "queries.jsonl"), func(b []byte) error {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &q); err != nil {
			return err
		}
		ds.Queries[q.ID] = q.Text
		return nil
	}); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 || (line == 1 && cols[0] == "query-id") {
			continue
		}
		grade, err := strconv.Atoi(strings.TrimSpace(cols[2]))
		if err != nil {
			return nil, fmt.Errorf("qrels/test.tsv line %d: score %q is not an integer", line, cols[2])
		}
		if grade <= 0 {
			continue
		}
		if ds.Qrels[cols[0]] == nil {
			ds.Qrels[cols[0]] = map[string]int{}
		}
		ds.Qrels[cols[0]][cols[1]] = grade
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for qid := range ds.Qrels {
		if _, ok := ds.Queries[qid]; !ok {
			return nil, fmt.Errorf("qrels name query %s, which queries.jsonl lacks", qid)
		}
	}
	return ds, nil
}

func readJSONL(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if err := each(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", filepath.Base(path), line, err)
		}
	}
	return sc.Err()
}

// Ranker ranks the corpus for a query; it returns doc ids, best first.
type Ranker interface {
	Rank(ctx context.Context, query string, k int) ([]string, error)
}

// RankerFunc adapts a function to Ranker.
type RankerFunc func(ctx context.Context, query string, k int) ([]string, error)

// Rank implements Ranker.
func (f RankerFunc) Rank(ctx context.Context, query string, k int) ([]string, error) {
	return f(ctx, query, k)
}

// RecallDepth is how deep Evaluate asks a ranker: read_context's largest
// limit (tools.MaxContextLimit), the most an agent can see of one query.
const RecallDepth = tools.MaxContextLimit

// Scores are a mode's averages over the test queries.
type Scores struct {
	Mode     string  `json:"mode"`
	NDCG10   float64 `json:"ndcg@10"`
	Recall10 float64 `json:"recall@10"`
	// Recall50 is recall at read_context's largest limit.
	Recall50 float64 `json:"recall@50"`
	Queries  int     `json:"queries"`
	// Ranked holds each query's top 10 document ids by query id, for a
	// comparison with what an agent is answered.
	Ranked map[string][]string `json:"ranked,omitempty"`
	// QueryP50Ms is the median time to rank one query: a read_context
	// call through the daemon's query service when Run measures.
	QueryP50Ms float64 `json:"query_p50_ms"`
}

// Evaluate ranks every query with qrels and averages the metrics.
func Evaluate(ctx context.Context, ds *Dataset, mode string, r Ranker) (Scores, error) {
	s := Scores{Mode: mode}
	ids := make([]string, 0, len(ds.Qrels))
	for qid := range ds.Qrels {
		ids = append(ids, qid)
	}
	sort.Strings(ids)
	lat := make([]float64, 0, len(ids))
	for _, qid := range ids {
		start := time.Now()
		ranked, err := r.Rank(ctx, ds.Queries[qid], RecallDepth)
		if err != nil {
			return s, fmt.Errorf("%s: query %s: %w", mode, qid, err)
		}
		lat = append(lat, float64(time.Since(start))/float64(time.Millisecond))
		if s.Ranked == nil {
			s.Ranked = make(map[string][]string, len(ids))
		}
		s.Ranked[qid] = ranked[:min(10, len(ranked))]
		rel := ds.Qrels[qid]
		s.NDCG10 += NDCG(ranked, rel, 10)
		s.Recall10 += Recall(ranked, rel, 10)
		s.Recall50 += Recall(ranked, rel, RecallDepth)
	}
	if n := float64(len(ids)); n > 0 {
		s.NDCG10, s.Recall10, s.Recall50 = s.NDCG10/n, s.Recall10/n, s.Recall50/n
		sort.Float64s(lat)
		s.QueryP50Ms = lat[(len(lat)-1)/2]
	}
	s.Queries = len(ids)
	return s, nil
}

// NDCG is nDCG@k with graded relevance, log2 discount and the grade
// itself as the gain, as BEIR computes it: pytrec_eval runs trec_eval's
// ndcg_cut, whose gains are the qrels' levels (not 2^rel − 1; the two
// agree on binary qrels such as SciFact's).
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	dcg := 0.0
	for i, id := range ranked[:min(k, len(ranked))] {
		if g := rel[id]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i)+2)
		}
	}
	grades := make([]int, 0, len(rel))
	for _, g := range rel {
		grades = append(grades, g)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	ideal := 0.0
	for i, g := range grades[:min(k, len(grades))] {
		ideal += float64(g) / math.Log2(float64(i)+2)
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// Recall is the share of relevant docs found in the top k.
func Recall(ranked []string, rel map[string]int, k int) float64 {
	if len(rel) == 0 {
		return 0
	}
	found := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			found++
		}
	}
	return float64(found) / float64(len(rel))
}

// PrintTable writes the scores as an aligned table.
func PrintTable(w io.Writer, ds *Dataset, scores []Scores) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s: %d docs, %d test queries\n", ds.Name, len(ds.Docs), len(ds.Qrels))
	fmt.Fprintln(tw, "mode\tnDCG@10\trecall@10\trecall@50\tquery p50")
	for _, s := range scores {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t%.2f ms\n", s.Mode, s.NDCG10, s.Recall10, s.Recall50, s.QueryP50Ms)
	}
	tw.Flush()
}
