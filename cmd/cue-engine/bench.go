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

	"github.com/cuedeck/cuedeck/internal/bench"
	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/role"
)

const benchUsage = `usage: cue bench --size 1k|10k|50k [--seed N] [--json FILE|-] [--out DIR] [--keep] [--log-level L]
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
	if *savings {
		seedSet := false
		fs.Visit(func(f *flag.Flag) { seedSet = seedSet || f.Name == "seed" })
		return benchSavings(*seed, seedSet, *jsonOut)
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
	// Where the JSON goes is checked before minutes of measuring.
	var jsonFile *os.File
	table := io.Writer(os.Stdout)
	switch *jsonOut {
	case "":
	case "-":
		table = os.Stderr
	default:
		if jsonFile, err = os.Create(*jsonOut); err != nil {
			return fmt.Errorf("bench: --json: %w", err)
		}
		defer jsonFile.Close()
	}
	o.Progress = bench.NewProgress(os.Stderr, isTerminal(os.Stderr))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, o)
	if err != nil && ctx.Err() != nil {
		return errors.New("bench: interrupted")
	}
	if err != nil {
		return err
	}
	if err := rep.WriteTable(table); err != nil {
		return err
	}
	if *jsonOut == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if jsonFile == nil {
		_, err = os.Stdout.Write(b)
		return err
	}
	if _, err := jsonFile.Write(b); err != nil {
		return err
	}
	return jsonFile.Close()
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
