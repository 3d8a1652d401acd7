package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/embed/cache"
	"github.com/cuedeck/cuedeck/internal/eval"
)

func cmdEval(args []string) error {
	if len(args) == 0 || args[0] != "beir" {
		return fmt.Errorf("usage: cue eval beir DIR [--modes keyword,semantic,hybrid,rrf] [--json]")
	}
	fs, _ := newFlags("eval beir")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	modes := fs.String("modes", "keyword,semantic,hybrid,rrf", "comma-separated modes to measure: keyword, semantic, hybrid, rrf")
	cacheDir := fs.String("cache", defaultEvalCache(), `vector cache directory, so a second run embeds nothing ("" for none)`)
	// Flags may come before or after the directory.
	var positional []string
	for rest := args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(positional) != 1 {
		return fmt.Errorf("usage: cue eval beir DIR [--modes keyword,semantic,hybrid,rrf] [--json]: give one BEIR directory (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	}
	ds, err := eval.Load(positional[0])
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	wanted := strings.Split(*modes, ",")
	needsVectors := false
	for i, m := range wanted {
		wanted[i] = strings.TrimSpace(m)
		switch wanted[i] {
		case "keyword":
		case "semantic", "hybrid", "rrf":
			needsVectors = true
		default:
			return fmt.Errorf("unknown mode %q: use keyword, semantic, hybrid or rrf", wanted[i])
		}
	}
	corpus := eval.NewCorpus(ds, progressBar("index"))
	if needsVectors {
		// The built-in model: what `cue up` uses when no Ollama model is
		// configured.
		var e embed.Embedder = builtin.New()
		if *cacheDir != "" {
			vc, err := cache.Open(*cacheDir, nil)
			if err != nil {
				return fmt.Errorf("%w (or pass --cache \"\")", err)
			}
			defer vc.Close()
			e = cache.Wrap(e, vc)
		}
		if err := corpus.Embed(ctx, e, progressBar("embed")); err != nil {
			return err
		}
	}
	var scores []eval.Scores
	for _, mode := range wanted {
		ranker, err := corpus.Ranker(mode)
		if err != nil {
			return err
		}
		s, err := eval.Evaluate(ctx, ds, mode, ranker)
		if err != nil {
			return err
		}
		scores = append(scores, s)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"dataset": ds.Name, "docs": len(ds.Docs), "queries": len(ds.Qrels), "scores": scores})
	}
	eval.PrintTable(os.Stdout, ds, scores)
	return nil
}

// progressBar draws indexing progress on stderr, leaving stdout to results.
// Off a terminal it says only when indexing is done.
func progressBar(mode string) func(done, total int) {
	if st, err := os.Stderr.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return func(done, total int) {
			if done == total {
				fmt.Fprintf(os.Stderr, "%s: indexed %d docs\n", mode, total)
			}
		}
	}
	return func(done, total int) {
		const width = 30
		filled := width * done / max(total, 1)
		fmt.Fprintf(os.Stderr, "\r%-8s [%s%s] %d/%d docs", mode, strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
		if done == total {
			fmt.Fprintln(os.Stderr)
		}
	}
}

// defaultEvalCache is a per-user cache directory for evaluation vectors,
// or none when the system names no cache home.
func defaultEvalCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "cuedeck", "eval-vectors")
}
