package eval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/internal/eval/questions"
	"github.com/cuedeck/cuedeck/internal/localnode"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// RunOptions configure Run.
type RunOptions struct {
	// Modes are read_context's modes to measure (default keyword); any
	// other runs the daemon with the built-in model and waits for every
	// document's vectors.
	Modes []string
	// Work holds the workspace. Empty: a temporary directory, removed
	// after. A directory kept from an earlier run of the same data set is
	// restarted as `cue up` restarts, so nothing unchanged is embedded
	// again.
	Work string
	// EmbedFiles is [embed] files for the daemon ("prose" or "all");
	// empty: the product's default for the built-in model (prose).
	EmbedFiles string
	// Model is the embedding model's spec for the modes that need one
	// (provider.Open); empty: the built-in model.
	Model    string
	Debounce time.Duration
	Progress func(phase string, done, total int)
	Logger   *slog.Logger
}

// ModelFor is the daemon's model for the modes: "none" when every mode
// is keyword, else Model or the built-in one.
func (o RunOptions) ModelFor() (string, error) {
	model, err := questions.ModelFor(o.Modes)
	if err != nil || model == "none" || o.Model == "" {
		return model, err
	}
	return o.Model, nil
}

// DocPath is where document i of a data set lives in the workspace Run
// indexes. The name carries nothing a query could match: read_context
// scores paths, and a BEIR id ("MED-10", "test-environment-…pro02b") may
// hold words. It spells i in consonants, which no word is made of, five
// at least, longer than an acronym.
func DocPath(i int) string {
	const digits = "bcdfghjklmnpqrstvwxz"
	var b []byte
	for n := i; ; n /= len(digits) {
		b = append(b, digits[n%len(digits)])
		if n < len(digits) && len(b) >= 5 {
			break
		}
	}
	return path.Join("corpus", "q"+string(b)+".md")
}

// MaxQueryRunes is read_context's longest query (its schema's maxLength,
// seed 002's).
const MaxQueryRunes = 200

// Shorten cuts a query longer than read_context takes at its last space
// within MaxQueryRunes code points, as an agent does when the tool
// refuses the whole; a query within the limit is returned as it is.
func Shorten(q string) string {
	if utf8.RuneCountInString(q) <= MaxQueryRunes {
		return q
	}
	runes := []rune(q)[:MaxQueryRunes]
	if i := strings.LastIndexFunc(string(runes), unicode.IsSpace); i > 0 {
		return strings.TrimSpace(string(runes)[:i])
	}
	return string(runes)
}

// DocText is document d as a markdown file: its title as the heading the
// indexer takes for the title field, then its text.
func DocText(d Doc) string {
	if strings.TrimSpace(d.Title) == "" {
		return d.Text + "\n"
	}
	return "# " + strings.Join(strings.Fields(d.Title), " ") + "\n\n" + d.Text + "\n"
}

// Run writes every document of ds as a markdown file into a workspace,
// indexes it with the daemon as `cue up` does (the indexer chunks it, the
// embed workers embed it, the edge ranks it) and asks every test query
// with read_context in each mode: the product's own path, files to
// answers. read_context answers at most tools.MaxContextLimit files, so
// recall is measured at that depth, and takes queries of at most
// MaxQueryRunes code points, so a longer one is Shortened, as an agent
// would shorten it.
func Run(ctx context.Context, ds *Dataset, o RunOptions) ([]Scores, error) {
	if len(o.Modes) == 0 {
		o.Modes = []string{tools.ModeKeyword}
	}
	model, err := o.ModelFor()
	if err != nil {
		return nil, err
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	work := o.Work
	if work == "" {
		if work, err = os.MkdirTemp("", "cue-eval-beir-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	root := filepath.Join(work, ds.Name)
	files := make([]string, len(ds.Docs))
	docOf := make(map[string]string, len(ds.Docs))
	for i, d := range ds.Docs {
		progress("write", i, len(ds.Docs))
		files[i] = DocPath(i)
		docOf[files[i]] = d.ID
		if err := questions.WriteIfChanged(filepath.Join(root, filepath.FromSlash(files[i])), DocText(d)); err != nil {
			return nil, err
		}
	}
	if err := removeOthers(root, docOf); err != nil {
		return nil, err
	}
	progress("start daemon", 0, 0)
	n, err := localnode.Start(ctx, root, localnode.Options{Model: model, EmbedCores: runtime.NumCPU(), Debounce: o.Debounce, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer n.Stop()
	if err := questions.WaitIndexed(ctx, n, root, files, progress); err != nil {
		return nil, err
	}
	if model != "none" {
		// The probe is a query read_context takes: SciFact holds one over
		// its limit.
		probe := Shorten(ds.Queries[slices.Min(slices.Collect(maps.Keys(ds.Qrels)))])
		if err := questions.WaitEmbedded(ctx, n, model, len(files), probe, progress); err != nil {
			return nil, err
		}
	}
	var scores []Scores
	for _, mode := range o.Modes {
		asked := 0
		s, err := Evaluate(ctx, ds, mode, RankerFunc(func(ctx context.Context, q string, k int) ([]string, error) {
			progress("ask "+mode, asked, len(ds.Qrels))
			asked++
			q = Shorten(q)
			hits, err := n.ReadContext(ctx, q, mode, min(k, tools.MaxContextLimit))
			if err != nil {
				return nil, fmt.Errorf("read_context %q: %w", q, err)
			}
			ranked := make([]string, 0, len(hits))
			seen := make(map[string]bool, len(hits))
			for _, h := range hits {
				if id, ok := docOf[h.Path]; ok && !seen[id] {
					seen[id] = true
					ranked = append(ranked, id)
				}
			}
			return ranked, nil
		}))
		if err != nil {
			return nil, err
		}
		scores = append(scores, s)
	}
	progress("stop daemon", 0, 0)
	if err := n.Stop(); err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("eval: stopping the daemon: %w", err)
	}
	return scores, nil
}

// removeOthers deletes the files under root's corpus directory that are
// not documents of the set: a kept workspace (RunOptions.Work) of an
// earlier, larger version of the set would rank them too.
func removeOthers(root string, docOf map[string]string) error {
	dir := filepath.Join(root, "corpus")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, ok := docOf[path.Join("corpus", e.Name())]; !ok {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
