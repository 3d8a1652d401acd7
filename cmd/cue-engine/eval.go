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

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/embed/cache"
	"github.com/cuedeck/cuedeck/internal/eval"
	"github.com/cuedeck/cuedeck/internal/eval/codesearch"
	"github.com/cuedeck/cuedeck/internal/eval/questions"
)

const (
	evalBEIRUsage      = "cue eval beir DIR [--modes keyword,semantic,hybrid,rrf] [--json]"
	evalQuestionsUsage = "cue eval questions DIR [--seed N] [--max N] [--modes keyword,hybrid] [--json] [--list]"
	evalCodeUsage      = "cue eval code [--root DIR]... [--seed N] [--queries N] [--modes keyword,hybrid] [--write DIR] [--json]"
)

func cmdEval(args []string) error {
	if len(args) > 0 && args[0] == "questions" {
		return cmdEvalQuestions(args[1:])
	}
	if len(args) > 0 && args[0] == "code" {
		return cmdEvalCode(args[1:])
	}
	if len(args) == 0 || args[0] != "beir" {
		return fmt.Errorf("usage: %s\n       %s\n       %s", evalBEIRUsage, evalQuestionsUsage, evalCodeUsage)
	}
	fs, _ := newFlags("eval beir")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	modes := fs.String("modes", "keyword,semantic,hybrid,rrf", "comma-separated modes to measure: keyword, semantic, hybrid, rrf")
	cacheDir := fs.String("cache", defaultEvalCache(), `vector cache directory, so a second run embeds nothing ("" for none)`)
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
	modes := fs.String("modes", "keyword", "comma-separated read_context modes: keyword, semantic, hybrid, rrf (any but keyword embeds every function with the built-in model)")
	write := fs.String("write", "", "also write the set in BEIR's layout into this directory (for `cue eval beir`)")
	asJSON := fs.Bool("json", false, "print the scores as JSON")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 0 {
		return fmt.Errorf("usage: %s", evalCodeUsage)
	}
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
	set, err := codesearch.Generate(codesearch.Options{Roots: roots, Queries: *nq, Seed: *seed})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "cue eval code: %d functions, %d queries (seed %d) from %s\n", len(set.Functions), len(set.Queries), *seed, strings.Join(roots, ", "))
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
	r, err := codesearch.Run(ctx, set, codesearch.RunOptions{Modes: wanted, Progress: phaseProgress(), Logger: log})
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
