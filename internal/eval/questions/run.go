package questions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/localnode"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Forms a question is asked in: as an agent asks it, and as the heading's
// keywords. The gap between them is what the phrasing costs.
const (
	FormQuestion = "question"
	FormKeywords = "keywords"
)

// Limit is the read_context limit of every question: the metrics look at
// the top 10.
const Limit = 10

// Options configure Run. Dir is required.
type Options struct {
	// Dir is the documentation directory. It is copied into a new
	// workspace, so a read-only directory (the Go module cache) will do.
	Dir string
	// Seed picks and phrases the questions; Max bounds their number (all
	// when zero).
	Seed uint64
	Max  int
	// Modes are read_context's modes to measure (default keyword). Any
	// mode but keyword runs the daemon with the built-in model and waits
	// for every document's vectors.
	Modes []string
	// Work holds the workspace; a new temporary directory, removed after,
	// when empty.
	Work string
	// Debounce overrides the daemon's ingest debounce; tests shorten it.
	Debounce time.Duration
	// Progress hears each phase, and done of total within it; nil is
	// silent.
	Progress func(phase string, done, total int)
	// Logger receives the daemon's logs; nil discards them.
	Logger *slog.Logger
}

// Scores are one mode's and form's averages over the questions.
type Scores struct {
	Mode string  `json:"mode"`
	Form string  `json:"form"`
	Hit1 float64 `json:"hit@1"`
	Hit3 float64 `json:"hit@3"`
	// MRR10 is the mean reciprocal rank of the answer in the top 10.
	MRR10 float64 `json:"mrr@10"`
	// NDCG10 is nDCG@10 with the answering file as the one relevant
	// document: 1/log2(rank+1).
	NDCG10 float64 `json:"ndcg@10"`
	// Section1 is the share of questions whose first hit is the answer
	// with the question's heading as its matching section.
	Section1 float64 `json:"section@1"`
	Queries  int     `json:"queries"`
}

// Answer is one question and where its answer ranked in each mode and
// form ("keyword/question"): 0 when not in the top 10. Top holds the first
// hit's path.
type Answer struct {
	Question
	Ranks map[string]int    `json:"ranks"`
	Top   map[string]string `json:"top"`
}

// Report is the result of Run.
type Report struct {
	Dir       string   `json:"dir"`
	Seed      uint64   `json:"seed"`
	Files     int      `json:"files"` // markdown files indexed
	Questions int      `json:"questions"`
	Scores    []Scores `json:"scores"`
	Answers   []Answer `json:"answers,omitempty"`
}

// ModelFor is the embedding model a daemon measuring modes needs: none
// for keyword alone, the built-in one for any other mode.
func ModelFor(modes []string) (string, error) {
	model := "none"
	for _, m := range modes {
		switch m {
		case tools.ModeKeyword:
		case tools.ModeSemantic, tools.ModeHybrid, tools.ModeRRF:
			model = "builtin"
		default:
			return "", fmt.Errorf("unknown mode %q: use keyword, semantic, hybrid or rrf", m)
		}
	}
	return model, nil
}

// stallLimit is how long a wait for the daemon (indexing, then vectors)
// goes on without progress before it gives up: a large set on a busy
// machine may take hours, but a daemon that stopped moving will not
// finish.
const stallLimit = 10 * time.Minute

// Run generates the questions of o.Dir, indexes the directory through the
// daemon and asks each question in each mode and form.
func Run(ctx context.Context, o Options) (*Report, error) {
	if len(o.Modes) == 0 {
		o.Modes = []string{tools.ModeKeyword}
	}
	model, err := ModelFor(o.Modes)
	if err != nil {
		return nil, err
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	qs, err := GenerateDir(o.Dir, o.Seed, o.Max)
	if err != nil {
		return nil, err
	}
	work := o.Work
	if work == "" {
		if work, err = os.MkdirTemp("", "cue-eval-questions-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	root := filepath.Join(work, "docs")
	docs, err := copyTree(root, o.Dir)
	if err != nil {
		return nil, err
	}
	progress("start daemon", 0, 0)
	n, err := localnode.Start(ctx, root, localnode.Options{Model: model, EmbedCores: runtime.NumCPU(), Debounce: o.Debounce, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	defer n.Stop()
	if err := WaitIndexed(ctx, n, root, docs, progress); err != nil {
		return nil, err
	}
	if model != "none" {
		if err := WaitEmbedded(ctx, n, model, len(docs), qs[0].Keywords, progress); err != nil {
			return nil, err
		}
	}
	r := &Report{Dir: o.Dir, Seed: o.Seed, Files: len(docs), Questions: len(qs)}
	for _, q := range qs {
		r.Answers = append(r.Answers, Answer{Question: q, Ranks: map[string]int{}, Top: map[string]string{}})
	}
	for _, mode := range o.Modes {
		for _, form := range []string{FormQuestion, FormKeywords} {
			s := Scores{Mode: mode, Form: form, Queries: len(qs)}
			key := mode + "/" + form
			for i, q := range qs {
				progress("ask "+key, i, len(qs))
				text := q.Text
				if form == FormKeywords {
					text = q.Keywords
				}
				hits, err := n.ReadContext(ctx, text, mode, Limit)
				if err != nil {
					return nil, fmt.Errorf("questions: %q in %s mode: %w", text, mode, err)
				}
				rank := 0
				for k, h := range hits {
					if h.Path == q.Path {
						rank = k + 1
						break
					}
				}
				a := &r.Answers[i]
				a.Ranks[key] = rank
				if len(hits) > 0 {
					a.Top[key] = hits[0].Path
				}
				if rank == 0 {
					continue
				}
				if rank == 1 {
					s.Hit1++
					if sec := hits[0].Section; q.Line == 0 || (sec != nil && sec.Heading == q.Heading) {
						s.Section1++
					}
				}
				if rank <= 3 {
					s.Hit3++
				}
				s.MRR10 += 1 / float64(rank)
				s.NDCG10 += 1 / math.Log2(float64(rank)+1)
			}
			if n := float64(len(qs)); n > 0 {
				s.Hit1, s.Hit3, s.MRR10, s.NDCG10, s.Section1 = s.Hit1/n, s.Hit3/n, s.MRR10/n, s.NDCG10/n, s.Section1/n
			}
			r.Scores = append(r.Scores, s)
		}
	}
	progress("stop daemon", 0, 0)
	if err := n.Stop(); err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("questions: stopping the daemon: %w", err)
	}
	return r, nil
}

// copyTree copies the regular files under src, hidden directories left
// out, to dst, and returns the markdown files' slash paths in order.
func copyTree(dst, src string) ([]string, error) {
	var docs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, rel), b, 0o644); err != nil {
			return err
		}
		if isMarkdown(p) {
			docs = append(docs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("questions: copy %s into a workspace: %w", src, err)
	}
	slices.Sort(docs)
	return docs, nil
}

// WaitIndexed waits until the daemon answers from every one of docs as its
// file under root reads now: cue_docs holds a record of each with the
// file's SHA-256 (a kept workspace holds the records of an earlier run,
// whose files the set may since have changed), and the edge has applied
// every record up to the last of them. It gives up when nothing
// progresses for stallLimit.
func WaitIndexed(ctx context.Context, n *localnode.Node, root string, docs []string, progress func(string, int, int)) error {
	want := make([]string, len(docs))
	for i, d := range docs {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d)))
		if err != nil {
			return fmt.Errorf("questions: %w", err)
		}
		want[i] = events.SHA256Hex(b)
	}
	stream, err := n.Conn.JS.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		return fmt.Errorf("questions: bucket %s: %w", events.DocsBucket, err)
	}
	deadline := time.Now().Add(stallLimit)
	stalled := func(what string) error {
		if time.Now().After(deadline) {
			return fmt.Errorf("questions: %s after %s without progress", what, stallLimit)
		}
		return pause(ctx, 100*time.Millisecond)
	}
	for i := 0; i < len(docs); {
		progress("index", i, len(docs))
		msg, err := stream.GetLastMsgForSubject(ctx, events.DocsSubject(events.DocKey(n.Info.Repo, docs[i])))
		switch {
		case err == nil && msg.Header.Get(events.HeaderDocSHA256) == want[i]:
			i++
			deadline = time.Now().Add(stallLimit)
			continue
		case err != nil && !errors.Is(err, jetstream.ErrMsgNotFound):
			return fmt.Errorf("questions: read the record of %s: %w", docs[i], err)
		}
		if err := stalled(fmt.Sprintf("%s is not indexed as it reads now (%d of %d files are)", docs[i], i, len(docs))); err != nil {
			return err
		}
	}
	progress("index", len(docs), len(docs))
	info, err := stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("questions: bucket %s: %w", events.DocsBucket, err)
	}
	for {
		rep, _, err := telemetry.FetchReport(ctx, n.Info.MCPURL)
		if err == nil && rep.Applied(events.DocsBucket) >= info.State.LastSeq {
			return nil
		}
		if err := stalled(fmt.Sprintf("the edge has not applied %s up to revision %d", events.DocsBucket, info.State.LastSeq)); err != nil {
			return err
		}
	}
}

// WaitEmbedded polls the daemon's status until every document has its
// vectors of model (the daemon's [embed] model spec), then read_context
// until semantic search answers probe from them; an empty probe skips
// that (every file left without vectors).
func WaitEmbedded(ctx context.Context, n *localnode.Node, model string, docs int, probe string, progress func(string, int, int)) error {
	modelID, err := provider.ModelID(model)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(stallLimit)
	vectors := -1
	for {
		rep, err := status.CollectWith(ctx, n.Conn.JS, status.Options{EmbedModel: modelID})
		if err != nil {
			return err
		}
		if e := rep.Embeddings; e != nil {
			progress("embed", e.Vectors, max(e.Docs, docs))
			if e.Docs >= docs && e.Vectors >= e.Docs && e.Pending == 0 {
				break
			}
			if e.Vectors > vectors {
				vectors, deadline = e.Vectors, time.Now().Add(stallLimit)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("questions: no document was embedded in %s (%d of %d have vectors)", stallLimit, max(vectors, 0), docs)
		}
		// Each look lists every key of cue_docs and cue_vectors, as `cue
		// status` does: on a large set, looking often would take the CPU
		// the embedding needs.
		every := 250 * time.Millisecond
		if docs > 5000 {
			every = 2 * time.Second
		}
		if err := pause(ctx, every); err != nil {
			return err
		}
	}
	// The edge applies vectors after the status counts them.
	for probe != "" {
		hits, err := n.ReadContext(ctx, probe, tools.ModeSemantic, 1)
		if err != nil {
			return err
		}
		if len(hits) > 0 && hits[0].Fallback == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("questions: semantic search still falls back to keywords after every document was embedded")
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// PrintTable writes the scores as an aligned table.
func PrintTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s: %d markdown files, %d questions (seed %d)\n", r.Dir, r.Files, r.Questions, r.Seed)
	fmt.Fprintln(tw, "mode\tasked as\thit@1\thit@3\tMRR@10\tnDCG@10\tsection@1")
	for _, s := range r.Scores {
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\n", s.Mode, s.Form, s.Hit1, s.Hit3, s.MRR10, s.NDCG10, s.Section1)
	}
	return tw.Flush()
}

// PrintAnswers writes each question with the rank of its answer per mode
// and form, and the first hit when the answer was not it.
func PrintAnswers(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, a := range r.Answers {
		fmt.Fprintf(tw, "%s\t→ %s#%s\n", a.Text, a.Path, a.Heading)
		for _, s := range r.Scores {
			key := s.Mode + "/" + s.Form
			top := ""
			if a.Ranks[key] != 1 {
				top = "first: " + a.Top[key]
			}
			fmt.Fprintf(tw, "\t%s\trank %d\t%s\n", key, a.Ranks[key], top)
		}
	}
	return tw.Flush()
}

// WriteIfChanged writes text to p, making its directory, unless p holds
// it already: a workspace an evaluation keeps (its Work option) then
// keeps its files' times, and the daemon's restart finds nothing to do.
func WriteIfChanged(p, text string) error {
	if b, err := os.ReadFile(p); err == nil && string(b) == text {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(text), 0o644)
}
