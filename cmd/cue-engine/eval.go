package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cuedeck/cuedeck/internal/embed/static"
	"github.com/cuedeck/cuedeck/internal/eval"
	"github.com/cuedeck/cuedeck/internal/eval/codesearch"
	"github.com/cuedeck/cuedeck/internal/eval/questions"
)

const (
	evalBEIRUsage      = "cue eval beir DIR [--modes keyword,semantic,hybrid,rrf] [--model SPEC] [--work DIR] [--json [--ranks]]"
	evalQuestionsUsage = "cue eval questions DIR [--seed N] [--max N] [--modes keyword,hybrid] [--json] [--list]"
	evalCodeUsage      = "cue eval code [--root DIR]... [--seed N] [--queries N] [--modes keyword,hybrid] [--model SPEC] [--embed-files prose|all] [--write DIR] [--work DIR] [--json]"
	evalTrainUsage     = "cue eval train --out FILE [--root DIR]... [--seed N] [--queries N] [--beir DIR] [--dims N] [--epochs N] [--min-count N]"
)

func cmdEval(args []string) error {
	if len(args) > 0 && args[0] == "questions" {
		return cmdEvalQuestions(args[1:])
	}
	if len(args) > 0 && args[0] == "code" {
		return cmdEvalCode(args[1:])
	}
	if len(args) > 0 && args[0] == "train" {
		return cmdEvalTrain(args[1:])
	}
	if len(args) == 0 || args[0] != "beir" {
		return fmt.Errorf("usage: %s\n       %s\n       %s\n       %s", evalBEIRUsage, evalQuestionsUsage, evalCodeUsage, evalTrainUsage)
	}
	fs, c := newFlags("eval beir")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	modes := fs.String("modes", "keyword,semantic,hybrid,rrf", "comma-separated read_context modes: keyword, semantic, hybrid, rrf (any but keyword embeds every document with the built-in model)")
	work := fs.String("work", "", "keep the workspace in this directory: a second run restarts its daemon and embeds nothing unchanged (default: a temporary directory, removed)")
	ranks := fs.Bool("ranks", false, "with --json: each query's top 10 document ids per mode")
	model := fs.String("model", "", `embedding model for the modes that need one ("builtin", "ollama:<model>", "static:<file>", "builtin+code=static:<file>"); default builtin`)
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return fmt.Errorf("usage: %s: give one BEIR directory (corpus.jsonl, queries.jsonl, qrels/test.tsv)", evalBEIRUsage)
	}
	ds, err := eval.Load(positional[0])
	if err != nil {
		return err
	}
	var wanted []string
	for _, m := range strings.Split(*modes, ",") {
		wanted = append(wanted, strings.TrimSpace(m))
	}
	if _, err := questions.ModelFor(wanted); err != nil {
		return err
	}
	log, err := daemonLogs(fs, c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(os.Stderr, "cue eval beir: %d documents as files, %d test queries, through the daemon\n", len(ds.Docs), len(ds.Qrels))
	scores, err := eval.Run(ctx, ds, eval.RunOptions{Modes: wanted, Model: *model, Work: *work, Progress: phaseProgress(), Logger: log})
	if err != nil {
		return err
	}
	if !*ranks {
		for i := range scores {
			scores[i].Ranked = nil
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"dataset": ds.Name, "docs": len(ds.Docs), "queries": len(ds.Qrels), "scores": scores})
	}
	eval.PrintTable(os.Stdout, ds, scores)
	return nil
}

// parseInterleaved parses args with fs, flags before or after the
// positional arguments, which it returns.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

// cmdEvalQuestions is `cue eval questions`: questions written from a docs
// directory's headings, asked through the daemon (internal/eval/questions).
func cmdEvalQuestions(args []string) error {
	fs, c := newFlags("eval questions")
	asJSON := fs.Bool("json", false, "print the scores, and every question with its answer's ranks, as JSON")
	list := fs.Bool("list", false, "also print every question with its answer's rank per mode")
	modes := fs.String("modes", "keyword", "comma-separated read_context modes: keyword, semantic, hybrid, rrf (any but keyword embeds the docs with the built-in model)")
	seed := fs.Uint64("seed", 1, "seed that picks and phrases the questions")
	maxQ := fs.Int("max", 0, "at most this many questions (0: one per usable heading)")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return fmt.Errorf("usage: %s: give one directory of markdown docs", evalQuestionsUsage)
	}
	var wanted []string
	for _, m := range strings.Split(*modes, ",") {
		wanted = append(wanted, strings.TrimSpace(m))
	}
	log, err := daemonLogs(fs, c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := questions.Run(ctx, questions.Options{
		Dir: positional[0], Seed: *seed, Max: *maxQ, Modes: wanted,
		Progress: phaseProgress(), Logger: log,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	if *list {
		if err := questions.PrintAnswers(os.Stdout, r); err != nil {
			return err
		}
		fmt.Println()
	}
	return questions.PrintTable(os.Stdout, r)
}

// phaseProgress shows a phase and its count on stderr when it is a
// terminal; off a terminal, each phase once.
func phaseProgress() func(phase string, done, total int) {
	tty := false
	if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		tty = true
	}
	last := ""
	return func(phase string, done, total int) {
		switch {
		case tty:
			fmt.Fprintf(os.Stderr, "\r\033[K%s %d/%d", phase, done, total)
		case phase != last:
			fmt.Fprintln(os.Stderr, phase)
		}
		last = phase
	}
}

// rootList is a repeatable --root flag.
type rootList []string

func (r *rootList) String() string     { return strings.Join(*r, ",") }
func (r *rootList) Set(v string) error { *r = append(*r, v); return nil }

// cmdEvalCode is `cue eval code`: the code-search set built from Go
// source on this machine (internal/eval/codesearch), written in BEIR's
// layout with --write, and asked through the daemon as files.
func cmdEvalCode(args []string) error {
	fs, c := newFlags("eval code")
	var roots rootList
	fs.Var(&roots, "root", "directory of Go source to draw functions from (repeatable; default: $(go env GOROOT)/src and $(go env GOMODCACHE))")
	seed := fs.Uint64("seed", codesearch.DefaultSeed, "seed that draws the queries")
	nq := fs.Int("queries", 2000, "queries to draw")
	modes := fs.String("modes", "keyword", "comma-separated read_context modes: keyword, semantic, hybrid, rrf (any but keyword runs the daemon with the built-in model)")
	embedFiles := fs.String("embed-files", "", `[embed] files for the daemon: "all" embeds the functions; default: the built-in model's, "prose", which leaves code to keyword search`)
	model := fs.String("model", "", `embedding model for the modes that need one ("builtin", "ollama:<model>", "static:<file>", "builtin+code=static:<file>"); default builtin`)
	write := fs.String("write", "", "also write the set in BEIR's layout into this directory (for `cue eval beir`)")
	work := fs.String("work", "", "keep the workspace in this directory: a second run restarts its daemon and embeds nothing unchanged (default: a temporary directory, removed)")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 0 {
		return fmt.Errorf("usage: %s", evalCodeUsage)
	}
	set, _, err := codeSet(roots, *nq, *seed)
	if err != nil {
		return err
	}
	if *write != "" {
		if err := set.Write(*write); err != nil {
			return err
		}
	}
	var wanted []string
	for _, m := range strings.Split(*modes, ",") {
		wanted = append(wanted, strings.TrimSpace(m))
	}
	log, err := daemonLogs(fs, c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *embedFiles != "" && *embedFiles != "prose" && *embedFiles != "all" {
		return fmt.Errorf(`--embed-files %q: give "prose" or "all"`, *embedFiles)
	}
	r, err := codesearch.Run(ctx, set, codesearch.RunOptions{Modes: wanted, EmbedFiles: *embedFiles, Model: *model, Work: *work, Progress: phaseProgress(), Logger: log})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return codesearch.PrintTable(os.Stdout, r)
}

// codeSet draws the code-search set from roots, by default the Go
// standard library and the module cache.
func codeSet(roots rootList, queries int, seed uint64) (*codesearch.Set, rootList, error) {
	if len(roots) == 0 {
		goEnv := func(name, fallback string) string {
			if out, err := exec.Command("go", "env", name).Output(); err == nil && strings.TrimSpace(string(out)) != "" {
				return strings.TrimSpace(string(out))
			}
			return fallback
		}
		roots = rootList{filepath.Join(goEnv("GOROOT", runtime.GOROOT()), "src")}
		if mc := goEnv("GOMODCACHE", ""); mc != "" {
			if _, err := os.Stat(mc); err == nil {
				roots = append(roots, mc)
			}
		}
	}
	set, err := codesearch.Generate(codesearch.Options{Roots: roots, Queries: queries, Seed: seed})
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(os.Stderr, "cue eval: %d functions, %d queries (seed %d) from %s\n", len(set.Functions), len(set.Queries), seed, strings.Join(roots, ", "))
	return set, roots, nil
}

// cmdEvalTrain is `cue eval train`: a static token model (embed/static)
// learned from the code set's doc comments and code, leaving out the
// packages the set's queries come from, so that `cue eval code` with the
// same roots and seed measures it on what it never saw.
func cmdEvalTrain(args []string) error {
	fs, _ := newFlags("eval train")
	var roots rootList
	fs.Var(&roots, "root", "directory of Go source to learn from (repeatable; default: $(go env GOROOT)/src and $(go env GOMODCACHE))")
	seed := fs.Uint64("seed", codesearch.DefaultSeed, "seed of the code set whose queries' packages are left out")
	nq := fs.Int("queries", 2000, "queries of that set")
	out := fs.String("out", "", "model file to write (then [embed] model = \"static:FILE\")")
	beir := fs.String("beir", "", "learn instead from a BEIR corpus's documents, each title with its text (its queries and judgements are not read)")
	dims := fs.Int("dims", 128, "vector dimensions")
	epochs := fs.Int("epochs", 4, "passes over the pairs")
	minCount := fs.Int("min-count", 5, "leave out tokens found in fewer texts")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 0 || *out == "" {
		return fmt.Errorf("usage: %s", evalTrainUsage)
	}
	var pairs []static.Pair
	if *beir != "" {
		ds, err := eval.Load(*beir)
		if err != nil {
			return err
		}
		for _, d := range ds.Docs {
			if strings.TrimSpace(d.Title) != "" && strings.TrimSpace(d.Text) != "" {
				pairs = append(pairs, static.Pair{Query: d.Title, Doc: d.Text})
			}
		}
		fmt.Fprintf(os.Stderr, "cue eval train: %d pairs of title and text from %s\n", len(pairs), *beir)
	} else {
		set, roots, err := codeSet(roots, *nq, *seed)
		if err != nil {
			return err
		}
		if pairs, err = set.TrainingPairs(roots...); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "cue eval train: %d pairs of comment and code, outside the %d queries' packages\n", len(pairs), len(set.Queries))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	m, err := static.Train(ctx, pairs, static.TrainOptions{Name: strings.TrimSuffix(filepath.Base(*out), filepath.Ext(*out)), Dims: *dims, Epochs: *epochs, MinCount: *minCount, Seed: *seed,
		Progress: func(epoch int, loss float64) {
			fmt.Fprintf(os.Stderr, "epoch %d of %d: loss %.3f\n", epoch, *epochs, loss)
		}})
	if err != nil {
		return err
	}
	if err := m.Save(*out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "cue eval train: %d tokens × %d dimensions written to %s\n", len(m.Vocab), m.Dims, *out)
	return nil
}

// daemonLogs is the logger of an evaluation's daemon: none unless
// --log-level was given, since its logs would bury the report.
func daemonLogs(fs *flag.FlagSet, c *common) (*slog.Logger, error) {
	var log *slog.Logger
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "log-level" {
			log, err = c.logger()
		}
	})
	return log, err
}
