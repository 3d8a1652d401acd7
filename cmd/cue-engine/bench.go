package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cuedeck/cuedeck/internal/bench"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/role"
)

const benchUsage = `usage: cue bench --size 1k|10k|50k [--seed N] [--json FILE|-] [--out DIR] [--keep] [--log-level L]
       cue bench --repo DIR|goroot [--limit N] [--model none|builtin|ollama:M] [--embed-timeout D]
                 [--queries N] [--seed N] [--json FILE|-] [--out DIR] [--keep] [--log-level L]
       cue bench --tasks [--clients 1,8,64] [--edges 1,2] [--second-edge daemon|mcp-edge] [--duration 30s]
                 [--json FILE|-] [--out DIR] [--keep] [--log-level L]
       cue bench --savings [--seed N] [--json FILE|-]

Generates a corpus of markdown, code and task cards (deterministic from
--seed), runs the daemon on it in-process and measures ingest, the tools
through the NATS query service, the hook, freshness, embedding and
extraction throughput, and ripgrep on the same queries. Prints a table;
--json writes the report (docs/bench.md describes it; - for stdout).

  --size S       corpus size: 1k, 10k or 50k files
  --seed N       corpus seed (default 1)
  --json FILE    also write the JSON report to FILE, or - for stdout (the table then goes to stderr)
  --out DIR      generate the corpora under DIR/main and DIR/embedded (default: a temporary directory)
  --keep         keep the corpora after the run
  --log-level L  the daemons' log level on stderr: debug, info, warn, error (default error)
  --repo DIR     a real repository instead: copy DIR (goroot: $(go env GOROOT)/src)
                 to a temporary workspace, run cue init and cue up on it as child
                 processes, and measure files/s to keyword-searchable and to fully
                 embedded, peak RSS, cache size, cue down and restart, and query
                 latencies beside ripgrep
  --limit N      with --repo: copy only N of its files, spread over the tree
  --model M      with --repo: the embedding model (default builtin)
  --embed-files prose|all
                 with --repo: the files embedded ([embed] files; default: the
                 model's, prose for builtin)
  --embed-cores N
                 with --repo: the cores the built-in model embeds on ([embed]
                 cores; default: every core but one)
  --embed-timeout D
                 with --repo: stop waiting for every vector D after the daemon's
                 start and report how far embedding got (default 10m)
  --queries N    with --repo: queries derived from the repository (default 10)
  --tasks        agents writing tasks at once: for each --edges and --clients, fresh
                 daemons (cue init, cue up as child processes; a second edge joins
                 the first one's NATS server) and that many MCP clients creating
                 tasks and moving them to active and done for --duration; reports
                 create_task and update_task p50/p99, writes/s and failures, and
                 reads the task log for acknowledged writes lost or duplicated
  --clients LIST with --tasks: concurrent clients per level (default 1,8,64)
  --edges LIST   with --tasks: edges per level, 1 or 2 (default 1,2)
  --second-edge daemon|mcp-edge
                 with --tasks: a second edge is another daemon (default), or the
                 mcp-edge binary beside cue-engine (make build), as a team runs edges
  --duration D   with --tasks: how long each level writes (default 30s)
  --savings      only the token-savings report: a task touching 5 files of a
                 500-file Go repository, whole and as scenes (default seed 2)
`

func cmdBench(args []string) error {
	fs := flag.NewFlagSet("cue bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	size := fs.String("size", "", "")
	files := fs.Int("files", 0, "") // any count, for tests; not advertised
	seed := fs.String("seed", "1", "")
	jsonOut := fs.String("json", "", "")
	out := fs.String("out", "", "")
	keep := fs.Bool("keep", false, "")
	logLevel := fs.String("log-level", "error", "")
	debounce := fs.Duration("debounce", 0, "") // the daemons' ingest debounce, for tests; not advertised
	savings := fs.Bool("savings", false, "")
	repo := fs.String("repo", "", "")
	limit := fs.Int("limit", 0, "")
	model := fs.String("model", "builtin", "")
	embedFiles := fs.String("embed-files", "", "")
	embedCores := fs.Int("embed-cores", 0, "")
	embedTimeout := fs.Duration("embed-timeout", 10*time.Minute, "")
	queries := fs.Int("queries", 10, "")
	samples := fs.Int("samples", 0, "")                 // samples per figure, for tests; not advertised
	indexTimeout := fs.Duration("index-timeout", 0, "") // for tests; not advertised
	tasks := fs.Bool("tasks", false, "")
	clients := fs.String("clients", "1,8,64", "")
	edges := fs.String("edges", "1,2", "")
	secondEdge := fs.String("second-edge", bench.SecondEdgeDaemon, "")
	duration := fs.Duration("duration", 30*time.Second, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(benchUsage)
			return nil
		}
		return fmt.Errorf("bench: %w\n%s", err, benchUsage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected argument %q\n%s", fs.Arg(0), benchUsage)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *tasks {
		for _, other := range []string{"size", "files", "savings", "debounce", "repo", "limit", "model", "embed-files", "embed-cores", "embed-timeout", "queries", "seed"} {
			if set[other] {
				return fmt.Errorf("bench: --tasks measures task writes on daemons of their own; --%s is for another bench", other)
			}
		}
		o := bench.TasksOptions{Duration: *duration, Keep: *keep, SecondEdge: *secondEdge}
		var err error
		if o.Clients, err = intList("clients", *clients); err != nil {
			return err
		}
		if o.Edges, err = intList("edges", *edges); err != nil {
			return err
		}
		if set["log-level"] {
			o.LogLevel = *logLevel
		}
		return benchTasks(o, *out, *jsonOut)
	}
	for _, tasksOnly := range []string{"clients", "edges", "second-edge", "duration"} {
		if set[tasksOnly] {
			return fmt.Errorf("bench: --%s goes with --tasks", tasksOnly)
		}
	}
	if *repo != "" {
		for _, other := range []string{"size", "files", "savings", "debounce"} {
			if set[other] {
				return fmt.Errorf("bench: --repo measures a repository; --%s is for the generated corpus: give one or the other", other)
			}
		}
		return benchRepo(bench.RepoOptions{Repo: *repo, Model: *model, EmbedFiles: *embedFiles, EmbedCores: *embedCores, Limit: *limit, Queries: *queries, QuerySamples: *samples,
			EmbedTimeout: *embedTimeout, IndexTimeout: *indexTimeout, Keep: *keep, LogLevel: *logLevel}, *seed, *out, *jsonOut, set["log-level"])
	}
	for _, repoOnly := range []string{"limit", "model", "embed-files", "embed-cores", "embed-timeout", "queries"} {
		if set[repoOnly] {
			return fmt.Errorf("bench: --%s goes with --repo DIR", repoOnly)
		}
	}
	if *savings {
		return benchSavings(*seed, set["seed"], *jsonOut)
	}
	o := bench.Options{Size: *size, Keep: *keep, Debounce: *debounce}
	switch {
	case *files != 0 && *size != "":
		return errors.New("bench: give --size or --files, not both")
	case *files != 0:
		o.Files = *files
	case *size == "":
		return fmt.Errorf("bench: choose a corpus size with --size (%s)", sizeNames())
	default:
		n, ok := bench.Sizes[*size]
		if !ok {
			return fmt.Errorf("bench: --size %q: use one of %s", *size, sizeNames())
		}
		o.Files = n
	}
	if o.Files < 50 {
		return fmt.Errorf("bench: --files %d: the corpus needs at least 50 files", o.Files)
	}
	if *debounce < 0 {
		return fmt.Errorf("bench: --debounce %v: give a positive duration", *debounce)
	}
	s, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		return fmt.Errorf("bench: --seed %q: give a non-negative integer", *seed)
	}
	o.Seed = s
	if *out != "" {
		if o.Dir, err = filepath.Abs(*out); err != nil {
			return err
		}
	}
	log, err := role.NewLogger(*logLevel, false)
	if err != nil {
		return fmt.Errorf("bench: --log-level: %w", err)
	}
	o.Logger = log.With("component", "bench")
	o.Front, o.FrontMissing = findFront()
	if rg, err := exec.LookPath("rg"); err == nil {
		o.Ripgrep = rg
	} else {
		o.RipgrepMissing = "ripgrep not found: apt-get install ripgrep"
	}
	return runBench(*jsonOut, func(ctx context.Context, p *bench.Progress) (*bench.Report, error) {
		o.Progress = p
		return bench.Run(ctx, o)
	})
}

// benchRepo runs `cue bench --repo`: the product's own binary on a copy
// of a real repository.
func benchRepo(o bench.RepoOptions, seed, out, jsonOut string, logLevelSet bool) error {
	s, err := strconv.ParseUint(seed, 10, 64)
	if err != nil {
		return fmt.Errorf("bench: --seed %q: give a non-negative integer", seed)
	}
	o.Seed = s
	if o.Limit < 0 {
		return fmt.Errorf("bench: --limit %d: give a number of files, or 0 for all", o.Limit)
	}
	if o.Queries < 1 {
		return fmt.Errorf("bench: --queries %d: give at least 1", o.Queries)
	}
	if o.EmbedTimeout <= 0 {
		return fmt.Errorf("bench: --embed-timeout %v: give a positive duration, e.g. 10m", o.EmbedTimeout)
	}
	if _, err := provider.ModelID(o.Model); err != nil {
		return fmt.Errorf("bench: --model: %w", err)
	}
	if !logLevelSet {
		o.LogLevel = "warn"
	}
	if _, err := role.NewLogger(o.LogLevel, false); err != nil {
		return fmt.Errorf("bench: --log-level: %w", err)
	}
	if o.Repo, err = bench.ResolveRepo(o.Repo); err != nil {
		return err
	}
	if out != "" {
		if o.Dir, err = filepath.Abs(out); err != nil {
			return err
		}
	}
	if o.Engine, err = os.Executable(); err != nil {
		return fmt.Errorf("bench: cannot locate cue-engine to run the daemon: %w", err)
	}
	if rg, err := exec.LookPath("rg"); err == nil {
		o.Ripgrep = rg
	} else {
		o.RipgrepMissing = "ripgrep not found: apt-get install ripgrep"
	}
	return runBench(jsonOut, func(ctx context.Context, p *bench.Progress) (*bench.RepoReport, error) {
		o.Progress = p
		return bench.RunRepo(ctx, o)
	})
}

// benchTasks runs `cue bench --tasks`: the product's own binary as the
// daemons, the bench's process as the agents.
func benchTasks(o bench.TasksOptions, out, jsonOut string) error {
	if _, err := role.NewLogger(o.LogLevel, false); o.LogLevel != "" && err != nil {
		return fmt.Errorf("bench: --log-level: %w", err)
	}
	if out != "" {
		var err error
		if o.Dir, err = filepath.Abs(out); err != nil {
			return err
		}
	}
	var err error
	if o.Engine, err = os.Executable(); err != nil {
		return fmt.Errorf("bench: cannot locate cue-engine to run the daemons: %w", err)
	}
	o.MCPEdge = filepath.Join(filepath.Dir(o.Engine), "mcp-edge")
	return runBench(jsonOut, func(ctx context.Context, p *bench.Progress) (*bench.TasksReport, error) {
		o.Progress = p
		return bench.RunTasks(ctx, o)
	})
}

// runBench runs a bench, its progress on stderr, until it ends or is
// interrupted, and writes its report where reportOutput says. The
// report's file is created first, so a path that cannot be written fails
// before minutes of measuring.
func runBench[R interface{ WriteTable(io.Writer) error }](jsonOut string, run func(context.Context, *bench.Progress) (R, error)) error {
	w, err := openReportOutput(jsonOut)
	if err != nil {
		return err
	}
	defer w.close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, bench.NewProgress(os.Stderr, isTerminal(os.Stderr)))
	if err != nil && ctx.Err() != nil {
		return errors.New("bench: interrupted")
	}
	if err != nil {
		return err
	}
	return w.write(rep.WriteTable, rep)
}

// intList parses flag name's comma-separated counts.
func intList(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bench: --%s %q: give counts of at least 1, separated by commas (e.g. 1,8,64)", name, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// reportOutput is where a report goes: the table to stdout, or to stderr
// when the JSON goes to stdout (--json -); the JSON to its file.
type reportOutput struct {
	jsonOut  string
	jsonFile *os.File
	table    io.Writer
}

// openReportOutput creates the --json file before minutes of measuring,
// so a path that cannot be written fails at once.
func openReportOutput(jsonOut string) (*reportOutput, error) {
	o := &reportOutput{jsonOut: jsonOut, table: os.Stdout}
	switch jsonOut {
	case "":
	case "-":
		o.table = os.Stderr
	default:
		f, err := os.Create(jsonOut)
		if err != nil {
			return nil, fmt.Errorf("bench: --json: %w", err)
		}
		o.jsonFile = f
	}
	return o, nil
}

func (o *reportOutput) write(table func(io.Writer) error, rep any) error {
	if err := table(o.table); err != nil {
		return err
	}
	if o.jsonOut == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if o.jsonFile == nil {
		_, err = os.Stdout.Write(b)
		return err
	}
	if _, err := o.jsonFile.Write(b); err != nil {
		return err
	}
	return o.jsonFile.Close()
}

func (o *reportOutput) close() {
	if o.jsonFile != nil {
		o.jsonFile.Close()
	}
}

// benchSavings runs the token-savings scenario in a temporary directory
// and prints its table, and its JSON when asked.
func benchSavings(seedFlag string, seedSet bool, jsonOut string) error {
	seed := uint64(bench.SavingsSeed)
	if seedSet {
		s, err := strconv.ParseUint(seedFlag, 10, 64)
		if err != nil {
			return fmt.Errorf("bench: --seed %q: give a non-negative integer", seedFlag)
		}
		seed = s
	}
	dir, err := os.MkdirTemp("", "cue-savings-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rep, err := bench.RunSavings(dir, seed, 0)
	if err != nil {
		return err
	}
	table := io.Writer(os.Stdout)
	if jsonOut == "-" {
		table = os.Stderr
	}
	if err := rep.WriteTable(table); err != nil {
		return err
	}
	if jsonOut == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if jsonOut == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(jsonOut, b, 0o644)
}

func sizeNames() string {
	names := make([]string, 0, len(bench.Sizes))
	for n := range bench.Sizes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return bench.Sizes[names[i]] < bench.Sizes[names[j]] })
	return strings.Join(names, ", ")
}

// findFront is the `cue` front binary that runs hooks: the one that
// started this engine, else one next to it. When there is none, the
// reason is returned instead.
func findFront() (path, missing string) {
	if p := os.Getenv(hook.FrontEnv); p != "" && isExecutable(p) {
		return p, ""
	}
	self, err := os.Executable()
	if err != nil {
		return "", "cannot locate cue-engine: " + err.Error()
	}
	p := filepath.Join(filepath.Dir(self), "cue")
	if isExecutable(p) {
		return p, ""
	}
	return "", "the cue front binary was not found next to cue-engine (" + p + "); build both with `make build`"
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode().Perm()&0o111 != 0
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
