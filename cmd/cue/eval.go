package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/cuedeck/cuedeck/internal/eval"
)

// evalModes are the ranking modes `cue eval` can measure. Embedding modes
// join this table as their embedders land.
var evalModes = map[string]func(ds *eval.Dataset, progress func(done, total int)) (eval.Ranker, error){
	"keyword": func(ds *eval.Dataset, progress func(int, int)) (eval.Ranker, error) {
		return eval.KeywordRanker(ds, progress), nil
	},
}

func cmdEval(args []string) error {
	if len(args) == 0 || args[0] != "beir" {
		return fmt.Errorf("usage: cue eval beir DIR [--modes keyword,...] [--json]")
	}
	fs, _ := newFlags("eval beir")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	modes := fs.String("modes", "keyword", "comma-separated modes to measure")
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
		return fmt.Errorf("usage: cue eval beir DIR [--modes keyword,...] [--json]: give one BEIR directory (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	}
	ds, err := eval.Load(positional[0])
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var scores []eval.Scores
	for _, mode := range strings.Split(*modes, ",") {
		mode = strings.TrimSpace(mode)
		build, ok := evalModes[mode]
		if !ok {
			return fmt.Errorf("mode %q cannot be measured by this build (available: %s)", mode, strings.Join(sortedKeys(evalModes), ", "))
		}
		ranker, err := build(ds, progressBar(mode))
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
