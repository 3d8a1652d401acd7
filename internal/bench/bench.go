// Package bench is `cue bench`: it generates a corpus of markdown, code
// and task cards deterministic from a seed, runs the laptop daemon
// (internal/daemon) on it in-process, and measures what agents feel
// through the NATS query service `cue mcp` uses: ingest to searchable,
// read_context per mode, read_doc, the task tools, scene assembly, the
// hook's round trip, freshness, embedding and rule-path extraction
// throughput, and ripgrep on the same queries for comparison. Latencies
// follow seed 003 §11: 3 warm-up calls discarded, then at least 30
// samples (100 where affordable) on the monotonic clock, summarised by
// pkg/core/stats. cmd/cue-engine's bench command runs it; docs/bench.md
// documents the report.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/extractor"
	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/localnode"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Sizes are the corpus sizes `cue bench --size` accepts.
var Sizes = map[string]int{"1k": 1_000, "10k": 10_000, "50k": 50_000}

// minFiles is the smallest corpus: enough cards and docs to sample.
const minFiles = 50

// Warmup is the calls discarded before each latency figure (seed 003 §11).
const Warmup = 3

// Options configure Run. Files is required; the rest have defaults.
type Options struct {
	// Size names the corpus size in the report ("1k"); Files is its file
	// count.
	Size  string
	Files int
	Seed  uint64
	// Dir holds the corpus workspaces; a new temporary directory when
	// empty. Keep leaves them in place after the run.
	Dir  string
	Keep bool
	// Samples per latency figure (default 100) and per keyword query
	// (default 30); never below 30.
	Samples, QuerySamples int
	// FreshnessSamples is the save-to-visible samples (default 30).
	FreshnessSamples int
	// EmbeddedFiles is the size of the corpus the semantic modes run on
	// (default Files/10, at least 50 and at most 300); EmbedChunks the chunks embedded directly
	// (default 64); ExtractBatches the transcript batches (default 200).
	EmbeddedFiles, EmbedChunks, ExtractBatches int
	// Front is the `cue` front binary for the hook round trip; empty
	// skips that figure with FrontMissing as the reason.
	Front        string
	FrontMissing string
	// Ripgrep is the rg binary; empty skips the comparison with
	// RipgrepMissing as the reason.
	Ripgrep        string
	RipgrepMissing string
	// Debounce overrides the daemons' ingest debounce (the config's
	// default when zero); tests shorten it.
	Debounce time.Duration
	// Progress shows the phases; nil is silent.
	Progress *Progress
	// Logger receives the daemons' logs; nil discards them.
	Logger *slog.Logger
}

func (o *Options) setDefaults() error {
	if o.Files < minFiles {
		return fmt.Errorf("bench: %d files: the corpus needs at least %d", o.Files, minFiles)
	}
	if o.Size == "" {
		o.Size = fmt.Sprint(o.Files)
	}
	if o.Samples == 0 {
		o.Samples = 100
	}
	if o.QuerySamples == 0 {
		o.QuerySamples = 30
	}
	if o.FreshnessSamples == 0 {
		o.FreshnessSamples = 30
	}
	if o.Samples < 30 || o.QuerySamples < 30 || o.FreshnessSamples < 30 {
		return errors.New("bench: seed 003 §11 wants at least 30 samples per figure")
	}
	if o.EmbeddedFiles == 0 {
		o.EmbeddedFiles = min(max(o.Files/10, minFiles), 300)
	}
	o.EmbeddedFiles = max(o.EmbeddedFiles, minFiles)
	if o.EmbedChunks == 0 {
		o.EmbedChunks = 64
	}
	if o.ExtractBatches == 0 {
		o.ExtractBatches = 200
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// readContextLimit is the limit of every read_context call.
const readContextLimit = 10

// Run generates the corpus, measures, and returns the report. It stops
// early when ctx is cancelled.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	began := time.Now()
	r := &Report{
		Version: version.Version, StartedAt: began.UTC(), Latency: map[string]*Latency{},
		Machine: Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadStart: loadAverage()},
		Settings: Settings{Size: o.Size, Files: o.Files, Seed: o.Seed, Transport: "nats-query", Warmup: Warmup,
			Samples: o.Samples, QuerySamples: o.QuerySamples, Limit: readContextLimit, EmbedModel: "none", RateLimits: "off"},
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "cue-bench-")
		if err != nil {
			return nil, err
		}
		dir = d
		if !o.Keep {
			defer os.RemoveAll(dir)
		}
	}
	mainRoot, embRoot := filepath.Join(dir, "main"), filepath.Join(dir, "embedded")
	for _, d := range []string{mainRoot, embRoot} {
		if err := ensureEmpty(d); err != nil {
			return nil, err
		}
		if !o.Keep {
			defer os.RemoveAll(d)
		}
	}
	o.Progress.Start("generate corpus", 0)
	c, err := Generate(mainRoot, o.Files, o.Seed)
	if err != nil {
		return nil, err
	}
	o.Progress.Set(len(c.Files))
	r.Corpus = CorpusInfo{Files: len(c.Files), Bytes: c.Bytes, Cards: len(c.Cards), Queries: c.Queries, ByKind: map[string]int{}}
	if o.Keep {
		r.Corpus.Root = mainRoot
	}
	for _, f := range c.Files {
		r.Corpus.ByKind[f.Kind]++
	}

	if err := measureMain(ctx, &o, c, r); err != nil {
		return nil, err
	}
	if err := measureEmbedding(ctx, &o, c, r); err != nil {
		return nil, err
	}
	if err := measureEmbedded(ctx, &o, embRoot, r); err != nil {
		return nil, err
	}
	o.Progress.Finish()
	r.Machine.LoadEnd = loadAverage()
	r.WallSecond = Seconds(time.Since(began).Seconds())
	return r, nil
}

func ensureEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("bench: %s is not empty: give --out a directory without main/ and embedded/ in it, or a new one", dir)
	}
	return nil
}

// node is a daemon running in-process and a client of its query service.
type node struct{ *localnode.Node }

// startDaemon runs the daemon on root as `cue up` would, with the given
// embedding model (localnode.Start).
func startDaemon(ctx context.Context, root, model string, debounce time.Duration, log *slog.Logger) (node, error) {
	n, err := localnode.Start(ctx, root, localnode.Options{Model: model, Debounce: debounce, Logger: log})
	if err != nil {
		return node{}, fmt.Errorf("bench: %w", err)
	}
	return node{n}, nil
}

func (n node) call(ctx context.Context, tool string, args any, out any) error {
	return n.Call(ctx, tool, args, out)
}

func (n node) readContext(ctx context.Context, q, mode string) ([]tools.ContextHit, error) {
	return n.ReadContext(ctx, q, mode, readContextLimit)
}

// finds reports whether a keyword search for f's marker finds f.
func (n node) finds(ctx context.Context, f File) (bool, error) {
	if f.Kind == KindMarkdown && !strings.HasPrefix(f.Path, ".") {
		return n.HasDoc(ctx, f.Path)
	}
	return n.findsMarker(ctx, f.Path, f.Marker)
}

// findsMarker reports whether a keyword search for marker finds path.
func (n node) findsMarker(ctx context.Context, path, marker string) (bool, error) {
	hits, err := n.readContext(ctx, marker, tools.ModeKeyword)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(hits, func(h tools.ContextHit) bool { return h.Path == path }), nil
}

// sample measures op: Warmup calls discarded, then n timed ones. Each
// sample is recorded in also too, when it is not nil.
func sample(ctx context.Context, p *Progress, phase string, n int, also *stats.LatencySummary, op func(i int) error) (*stats.LatencySummary, error) {
	p.Start(phase, n)
	var s stats.LatencySummary
	for i := range Warmup + n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		if err := op(i); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("bench: interrupted during %s: %w", phase, ctx.Err())
			}
			return nil, fmt.Errorf("bench: %s: %w", phase, err)
		}
		if i >= Warmup {
			d := time.Since(start)
			s.RecordDuration(d)
			if also != nil {
				also.RecordDuration(d)
			}
			p.Add()
		}
	}
	return &s, nil
}

// measureMain runs the daemon without embeddings on the main corpus.
func measureMain(ctx context.Context, o *Options, c *Corpus, r *Report) error {
	o.Progress.Start("start daemon", 0)
	start := time.Now()
	n, err := startDaemon(ctx, c.Root, "none", o.Debounce, o.Logger.With("daemon", "main"))
	if err != nil {
		return err
	}
	defer n.Stop()
	r.Settings.DebounceMs = Ms(float64(n.Debounce) / float64(time.Millisecond))

	if r.Ingest, err = waitIngest(ctx, o.Progress, n, c, start); err != nil {
		return err
	}
	if err := measureQueries(ctx, o, n, c, r); err != nil {
		return err
	}
	if err := measureTools(ctx, o, n, c, r); err != nil {
		return err
	}
	if err := measureHook(ctx, o, n, c, r); err != nil {
		return err
	}
	if err := measureFreshness(ctx, o, n, c, r); err != nil {
		return err
	}
	if err := measureExtraction(ctx, o, n, r); err != nil {
		return err
	}
	o.Progress.Start("stop daemon", 0)
	return n.Stop()
}

// waitIngest waits until every file of c is found through the tools:
// markdown by read_doc, code and cards by a keyword search for their
// marker. Files are checked in path order (the order ingest walks) and a
// check that fails is retried after a pause, so that the checks mostly
// overlap the ingest they wait for.
func waitIngest(ctx context.Context, p *Progress, n node, c *Corpus, start time.Time) (*Ingest, error) {
	files := slices.Clone(c.Files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	files = slices.DeleteFunc(files, func(f File) bool { return f.Marker == "" }) // rules.md
	p.Start("ingest to searchable", len(files))
	docs, err := n.Conn.JS.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		return nil, err
	}
	var stored time.Duration
	deadline := start.Add(30 * time.Minute)
	for i := 0; i < len(files); {
		if stored == 0 {
			if info, err := docs.Info(ctx); err == nil && info.State.Msgs >= uint64(len(c.Files)) {
				stored = time.Since(start)
			}
		}
		ok, err := n.finds(ctx, files[i])
		if err != nil {
			return nil, err
		}
		if ok {
			i++
			p.Set(i)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("bench: %s not searchable 30 minutes after the daemon started (%d of %d files were)", files[i].Path, i, len(files))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	took := time.Since(start)
	if stored == 0 {
		stored = took
	}
	return &Ingest{Files: len(c.Files), StoredSeconds: Seconds(stored.Seconds()), Seconds: Seconds(took.Seconds()), FilesPerSec: Rate(float64(len(c.Files)) / took.Seconds())}, nil
}

// measureQueries measures read_context keyword per query and, when rg is
// there, ripgrep on the same queries and corpus.
func measureQueries(ctx context.Context, o *Options, n node, c *Corpus, r *Report) error {
	var all stats.LatencySummary
	var rg *Ripgrep
	if o.Ripgrep != "" {
		out, err := exec.CommandContext(ctx, o.Ripgrep, "--version").Output()
		if err != nil {
			return fmt.Errorf("bench: %s --version: %w", o.Ripgrep, err)
		}
		rg = &Ripgrep{Path: o.Ripgrep, Version: strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])}
	} else {
		r.Skipped = append(r.Skipped, Skip{Figure: "ripgrep", Reason: o.RipgrepMissing})
	}
	for qi, q := range c.Queries {
		var hits int
		s, err := sample(ctx, o.Progress, fmt.Sprintf("read_context keyword %d/%d", qi+1, len(c.Queries)), o.QuerySamples, &all, func(int) error {
			h, err := n.readContext(ctx, q, tools.ModeKeyword)
			hits = len(h)
			return err
		})
		if err != nil {
			return err
		}
		if rg == nil {
			continue
		}
		var files int
		rs, err := sample(ctx, o.Progress, fmt.Sprintf("ripgrep %d/%d", qi+1, len(c.Queries)), o.QuerySamples, nil, func(int) error {
			var out bytes.Buffer
			cmd := exec.CommandContext(ctx, o.Ripgrep, "-l", "-i", "-F", q, c.Root)
			cmd.Stdout = &out
			err := cmd.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 1 {
				err = nil // no match
			}
			files = bytes.Count(out.Bytes(), []byte("\n"))
			return err
		})
		if err != nil {
			return err
		}
		qr := QueryRatio{Query: q, Samples: o.QuerySamples, RgP50: Ms(rs.Percentile(50)), ReadContextP50: Ms(s.Percentile(50)), RgFiles: files, Hits: hits}
		if qr.ReadContextP50 > 0 {
			qr.Ratio = Ratio(float64(qr.RgP50) / float64(qr.ReadContextP50))
		}
		rg.Queries = append(rg.Queries, qr)
	}
	r.Latency["read_context_keyword"] = latencyOf(&all, "main", fmt.Sprintf("%d queries × %d samples", len(c.Queries), o.QuerySamples))
	if rg != nil {
		ratios := make([]float64, len(rg.Queries))
		for i, q := range rg.Queries {
			ratios[i] = float64(q.Ratio)
		}
		var rs stats.LatencySummary
		for _, v := range ratios {
			rs.Record(v)
		}
		rg.MedianRatio = Ratio(rs.Percentile(50))
		r.Ripgrep = rg
	}
	return nil
}

// measureTools measures read_doc, list_tasks, get_scene and update_task.
func measureTools(ctx context.Context, o *Options, n node, c *Corpus, r *Report) error {
	var docs []File
	for _, f := range c.Files {
		if f.Kind == KindMarkdown && f.Heading != "" {
			docs = append(docs, f)
		}
	}
	if len(docs) == 0 {
		return errors.New("bench: the corpus has no markdown docs")
	}
	rnd := rand.New(rand.NewPCG(o.Seed, 7))
	pickDoc := func() File { return docs[rnd.IntN(len(docs))] }
	s, err := sample(ctx, o.Progress, "read_doc", o.Samples, nil, func(int) error {
		var res tools.ReadDocResult
		return n.call(ctx, tools.ReadDoc, tools.ReadDocArgs{Path: pickDoc().Path}, &res)
	})
	if err != nil {
		return err
	}
	r.Latency["read_doc"] = latencyOf(s, "main", "whole document")
	s, err = sample(ctx, o.Progress, "read_doc with anchor", o.Samples, nil, func(int) error {
		d := pickDoc()
		var res tools.ReadDocResult
		if err := n.call(ctx, tools.ReadDoc, tools.ReadDocArgs{Path: d.Path, Anchor: d.Heading}, &res); err != nil {
			return err
		}
		if res.LineRange == nil {
			return fmt.Errorf("read_doc %s#%s gave no line range", d.Path, d.Heading)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.Latency["read_doc_anchor"] = latencyOf(s, "main", "section under a ## heading")

	var tasks []tools.TaskSummary
	// A card is searchable as a file before its task reaches the board
	// (through the task log): wait for the board, not just the files.
	for deadline := time.Now().Add(time.Minute); ; {
		if err := n.call(ctx, tools.ListTasks, map[string]any{"limit": 1000}, &tasks); err != nil {
			return err
		}
		if len(tasks) >= len(c.Cards) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	s, err = sample(ctx, o.Progress, "list_tasks", o.Samples, nil, func(int) error {
		return n.call(ctx, tools.ListTasks, map[string]any{}, &tasks)
	})
	if err != nil {
		return err
	}
	if len(tasks) != len(c.Cards) {
		return fmt.Errorf("bench: list_tasks lists %d tasks, the corpus has %d cards", len(tasks), len(c.Cards))
	}
	r.Latency["list_tasks"] = latencyOf(s, "main", fmt.Sprintf("all %d tasks, no filter", len(tasks)))

	s, err = sample(ctx, o.Progress, "get_scene", o.Samples, nil, func(int) error {
		var res tools.GetSceneResult
		if err := n.call(ctx, tools.GetScene, map[string]any{}, &res); err != nil {
			return err
		}
		if res.CardID != c.Active {
			return fmt.Errorf("get_scene packed card %q, want the active %q", res.CardID, c.Active)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.Latency["get_scene"] = latencyOf(s, "main", "active card, default budget")

	others := slices.DeleteFunc(slices.Clone(c.Cards), func(id string) bool { return id == c.Active })
	priorities := []string{"low", "medium", "high", "critical"}
	s, err = sample(ctx, o.Progress, "update_task", o.Samples, nil, func(i int) error {
		args := map[string]any{"id": others[i%len(others)], "updates": map[string]any{"priority": priorities[i%len(priorities)]}}
		return n.call(ctx, tools.UpdateTask, args, nil)
	})
	if err != nil {
		return err
	}
	r.Latency["update_task"] = latencyOf(s, "main", "priority change; the card file is rewritten after the call returns")
	return nil
}

// measureHook runs the front's `cue hook UserPromptSubmit`, whole process,
// with the daemon listening on the workspace's socket.
func measureHook(ctx context.Context, o *Options, n node, c *Corpus, r *Report) error {
	if o.Front == "" {
		r.Skipped = append(r.Skipped, Skip{Figure: "hook_round_trip", Reason: o.FrontMissing})
		return nil
	}
	o.Progress.Start("hook: wait for the socket", 0)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, cerr := hook.ReadCache(c.Root)
		_, serr := os.Stat(hook.SocketPath(c.Root))
		if cerr == nil && serr == nil {
			break
		}
		if time.Now().After(deadline) {
			r.Skipped = append(r.Skipped, Skip{Figure: "hook_round_trip", Reason: fmt.Sprintf("the daemon wrote no hook cache or socket within 30s (cache: %v; socket: %v)", cerr, serr)})
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	payload, err := json.Marshal(hook.Payload{SessionID: "cue-bench", Cwd: c.Root, HookEventName: hook.UserPromptSubmit, Prompt: "Where is the retry policy of the billing worker?"})
	if err != nil {
		return err
	}
	s, err := sample(ctx, o.Progress, "hook round trip", o.Samples, nil, func(int) error {
		cmd := exec.CommandContext(ctx, o.Front, "hook", hook.UserPromptSubmit)
		cmd.Stdin = bytes.NewReader(payload)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s hook: %w: %s", o.Front, err, stderr.String())
		}
		if stderr.Len() > 0 {
			return fmt.Errorf("%s hook: %s", o.Front, stderr.String())
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.Latency["hook_round_trip"] = latencyOf(s, "main", "whole `cue hook UserPromptSubmit` process; signals the daemon's socket")
	return nil
}

// measureFreshness writes a new file and times until read_context finds
// it.
func measureFreshness(ctx context.Context, o *Options, n node, c *Corpus, r *Report) error {
	s, err := sample(ctx, o.Progress, "freshness", o.FreshnessSamples, nil, func(i int) error {
		word := marker(o.Seed, 1_000_000+i) + "fresh"
		rel := fmt.Sprintf("docs/fresh/note-%d.md", i)
		start := time.Now()
		if err := writeFile(c.Root, rel, "# Fresh note\n\nJust saved: "+word+".\n"); err != nil {
			return err
		}
		for {
			ok, err := n.findsMarker(ctx, rel, word)
			if err != nil || ok {
				return err
			}
			if time.Since(start) > time.Minute {
				return fmt.Errorf("%s not found a minute after it was saved", rel)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	if err != nil {
		return err
	}
	r.Latency["freshness"] = latencyOf(s, "main", fmt.Sprintf("file written → read_context keyword finds it; ingest debounce %v", time.Duration(float64(r.Settings.DebounceMs)*float64(time.Millisecond))))
	return nil
}

// measureExtraction publishes transcript batches where the tailer would
// and waits for their extraction records: the daemon's extractor with no
// LLM, so every batch takes the rule path.
func measureExtraction(ctx context.Context, o *Options, n node, r *Report) error {
	repo := n.Info.Repo
	batches := make([]events.TranscriptBatch, o.ExtractBatches)
	for i := range batches {
		lines := []string{
			fmt.Sprintf(`{"role":"user","content":"Task %d: the %s tests fail again, fix the retry logic please."}`, i, topics[i%len(topics)]),
			fmt.Sprintf(`{"role":"assistant","content":"I decided to use a bounded queue in internal/%s/queue.go because the producer outpaces the consumer (%d)."}`, topics[i%len(topics)], i),
			`{"role":"assistant","content":"Let me read the file and check how the worker pool is wired before changing anything."}`,
		}
		b := events.TranscriptBatch{Repo: repo, Session: fmt.Sprintf("bench-%02d", i%20), Source: "/bench/transcript.jsonl",
			Format: events.TranscriptChatJSONL, StartOffset: int64(i/20) * 10_000}
		off := b.StartOffset
		for _, l := range lines {
			b.Lines = append(b.Lines, json.RawMessage(l))
			b.Offsets = append(b.Offsets, off)
			off += int64(len(l)) + 1
		}
		b.EndOffset = off
		batches[i] = b
	}
	kv, err := n.Conn.JS.KeyValue(ctx, events.ExtractionsBucket)
	if err != nil {
		return err
	}
	o.Progress.Start("extraction (rule path)", len(batches))
	start := time.Now()
	for _, b := range batches {
		id := events.TranscriptBatchMsgID(b.Repo, b.StreamKey(), b.StartOffset)
		if _, err := bus.PublishEvent(ctx, n.Conn.JS, events.TranscriptSubject(repo), id, b); err != nil {
			return fmt.Errorf("bench: publish a transcript batch: %w", err)
		}
	}
	for i := 0; i < len(batches); {
		_, err := kv.Get(ctx, extractor.ExtractionKeyOf(batches[i]))
		if err == nil {
			i++
			o.Progress.Set(i)
			continue
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("bench: %d of %d transcript batches extracted after 5 minutes (%v)", i, len(batches), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	took := time.Since(start)
	r.Extraction = &Extraction{Path: "rules", Batches: len(batches), Seconds: Seconds(took.Seconds()), BatchesPer: Rate(float64(len(batches)) / took.Seconds())}
	return nil
}

// measureEmbedding embeds sections of the corpus's docs with the built-in
// model directly, in batches as the embed worker sends them.
func measureEmbedding(ctx context.Context, o *Options, c *Corpus, r *Report) error {
	var chunks []string
	for _, f := range c.Files {
		if f.Kind != KindMarkdown || len(chunks) >= o.EmbedChunks {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.Root, filepath.FromSlash(f.Path)))
		if err != nil {
			return err
		}
		for _, sec := range strings.Split(string(b), "\n## ") {
			if len(chunks) < o.EmbedChunks && strings.TrimSpace(sec) != "" {
				chunks = append(chunks, sec)
			}
		}
	}
	const batch = 16
	e := builtin.New()
	o.Progress.Start("embedding (built-in model)", len(chunks))
	// The first call loads the weights: not part of the throughput.
	if _, err := e.Embed(ctx, chunks[:1]); err != nil {
		return fmt.Errorf("bench: built-in model: %w", err)
	}
	start := time.Now()
	for i := 0; i < len(chunks); i += batch {
		vecs, err := e.Embed(ctx, chunks[i:min(i+batch, len(chunks))])
		if err != nil {
			return fmt.Errorf("bench: built-in model: %w", err)
		}
		if len(vecs) != min(batch, len(chunks)-i) {
			return fmt.Errorf("bench: built-in model returned %d vectors for %d texts", len(vecs), min(batch, len(chunks)-i))
		}
		o.Progress.Set(i + len(vecs))
	}
	took := time.Since(start)
	r.Embedding = &Embedding{Model: e.ModelID(), Chunks: len(chunks), Batch: batch, Seconds: Seconds(took.Seconds()), VectorsPer: Rate(float64(len(chunks)) / took.Seconds())}
	return nil
}

// measureEmbedded runs a daemon with the built-in model on a smaller
// corpus, waits for every document's vectors, and measures read_context
// in each mode there.
func measureEmbedded(ctx context.Context, o *Options, root string, r *Report) error {
	o.Progress.Start("generate embedded corpus", 0)
	c, err := Generate(root, o.EmbeddedFiles, o.Seed+1)
	if err != nil {
		return err
	}
	o.Progress.Start("start embedding daemon", 0)
	start := time.Now()
	n, err := startDaemon(ctx, root, "builtin", o.Debounce, o.Logger.With("daemon", "embedded"))
	if err != nil {
		return err
	}
	defer n.Stop()
	o.Progress.Start("embed the embedded corpus", len(c.Files))
	model := builtin.ModelID
	deadline := start.Add(20 * time.Minute)
	for {
		rep, err := status.CollectWith(ctx, n.Conn.JS, status.Options{EmbedModel: model})
		if err != nil {
			return err
		}
		if e := rep.Embeddings; e != nil {
			o.Progress.Set(e.Vectors)
			if e.Docs >= len(c.Files) && e.Vectors >= e.Docs && e.Pending == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: the embedded corpus was not embedded within 20 minutes: %+v", rep.Embeddings)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	took := time.Since(start)
	r.Embedded = &EmbeddedCorpus{Files: len(c.Files), Model: model, Seconds: Seconds(took.Seconds()), FilesPerSec: Rate(float64(len(c.Files)) / took.Seconds())}
	// The edge applies vectors after the status counts them: wait until
	// a semantic query answers from vectors.
	o.Progress.Start("wait for semantic search", 0)
	for {
		hits, err := n.readContext(ctx, c.Queries[0], tools.ModeSemantic)
		if err != nil {
			return err
		}
		if len(hits) > 0 && hits[0].Fallback == "" {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("bench: semantic search still falls back to keywords on the embedded corpus")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, mode := range []string{tools.ModeKeyword, tools.ModeSemantic, tools.ModeHybrid, tools.ModeRRF} {
		fellBack := ""
		s, err := sample(ctx, o.Progress, "read_context "+mode+" (embedded)", o.Samples, nil, func(i int) error {
			hits, err := n.readContext(ctx, c.Queries[i%len(c.Queries)], mode)
			for _, h := range hits {
				if h.Fallback != "" {
					fellBack = h.Fallback
				}
			}
			return err
		})
		if err != nil {
			return err
		}
		if fellBack != "" {
			return fmt.Errorf("bench: read_context %s fell back on the embedded corpus: %s", mode, fellBack)
		}
		name := "read_context_" + mode
		if mode == tools.ModeKeyword {
			name = "read_context_keyword_embedded"
		}
		r.Latency[name] = latencyOf(s, "embedded", fmt.Sprintf("%d files with %s vectors; queries embedded per call", len(c.Files), model))
	}
	o.Progress.Start("stop embedding daemon", 0)
	return n.Stop()
}

// loadAverage is the one-minute load average from /proc/loadavg, or -1
// where there is none: figures taken on a busy machine say so.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var l float64
	if _, err := fmt.Sscan(string(b), &l); err != nil {
		return -1
	}
	return l
}
