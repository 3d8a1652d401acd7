package codesearch

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/cuedeck/cuedeck/internal/eval"
	"github.com/cuedeck/cuedeck/internal/eval/questions"
	"github.com/cuedeck/cuedeck/internal/localnode"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// RunOptions configure Run as they configure a BEIR set's run: the modes
// (any but keyword embeds every function), the workspace kept or not,
// progress and the daemon's logs.
type RunOptions = eval.RunOptions

// Scores are one mode's averages over the queries, the answer being the
// query's one function file.
type Scores struct {
	Mode  string  `json:"mode"`
	Hit1  float64 `json:"hit@1"`
	Hit10 float64 `json:"hit@10"`
	// Hit50 is recall at read_context's largest limit
	// (tools.MaxContextLimit): the share of queries whose function is
	// among the first 50 hits at all.
	Hit50   float64 `json:"hit@50"`
	MRR10   float64 `json:"mrr@10"`
	NDCG10  float64 `json:"ndcg@10"`
	Queries int     `json:"queries"`
}

// Report is what Run measured.
type Report struct {
	Functions int      `json:"functions"`
	Queries   int      `json:"queries"`
	Scores    []Scores `json:"scores"`
}

// FilePath is where function i of s lives in the workspace Run indexes:
// the directory of its source file (the file's name with "_go" for
// ".go"), then f<i>.go. The path keeps the package's words, as a real
// repository's does, and not the function's name, which the query lacks.
func (s *Set) FilePath(i int) string {
	file, _, _ := strings.Cut(s.Functions[i].ID, "#")
	return path.Join(strings.TrimSuffix(file, ".go")+"_go", fmt.Sprintf("f%05d.go", i))
}

// removeStale deletes the Go files under root that files (slash paths
// from root) do not name: those of another set written into a kept
// workspace, which would be indexed and ranked beside this one's.
func removeStale(root string, files []string) error {
	keep := make(map[string]bool, len(files))
	for _, f := range files {
		keep[f] = true
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".cuedeck":
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go"):
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || keep[filepath.ToSlash(rel)] {
			return err
		}
		return os.Remove(p)
	})
}

// Run writes every function of s as a Go file (its package clause, then
// the function without its doc comment) into a new workspace, indexes it
// with the daemon as `cue up` does, and asks each query with read_context
// in each mode: the product's own path, files to answers.
func Run(ctx context.Context, s *Set, o RunOptions) (*Report, error) {
	if len(o.Modes) == 0 {
		o.Modes = []string{tools.ModeKeyword}
	}
	model, err := o.ModelFor()
	if err != nil {
		return nil, fmt.Errorf("codesearch: %w", err)
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	work := o.Work
	if work == "" {
		if work, err = os.MkdirTemp("", "cue-eval-codesearch-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	root := filepath.Join(work, "code")
	files := make([]string, len(s.Functions))
	for i, f := range s.Functions {
		progress("write", i, len(s.Functions))
		files[i] = s.FilePath(i)
		p := filepath.Join(root, filepath.FromSlash(files[i]))
		if err := questions.WriteIfChanged(p, "package "+f.Package+"\n\n"+f.Code+"\n"); err != nil {
			return nil, err
		}
	}
	if err := removeStale(root, files); err != nil {
		return nil, fmt.Errorf("codesearch: %w", err)
	}
	progress("start daemon", 0, 0)
	n, err := localnode.Start(ctx, root, localnode.Options{Model: model, EmbedCores: runtime.NumCPU(), EmbedFiles: o.EmbedFiles, Debounce: o.Debounce, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("codesearch: %w", err)
	}
	defer n.Stop()
	if err := questions.WaitIndexed(ctx, n, root, files, progress); err != nil {
		return nil, err
	}
	if model != "none" {
		// Every file is code: unless code is embedded too, the records
		// say so and semantic search has nothing to answer from.
		probe := s.Functions[s.Queries[0]].Query
		if o.EmbedFiles != "all" {
			probe = ""
		}
		if err := questions.WaitEmbedded(ctx, n, model, len(files), probe, progress); err != nil {
			return nil, err
		}
	}
	r := &Report{Functions: len(s.Functions), Queries: len(s.Queries)}
	for _, mode := range o.Modes {
		sc := Scores{Mode: mode, Queries: len(s.Queries)}
		for k, qi := range s.Queries {
			progress("ask "+mode, k, len(s.Queries))
			// Asked twice: as an agent asks for a few answers, and for as
			// many as read_context gives. The fused modes draw a deeper
			// pool for more answers, so the first ten of the second
			// answer need not be those of the first.
			var ranks [2]int
			for i, limit := range []int{questions.Limit, tools.MaxContextLimit} {
				hits, err := n.ReadContext(ctx, s.Functions[qi].Query, mode, limit)
				if err != nil {
					return nil, fmt.Errorf("codesearch: %q in %s mode: %w", s.Functions[qi].Query, mode, err)
				}
				for j, h := range hits {
					if h.Path == files[qi] {
						ranks[i] = j + 1
						break
					}
				}
			}
			sc.add(ranks[0], ranks[1])
		}
		sc.average()
		r.Scores = append(r.Scores, sc)
	}
	r.Scores = append(r.Scores, PlainBM25(s))
	return r, nil
}

// add counts one query whose answer ranked rank among the first ten
// answers and deep among the first fifty (0: not there).
func (sc *Scores) add(rank, deep int) {
	if deep > 0 && deep <= tools.MaxContextLimit {
		sc.Hit50++
	}
	if rank == 0 || rank > 10 {
		return
	}
	if rank == 1 {
		sc.Hit1++
	}
	sc.Hit10++
	sc.MRR10 += 1 / float64(rank)
	sc.NDCG10 += 1 / math.Log2(float64(rank)+1)
}

// average turns the sums add made into means over the queries.
func (sc *Scores) average() {
	if q := float64(sc.Queries); q > 0 {
		sc.Hit1, sc.Hit10, sc.Hit50, sc.MRR10, sc.NDCG10 = sc.Hit1/q, sc.Hit10/q, sc.Hit50/q, sc.MRR10/q, sc.NDCG10/q
	}
}

// PrintTable writes the scores as an aligned table.
func PrintTable(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "code search through read_context: %d queries over %d functions\n", r.Queries, r.Functions)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tnDCG@10\tMRR@10\thit@1\thit@10\thit@50\t")
	for _, s := range r.Scores {
		mode := s.Mode
		if mode == PlainMode {
			mode = "plain BM25 (reference, in-process)"
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.3f\t%.3f\t%.3f\t\n", mode, s.NDCG10, s.MRR10, s.Hit1, s.Hit10, s.Hit50)
	}
	return tw.Flush()
}
