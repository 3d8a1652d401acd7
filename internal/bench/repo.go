package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// RepoOptions configure RunRepo. Repo and Engine are required.
type RepoOptions struct {
	// Repo is the repository to copy and index: a directory, or
	// GOROOTRepo for the Go standard library's sources.
	Repo string
	// Engine is the cue-engine binary run as the user runs it: `init`,
	// `up`, `down` and `up --detach`, each a child process.
	Engine string
	// Model is the embedding model spec of the workspace's config: none,
	// builtin (the default) or ollama:<model>.
	Model string
	// EmbedFiles is [embed] files: "prose", "all", or "" for the model's
	// default (embedworker.ProseOnlyByDefault).
	EmbedFiles string
	// EmbedCores is [embed] cores: how many cores the built-in model
	// embeds on; 0 for the default.
	EmbedCores int
	// Limit copies at most this many of the repository's indexable files,
	// spread over its tree; 0 copies them all.
	Limit int
	// Queries is how many queries are derived from the repository
	// (default 10); QuerySamples the timed calls per query and mode
	// (default 30, never below).
	Queries, QuerySamples int
	Seed                  uint64
	// IndexTimeout caps the wait until every file is keyword-searchable
	// (default 30 minutes: a failure); EmbedTimeout the wait until every
	// document has vectors (default 10 minutes: the report says how far
	// embedding got). Both count from the daemon's start.
	IndexTimeout, EmbedTimeout time.Duration
	// Dir holds the copy (Dir/repo); a new temporary directory when
	// empty. Keep leaves the copy and its cache in place.
	Dir  string
	Keep bool
	// LogLevel is the daemon's (default warn); its log is Dir/up.log and,
	// after the restart, the workspace's .cuedeck/.cache/daemon.log.
	LogLevel string
	// Ripgrep is the rg binary; empty skips the comparison with
	// RipgrepMissing as the reason.
	Ripgrep, RipgrepMissing string
	Progress                *Progress
}

func (o *RepoOptions) setDefaults() error {
	if o.Repo == "" || o.Engine == "" {
		return errors.New("bench: RepoOptions needs Repo and Engine")
	}
	if o.Model == "" {
		o.Model = provider.Builtin
	}
	if o.Limit < 0 {
		return fmt.Errorf("bench: --limit %d: give a positive number of files, or 0 for all", o.Limit)
	}
	if o.EmbedCores < 0 {
		return fmt.Errorf("bench: --embed-cores %d: give a number of cores (or leave it out for every core but one)", o.EmbedCores)
	}
	if o.EmbedFiles != "" && o.EmbedFiles != "prose" && o.EmbedFiles != "all" {
		return fmt.Errorf("bench: --embed-files %q: give prose or all (or leave it out for the model's default)", o.EmbedFiles)
	}
	if o.Queries == 0 {
		o.Queries = 10
	}
	if o.Queries < 1 {
		return fmt.Errorf("bench: --queries %d: give at least 1", o.Queries)
	}
	if o.QuerySamples == 0 {
		o.QuerySamples = 30
	}
	if o.QuerySamples < 30 {
		return errors.New("bench: seed 003 §11 wants at least 30 samples per figure")
	}
	if o.IndexTimeout == 0 {
		o.IndexTimeout = 30 * time.Minute
	}
	if o.EmbedTimeout == 0 {
		o.EmbedTimeout = 10 * time.Minute
	}
	if o.IndexTimeout < 0 || o.EmbedTimeout < 0 {
		return errors.New("bench: timeouts must be positive durations")
	}
	if o.LogLevel == "" {
		o.LogLevel = "warn"
	}
	return nil
}

// RepoReport is what RunRepo measured; docs/bench.md documents every
// field.
type RepoReport struct {
	Version    string       `json:"version"`
	StartedAt  time.Time    `json:"started_at"`
	WallSecond Seconds      `json:"wall_seconds"`
	Machine    Machine      `json:"machine"`
	Settings   RepoSettings `json:"settings"`
	Repo       RepoSource   `json:"repo"`
	Index      *RepoIndex   `json:"index,omitempty"`
	Embed      *RepoEmbed   `json:"embed,omitempty"`
	Memory     RepoMemory   `json:"memory"`
	Disk       *RepoDisk    `json:"disk,omitempty"`
	Lifecycle  RepoCycle    `json:"lifecycle"`
	Queries    []QueryTimes `json:"queries"`
	// Latency holds read_context_keyword, read_context_hybrid and ripgrep
	// over every query's samples.
	Latency map[string]*Latency `json:"latency"`
	Ripgrep *RipgrepTool        `json:"ripgrep,omitempty"`
	Skipped []Skip              `json:"skipped,omitempty"`
}

// RepoSettings are the run's parameters.
type RepoSettings struct {
	// Model is the embedding model spec; ModelID the id its vectors
	// carry ("" for none).
	Model            string  `json:"model"`
	ModelID          string  `json:"model_id,omitempty"`
	Limit            int     `json:"limit"`
	Seed             uint64  `json:"seed"`
	Transport        string  `json:"transport"`
	Warmup           int     `json:"warmup"`
	QuerySamples     int     `json:"query_samples"`
	ReadContextLimit int     `json:"read_context_limit"`
	EmbedTimeout     Seconds `json:"embed_timeout_seconds"`
	RateLimits       string  `json:"rate_limits"`
	// Daemon is the command the daemon ran as.
	Daemon string `json:"daemon"`
}

// RepoSource is the repository and its copy.
type RepoSource struct {
	Source string `json:"source"`
	// Root is the copy, reported when --keep leaves it.
	Root string `json:"root,omitempty"`
	// SourceFiles are the source's files ingest would publish; Files and
	// Bytes what was copied (all of them unless --limit), before `cue
	// init`. Symlinks are left out of the copy.
	SourceFiles int   `json:"source_files"`
	Files       int   `json:"files"`
	Bytes       int64 `json:"bytes"`
	Symlinks    int   `json:"symlinks_left_out,omitempty"`
	GitInit     bool  `json:"git_init"`
}

// RepoIndex is the time from the daemon's start until every file is
// keyword-searchable.
type RepoIndex struct {
	// Files are the records waited for: every file of the initialised
	// copy that ingest's rules publish. Indexed and Skipped (binary, too
	// large) split them, as `cue status` counts them.
	Files   int `json:"files"`
	Indexed int `json:"indexed"`
	Skipped int `json:"skipped"`
	Tokens  int `json:"tokens"`
	// StoredSeconds is until cue_docs held a record of every file;
	// Seconds until the edge had applied every revision up to that one,
	// so that read_context keyword searches them all.
	StoredSeconds Seconds `json:"stored_seconds"`
	Seconds       Seconds `json:"seconds"`
	FilesPerSec   Rate    `json:"files_per_s"`
	// EdgeDocs (every document, skipped ones too) and EdgeSkipped are the
	// edge's own counts then (cue_edge_docs, cue_edge_docs_skipped on
	// /metrics), a cross-check.
	EdgeDocs    int `json:"edge_docs"`
	EdgeSkipped int `json:"edge_skipped"`
	// Unexpected counts records of files the bench's walk did not
	// expect: non-zero means its rules and ingest's differ.
	Unexpected int `json:"unexpected,omitempty"`
}

// RepoEmbed is the time from the daemon's start until every indexed
// document had vectors, or how far it got within the timeout.
type RepoEmbed struct {
	Model    string `json:"model"`
	Docs     int    `json:"docs"`
	Vectors  int    `json:"vectors"`
	Complete bool   `json:"complete"`
	// Seconds is until complete, else until the wait stopped: the
	// timeout, or when keyword-searchable if that was later.
	Seconds     Seconds `json:"seconds"`
	FilesPerSec Rate    `json:"files_per_s"`
	// Cost is what the embed workers recorded embedding cost
	// (events.EmbedCostBucket), read after the daemon stopped; nil when
	// nothing was recorded.
	Cost *events.EmbedCost `json:"cost,omitempty"`
}

// RepoMemory is the daemon's peak resident set (VmHWM) at each stage, in
// bytes, and its CPU time.
type RepoMemory struct {
	PeakRSSSearchable int64 `json:"peak_rss_searchable_bytes,omitempty"`
	PeakRSSEmbedded   int64 `json:"peak_rss_embedded_bytes,omitempty"`
	PeakRSS           int64 `json:"peak_rss_bytes,omitempty"`
	RestartPeakRSS    int64 `json:"restart_peak_rss_bytes,omitempty"`
	// CPUSeconds is the first daemon's user and system time, start to
	// stop.
	CPUSeconds Seconds `json:"cpu_seconds"`
}

// RepoDisk is the workspace cache against the source it indexed.
type RepoDisk struct {
	CacheBytes          int64 `json:"cache_bytes"`
	CacheAllocatedBytes int64 `json:"cache_allocated_bytes"`
	// SourceBytes are the indexed files' sizes; Ratio is
	// CacheAllocatedBytes / SourceBytes.
	SourceBytes int64 `json:"source_bytes"`
	Ratio       Ratio `json:"ratio"`
	// Parts are CacheAllocatedBytes by stream and role state, largest
	// first.
	Parts []DiskPart `json:"parts,omitempty"`
}

// RepoCycle times stopping and restarting with nothing changed.
type RepoCycle struct {
	// StopSeconds is `cue down` of the first daemon.
	StopSeconds Seconds `json:"stop_seconds"`
	// RestartDetachSeconds is `cue up --detach` until it returned;
	// RestartReadySeconds until /readyz answered 200;
	// RestartAnswerSeconds until read_context answered the first query
	// with hits. All from the command's start.
	RestartDetachSeconds Seconds `json:"restart_detach_seconds"`
	RestartReadySeconds  Seconds `json:"restart_ready_seconds"`
	RestartAnswerSeconds Seconds `json:"restart_answer_seconds"`
	RestartStopSeconds   Seconds `json:"restart_stop_seconds"`
}

// QueryTimes is one query's latencies in each mode and ripgrep's.
type QueryTimes struct {
	RepoQuery
	KeywordP50 Ms  `json:"keyword_p50_ms"`
	KeywordP99 Ms  `json:"keyword_p99_ms"`
	Hits       int `json:"keyword_hits"`
	// SourceFound says whether the file the query came from is among the
	// keyword hits.
	SourceFound       bool   `json:"keyword_source_found"`
	HybridP50         Ms     `json:"hybrid_p50_ms,omitempty"`
	HybridP99         Ms     `json:"hybrid_p99_ms,omitempty"`
	HybridHits        int    `json:"hybrid_hits,omitempty"`
	HybridSourceFound bool   `json:"hybrid_source_found,omitempty"`
	HybridFallback    string `json:"hybrid_fallback,omitempty"`
	// CueSearchP50/P99 time `cue-engine search QUERY --mode keyword`, the
	// whole process as a person at a terminal runs it.
	CueSearchP50 Ms  `json:"cue_search_p50_ms,omitempty"`
	CueSearchP99 Ms  `json:"cue_search_p99_ms,omitempty"`
	RgP50        Ms  `json:"rg_p50_ms,omitempty"`
	RgP99        Ms  `json:"rg_p99_ms,omitempty"`
	RgFiles      int `json:"rg_files,omitempty"`
}

// RipgrepTool is the rg the queries ran through.
type RipgrepTool struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// repoRun is one RunRepo: its options, report and the processes to stop.
type repoRun struct {
	o       *RepoOptions
	r       *RepoReport
	root    string
	ws      *workspace.Workspace
	queries []RepoQuery
	// up is the first daemon, a child process; detached is set while the
	// restarted one may run.
	up       *upProcess
	detached bool
}

// RunRepo copies a real repository, runs the product on it as a user
// does (`cue init`, `cue up`) and measures how fast it becomes
// keyword-searchable and fully embedded, the daemon's memory and disk,
// query latencies beside ripgrep, and stopping and restarting. It stops
// early when ctx is cancelled, stopping the daemon it started.
func RunRepo(ctx context.Context, o RepoOptions) (*RepoReport, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	modelID, err := provider.ModelID(o.Model)
	if err != nil {
		return nil, fmt.Errorf("bench: --model: %w", err)
	}
	src, err := ResolveRepo(o.Repo)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	r := &RepoReport{
		Version: version.Version, StartedAt: began.UTC(), Latency: map[string]*Latency{},
		Machine: Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadStart: loadAverage()},
		Settings: RepoSettings{Model: o.Model, ModelID: modelID, Limit: o.Limit, Seed: o.Seed, Transport: "nats-query", Warmup: Warmup,
			QuerySamples: o.QuerySamples, ReadContextLimit: readContextLimit, EmbedTimeout: Seconds(o.EmbedTimeout.Seconds()), RateLimits: "off",
			Daemon: filepath.Base(o.Engine) + " up"},
		Repo: RepoSource{Source: src},
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "cue-bench-repo-"); err != nil {
			return nil, err
		}
		if !o.Keep {
			defer os.RemoveAll(dir)
		}
	}
	b := &repoRun{o: &o, r: r, root: filepath.Join(dir, "repo")}
	if err := ensureEmpty(b.root); err != nil {
		return nil, fmt.Errorf("bench: %s is not empty: give --out a directory without repo/ in it, or a new one", b.root)
	}
	if !o.Keep {
		defer os.RemoveAll(b.root)
	} else {
		r.Repo.Root = b.root
	}
	b.ws = &workspace.Workspace{Root: b.root}
	defer b.cleanup()
	if err := b.prepare(ctx, src); err != nil {
		return nil, err
	}
	if err := b.measure(ctx, filepath.Join(dir, "up.log")); err != nil {
		return nil, err
	}
	o.Progress.Finish()
	r.Machine.LoadEnd = loadAverage()
	r.WallSecond = Seconds(time.Since(began).Seconds())
	return r, nil
}

// prepare copies the source, makes the copy a git repository and a
// workspace configured for the run, and derives the queries.
func (b *repoRun) prepare(ctx context.Context, src string) error {
	p := b.o.Progress
	p.Start("list repository", 0)
	exclude := append(slices.Clone(ingest.DefaultExclude), ingest.NeverPublished...)
	if cfg, err := (&workspace.Workspace{Root: src}).LoadConfig(); err == nil {
		exclude = append(exclude, cfg.Ingest.Exclude...)
	}
	files, err := indexableFiles(src, exclude)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("bench: %s has no files to index", src)
	}
	b.r.Repo.SourceFiles = len(files)
	var regular []repoFile
	for _, f := range files {
		if f.Symlink {
			b.r.Repo.Symlinks++
			continue
		}
		regular = append(regular, f)
	}
	regular = spread(regular, b.o.Limit)
	if err := copyFiles(src, b.root, regular, p); err != nil {
		return err
	}
	b.r.Repo.Files = len(regular)
	for _, f := range regular {
		b.r.Repo.Bytes += f.Size
	}
	p.Start("git init, cue init", 0)
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.CommandContext(ctx, git, "init", "-q", b.root).CombinedOutput(); err != nil {
			return fmt.Errorf("bench: git init: %w: %s", err, out)
		}
		b.r.Repo.GitInit = true
	}
	if out, err := exec.CommandContext(ctx, b.o.Engine, "init", "--workspace", b.root).CombinedOutput(); err != nil {
		return fmt.Errorf("bench: %s init: %w: %s", b.o.Engine, err, out)
	}
	if err := b.configure(); err != nil {
		return err
	}
	b.queries, err = deriveQueries(b.root, regular, b.o.Queries, b.o.Seed)
	if err != nil {
		return err
	}
	if len(b.queries) == 0 {
		return fmt.Errorf("bench: %s has no declarations with doc comments nor markdown headings to derive queries from: give --repo a source repository", src)
	}
	return nil
}

// configure sets the run's model in the config `cue init` wrote, turns
// rate limits off (the bench calls far faster than seed 002 lets an
// agent) and transcript tailing off (the user's own sessions are not the
// repository's), and checks that the daemon will read it so.
func (b *repoRun) configure() error {
	sets := []tomlSet{
		{"embed", "model", strconv.Quote(b.o.Model)},
		{"mcp", "rate_limits_mode", `"off"`},
		{"transcripts", "disabled", "true"},
	}
	if b.o.EmbedFiles != "" {
		sets = append(sets, tomlSet{"embed", "files", strconv.Quote(b.o.EmbedFiles)})
	}
	if b.o.EmbedCores > 0 {
		sets = append(sets, tomlSet{"embed", "cores", strconv.Itoa(b.o.EmbedCores)})
	}
	if err := configureWorkspace(b.ws, sets); err != nil {
		return err
	}
	cfg, err := b.ws.LoadConfig()
	if err != nil {
		return fmt.Errorf("bench: the configured workspace: %w", err)
	}
	if cfg.Embed.Model != b.o.Model || cfg.MCP.RateLimitsOn() || !cfg.Transcripts.Disabled || cfg.MCP.HTTPDisabled ||
		cfg.Embed.Files != b.o.EmbedFiles || cfg.Embed.Cores != b.o.EmbedCores {
		return fmt.Errorf("bench: %s does not read back as configured (model %q)", b.ws.Path(workspace.ConfigFile), cfg.Embed.Model)
	}
	return nil
}

// tomlSet is a key's value in a section of the workspace's config.
type tomlSet struct{ section, key, value string }

// configureWorkspace sets keys of the config `cue init` wrote in ws, and
// checks that it still loads.
func configureWorkspace(ws *workspace.Workspace, sets []tomlSet) error {
	path := ws.Path(workspace.ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	text := string(data)
	for _, set := range sets {
		if text, err = setTOMLKey(text, set.section, set.key, set.value); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if _, err := ws.LoadConfig(); err != nil {
		return fmt.Errorf("bench: the configured workspace: %w", err)
	}
	return nil
}

// execEngine runs the engine binary with args and returns its output.
func execEngine(ctx context.Context, engine string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, engine, args...).CombinedOutput()
}

// setTOMLKey replaces the line of key in [section] of a TOML text, or
// adds one at the section's start.
func setTOMLKey(text, section, key, value string) (string, error) {
	lines := strings.Split(text, "\n")
	in := false
	header := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			in = t == "["+section+"]"
			if in {
				header = i
			}
			continue
		}
		if k, _, ok := strings.Cut(t, "="); in && ok && strings.TrimSpace(k) == key {
			lines[i] = key + " = " + value
			return strings.Join(lines, "\n"), nil
		}
	}
	if header < 0 {
		return "", fmt.Errorf("bench: the config `cue init` wrote has no [%s]", section)
	}
	lines = slices.Insert(lines, header+1, key+" = "+value)
	return strings.Join(lines, "\n"), nil
}

// measure runs the daemon and takes every figure.
func (b *repoRun) measure(ctx context.Context, logPath string) error {
	o, r, p := b.o, b.r, b.o.Progress
	cfg, err := b.ws.LoadConfig()
	if err != nil {
		return err
	}
	exclude := append(append(slices.Clone(ingest.DefaultExclude), cfg.Ingest.Exclude...), ingest.NeverPublished...)
	expected, err := indexableFiles(b.root, exclude)
	if err != nil {
		return err
	}

	p.Start("start daemon", 0)
	start := time.Now()
	b.up, err = startUpProcess(ctx, o.Engine, b.ws, o.LogLevel, logPath)
	if err != nil {
		return err
	}
	n, err := connectNode(ctx, b.ws, b.up.info)
	if err != nil {
		return err
	}
	defer n.stop()
	pid := b.up.info.PID
	rss := func(into *int64) {
		if v, ok := peakRSS(pid); ok {
			*into = v
		}
	}

	if r.Index, err = b.waitSearchable(ctx, n, start, expected); err != nil {
		return err
	}
	rss(&r.Memory.PeakRSSSearchable)
	rep, err := status.CollectWith(ctx, n.conn.JS, status.Options{EmbedModel: r.Settings.ModelID})
	if err != nil {
		return err
	}
	skipped := map[string]bool{}
	for _, rr := range rep.Repos {
		r.Index.Indexed += rr.Indexed
		r.Index.Skipped += len(rr.Skipped)
		r.Index.Tokens += rr.Tokens
		for _, s := range rr.Skipped {
			skipped[s.Path] = true
		}
	}
	var sourceBytes int64
	for _, f := range expected {
		if !skipped[f.Path] {
			sourceBytes += f.Size
		}
	}

	if r.Settings.ModelID == "" {
		r.Skipped = append(r.Skipped, Skip{Figure: "embed", Reason: "no embedding model (--model none)"},
			Skip{Figure: "read_context_hybrid", Reason: "no embedding model (--model none)"})
	} else {
		if r.Embed, err = b.waitEmbedded(ctx, n, start, r.Index.Indexed); err != nil {
			return err
		}
		rss(&r.Memory.PeakRSSEmbedded)
	}
	if err := b.measureQueries(ctx, n); err != nil {
		return err
	}
	rss(&r.Memory.PeakRSS)
	if _, ok := peakRSS(pid); !ok {
		r.Skipped = append(r.Skipped, Skip{Figure: "peak_rss", Reason: "n/a: no /proc/PID/status on " + runtime.GOOS})
	}
	n.stop()

	p.Start("cue down", 0)
	took, err := b.down(ctx)
	if err != nil {
		return err
	}
	r.Lifecycle.StopSeconds = Seconds(took.Seconds())
	if err := b.up.wait(time.Minute); err != nil {
		return err
	}
	r.Memory.CPUSeconds = Seconds((b.up.cmd.ProcessState.UserTime() + b.up.cmd.ProcessState.SystemTime()).Seconds())
	b.up = nil

	parts, apparent, allocated, err := diskParts(b.ws.Cache())
	if err != nil {
		return err
	}
	r.Disk = &RepoDisk{CacheBytes: apparent, CacheAllocatedBytes: allocated, SourceBytes: sourceBytes, Parts: parts}
	if sourceBytes > 0 {
		r.Disk.Ratio = Ratio(float64(allocated) / float64(sourceBytes))
	}
	return b.restart(ctx)
}

// upProcess is `cue-engine up`, or an mcp-edge, running as a child.
type upProcess struct {
	cmd     *exec.Cmd
	info    workspace.DaemonInfo
	logPath string
	exited  chan struct{}
	err     error
}

func startUpProcess(ctx context.Context, engine string, ws *workspace.Workspace, logLevel, logPath string) (*upProcess, error) {
	u, err := startChild(exec.Command(engine, "up", "--workspace", ws.Root, "--log-level", logLevel), logPath)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if info, err := ws.ReadDaemonInfo(); err == nil && info.PID == u.cmd.Process.Pid {
			u.info = info
			return u, nil
		}
		select {
		case <-u.exited:
			return nil, fmt.Errorf("bench: %s up exited during start (%v): %s", engine, u.err, tail(logPath))
		case <-ctx.Done():
			u.terminate()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			u.terminate()
			return nil, fmt.Errorf("bench: the daemon did not write its daemon file within 2 minutes: %s", tail(logPath))
		}
	}
}

// startChild starts cmd with its output in logPath.
func startChild(cmd *exec.Cmd, logPath string) (*upProcess, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	u := &upProcess{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", strings.Join(cmd.Args[:min(2, len(cmd.Args))], " "), err)
	}
	go func() {
		u.err = cmd.Wait()
		close(u.exited)
	}()
	return u, nil
}

// waitReady waits until the edge of info answers /readyz with 200,
// polling every every until deadline.
func waitReady(ctx context.Context, info workspace.DaemonInfo, deadline time.Time, every time.Duration) error {
	for {
		_, ok, err := readyz(ctx, info)
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: pid %d was not ready by %s (%v)", info.PID, deadline.Format(time.TimeOnly), err)
		}
		if err := pause(ctx, every); err != nil {
			return err
		}
	}
}

// wait waits for the process to exit after `cue down`.
func (u *upProcess) wait(timeout time.Duration) error {
	select {
	case <-u.exited:
		if u.err != nil {
			return fmt.Errorf("bench: the daemon exited with %w: %s", u.err, tail(u.logPath))
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("bench: the daemon (pid %d) still runs %v after cue down", u.cmd.Process.Pid, timeout)
	}
}

// terminate stops the process as Ctrl-C would, killing it if it does not
// stop within a minute.
func (u *upProcess) terminate() {
	u.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-u.exited:
	case <-time.After(time.Minute):
		u.cmd.Process.Kill()
		<-u.exited
	}
}

// tail is the end of a log file, for errors.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return fmt.Sprintf("log %s ends:\n%s", path, b)
}

// cleanup stops whatever daemon the run left running: after an error or
// an interrupt.
func (b *repoRun) cleanup() {
	if b.up != nil {
		b.up.terminate()
	}
	if b.detached && b.ws.LockHolder() != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		b.down(ctx)
	}
}

// down runs `cue down` and times it: it returns once the daemon released
// the workspace lock.
func (b *repoRun) down(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	out, err := exec.CommandContext(ctx, b.o.Engine, "down", "--workspace", b.root).CombinedOutput()
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("bench: %s down: %w: %s", b.o.Engine, err, out)
	}
	return took, nil
}

// daemonClient is a client of a daemon running in its own process.
type daemonClient struct {
	ws     *workspace.Workspace
	info   workspace.DaemonInfo
	conn   *bus.Conn
	caller tools.Caller
	stop   func() error
}

// readContext asks read_context for q in mode.
func (n *daemonClient) readContext(ctx context.Context, q, mode string) ([]tools.ContextHit, error) {
	args, err := json.Marshal(tools.ReadContextArgs{Query: q, Mode: mode, Limit: readContextLimit})
	if err != nil {
		return nil, err
	}
	res, err := n.caller.Call(ctx, tools.ReadContext, args)
	if err != nil {
		return nil, err
	}
	var hits []tools.ContextHit
	return hits, json.Unmarshal(res, &hits)
}

// connectNode is a client of the daemon's query service, as `cue mcp`
// is.
func connectNode(ctx context.Context, ws *workspace.Workspace, info workspace.DaemonInfo) (*daemonClient, error) {
	if info.MCPURL == "" {
		return nil, errors.New("bench: the daemon serves no HTTP (its /readyz and /metrics are read): leave [mcp] http_addr set")
	}
	conn, err := bus.Connect(ctx, info.NATSURL, bus.ConnectOptions{Name: "cue-bench"})
	if err != nil {
		return nil, err
	}
	caller, err := query.NewClient(conn.NC, query.ClientOptions{Prefix: info.QueryPrefix, Timeout: 30 * time.Second})
	if err != nil {
		conn.Close()
		return nil, err
	}
	n := &daemonClient{ws: ws, info: info, conn: conn, caller: caller}
	var once sync.Once
	n.stop = func() error { once.Do(conn.Close); return nil }
	return n, nil
}

// opsURL is the daemon's operations endpoint path beside its MCP URL.
func opsURL(info workspace.DaemonInfo, path string) string {
	return strings.TrimSuffix(info.MCPURL, "/mcp") + path
}

// readyz reads the edge's readiness report; ok is the status 200.
func readyz(ctx context.Context, info workspace.DaemonInfo) (rep telemetry.Report, ok bool, err error) {
	return telemetry.FetchReport(ctx, info.MCPURL)
}

var metricLine = regexp.MustCompile(`(?m)^(cue_edge_docs|cue_edge_docs_skipped) ([0-9.e+]+)$`)

// edgeDocs reads the edge's document counts from /metrics.
func edgeDocs(ctx context.Context, info workspace.DaemonInfo) (docs, skipped int, err error) {
	body, _, err := httpGet(ctx, opsURL(info, "/metrics"))
	if err != nil {
		return 0, 0, err
	}
	for _, m := range metricLine.FindAllStringSubmatch(string(body), -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: /metrics %s: %w", m[1], err)
		}
		if m[1] == "cue_edge_docs" {
			docs = int(v)
		} else {
			skipped = int(v)
		}
	}
	return docs, skipped, nil
}

func httpGet(ctx context.Context, url string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return body, resp.StatusCode, err
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// waitSearchable waits until every expected file is keyword-searchable:
// cue_docs holds a record for each (ingest publishes every file it walks;
// the indexer stores it indexed or skipped), and the edge has applied
// every revision of cue_docs up to the one that completed the set, after
// which read_context keyword searches all of them. Both times count from
// start.
func (b *repoRun) waitSearchable(ctx context.Context, n *daemonClient, start time.Time, expected []repoFile) (*RepoIndex, error) {
	p := b.o.Progress
	p.Start("index to keyword-searchable", len(expected))
	stream, err := n.conn.JS.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		return nil, err
	}
	var stored time.Duration
	var storedRev uint64
	var unexpected []string
	deadline := start.Add(b.o.IndexTimeout)
	for {
		info, err := stream.Info(ctx)
		if err != nil {
			return nil, err
		}
		records := int(info.State.NumSubjects)
		p.Set(records)
		if stored == 0 && records >= len(expected) {
			// The count is cheap to poll; the paths are checked once it
			// is reached, so a file ingest publishes beyond the expected
			// ones cannot stand in for one it has not published yet.
			missing, extra, err := recordDiff(ctx, n, expected)
			if err != nil {
				return nil, err
			}
			if len(missing) == 0 {
				// The revision that completed the set is at most the
				// last one now, after the listing saw it.
				after, err := stream.Info(ctx)
				if err != nil {
					return nil, err
				}
				stored, storedRev, unexpected = time.Since(start), after.State.LastSeq, extra
			}
		}
		if stored != 0 {
			rep, _, err := readyz(ctx, n.info)
			if err == nil && rep.Applied(events.DocsBucket) >= storedRev {
				took := time.Since(start)
				ix := &RepoIndex{Files: len(expected), StoredSeconds: Seconds(stored.Seconds()), Seconds: Seconds(took.Seconds()),
					FilesPerSec: Rate(float64(len(expected)) / took.Seconds()), Unexpected: len(unexpected)}
				if len(unexpected) > 0 {
					b.r.Skipped = append(b.r.Skipped, Skip{Figure: "index", Reason: fmt.Sprintf("ingest published %d files the bench did not expect (its rules differ from ingest's?): %s", len(unexpected), strings.Join(unexpected[:min(5, len(unexpected))], ", "))})
				}
				if ix.EdgeDocs, ix.EdgeSkipped, err = edgeDocs(ctx, n.info); err != nil {
					return nil, err
				}
				return ix, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, b.notIndexed(ctx, n, expected, records)
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// notIndexed says which files have no record when indexing timed out.
func (b *repoRun) notIndexed(ctx context.Context, n *daemonClient, expected []repoFile, records int) error {
	msg := fmt.Sprintf("bench: %d records for %d files %v after the daemon started", records, len(expected), b.o.IndexTimeout)
	missing, _, err := recordDiff(ctx, n, expected)
	if err != nil {
		return fmt.Errorf("%s (%w)", msg, err)
	}
	return fmt.Errorf("%s; %d without a record, e.g. %s; the daemon's %s", msg, len(missing), strings.Join(missing[:min(5, len(missing))], ", "), tail(b.up.logPath))
}

// recordDiff compares the paths cue_docs holds records of with the
// expected files: those missing, and those beyond. It reads the stream's
// subjects, which the server counts in its index: listing the bucket's
// keys instead had the server read every block of it (decompressing and
// caching each, copying every message), 40-55 MiB of the daemon's heap
// in the seconds after indexing that `cue bench` put there itself. A key
// whose last entry is a deletion still counts; a fresh workspace has
// none.
func recordDiff(ctx context.Context, n *daemonClient, expected []repoFile) (missing, extra []string, err error) {
	stream, err := n.conn.JS.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		return nil, nil, err
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(events.DocsSubject(">")))
	if err != nil {
		return nil, nil, err
	}
	prefix := events.DocsSubject("")
	have := map[string]bool{}
	for subject := range info.State.Subjects {
		if _, enc, ok := strings.Cut(strings.TrimPrefix(subject, prefix), "."); ok {
			if p, err := base64.RawURLEncoding.DecodeString(enc); err == nil {
				have[string(p)] = true
			}
		}
	}
	for _, f := range expected {
		if !have[f.Path] {
			missing = append(missing, f.Path)
		}
		delete(have, f.Path)
	}
	for p := range have {
		extra = append(extra, p)
	}
	slices.Sort(extra)
	return missing, extra, nil
}

// waitEmbedded waits until every indexed document has a vector record of
// the model, the embed queue is empty and the edge has applied every
// vector record, or until EmbedTimeout after start.
func (b *repoRun) waitEmbedded(ctx context.Context, n *daemonClient, start time.Time, docs int) (*RepoEmbed, error) {
	p := b.o.Progress
	p.Start("embed ("+b.o.Model+")", docs)
	model := b.r.Settings.ModelID
	deadline := start.Add(b.o.EmbedTimeout)
	e := &RepoEmbed{Model: model, Docs: docs}
	var took time.Duration
	for {
		vectors, rev, pending, err := embedState(ctx, n)
		if err != nil {
			return nil, err
		}
		took, e.Vectors = time.Since(start), min(vectors, docs)
		p.Set(vectors)
		if vectors >= docs && pending == 0 {
			if rep, _, err := readyz(ctx, n.info); err == nil && rep.Applied(events.VectorsBucket) >= rev {
				e.Complete = true
				break
			}
		}
		// Past the timeout (already, when indexing took longer) the
		// count just read is how far embedding got.
		if time.Now().After(deadline) {
			break
		}
		if err := pause(ctx, 250*time.Millisecond); err != nil {
			return nil, err
		}
	}
	e.Seconds = Seconds(took.Seconds())
	e.FilesPerSec = Rate(float64(e.Vectors) / took.Seconds())
	if !e.Complete {
		b.r.Skipped = append(b.r.Skipped, Skip{Figure: "embed", Reason: fmt.Sprintf("capped by --embed-timeout %v: %d of %d documents had vectors %.0f s after the start", b.o.EmbedTimeout, e.Vectors, docs, took.Seconds())})
	}
	return e, nil
}

// embedState counts the vector records (one model per fresh workspace),
// the last cue_vectors revision and the embed requests not yet done.
func embedState(ctx context.Context, n *daemonClient) (vectors int, rev, pending uint64, err error) {
	s, err := n.conn.JS.Stream(ctx, "KV_"+events.VectorsBucket)
	if err != nil {
		return 0, 0, 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	c, err := n.conn.JS.Consumer(ctx, events.EmbedStream, events.EmbedderConsumer)
	if err != nil {
		return 0, 0, 0, err
	}
	ci, err := c.Info(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	return int(info.State.NumSubjects), info.State.LastSeq, ci.NumPending + uint64(ci.NumAckPending), nil
}

// measureQueries times read_context keyword (and hybrid, with a model),
// the whole `cue search` command and ripgrep on each derived query. The edge keeps an answer cache keyed
// by the arguments as sent, so a query repeated 30 times would time the
// cache: each uncached call sends the same arguments followed by a
// different amount of JSON whitespace, which the cache tells apart and
// the tool ignores, and the cache's hit counter confirms it missed. The
// repeated identical call is timed too, as the cached figure.
func (b *repoRun) measureQueries(ctx context.Context, n *daemonClient) error {
	o, r, p := b.o, b.r, b.o.Progress
	var rg *RipgrepTool
	if o.Ripgrep != "" {
		out, err := exec.CommandContext(ctx, o.Ripgrep, "--version").Output()
		if err != nil {
			return fmt.Errorf("bench: %s --version: %w", o.Ripgrep, err)
		}
		rg = &RipgrepTool{Path: o.Ripgrep, Version: strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])}
		r.Ripgrep = rg
	} else {
		r.Skipped = append(r.Skipped, Skip{Figure: "ripgrep", Reason: o.RipgrepMissing})
	}
	modes := []string{tools.ModeKeyword}
	if r.Settings.ModelID != "" {
		modes = append(modes, tools.ModeHybrid)
	}
	all := map[string]*stats.LatencySummary{}
	for _, name := range []string{"read_context_keyword", "read_context_keyword_cached", "read_context_hybrid", "read_context_hybrid_cached", "cue_search", "ripgrep"} {
		all[name] = &stats.LatencySummary{}
	}
	hitsBefore, err := cacheHits(ctx, n.info)
	if err != nil {
		return err
	}
	var cachedCalls float64
	for qi, q := range b.queries {
		qt := QueryTimes{RepoQuery: q}
		label := fmt.Sprintf("%d/%d", qi+1, len(b.queries))
		for _, mode := range modes {
			args, err := json.Marshal(tools.ReadContextArgs{Query: q.Text, Mode: mode, Limit: readContextLimit})
			if err != nil {
				return err
			}
			var hits []tools.ContextHit
			call := func(raw []byte) error {
				out, err := n.caller.Call(ctx, tools.ReadContext, raw)
				if err != nil {
					return fmt.Errorf("%s: %w", tools.ReadContext, err)
				}
				hits = hits[:0]
				return json.Unmarshal(out, &hits)
			}
			s, err := sample(ctx, p, "read_context "+mode+" "+label, o.QuerySamples, all["read_context_"+mode], func(i int) error {
				return call(append(slices.Clip(args), bytes.Repeat([]byte(" "), i+1)...))
			})
			if err != nil {
				return err
			}
			cached, err := sample(ctx, p, "read_context "+mode+" cached "+label, o.QuerySamples, all["read_context_"+mode+"_cached"], func(int) error {
				return call(args)
			})
			if err != nil {
				return err
			}
			// The first of them computes the answer the rest are served.
			cachedCalls += float64(Warmup + cached.Len() - 1)
			fallback := ""
			for _, h := range hits {
				if h.Fallback != "" {
					fallback = h.Fallback
				}
			}
			if mode == tools.ModeKeyword {
				qt.KeywordP50, qt.KeywordP99 = Ms(s.Percentile(50)), Ms(s.Percentile(99))
				qt.Hits, qt.SourceFound = len(hits), hasPath(hits, q.Source)
			} else {
				qt.HybridP50, qt.HybridP99 = Ms(s.Percentile(50)), Ms(s.Percentile(99))
				qt.HybridHits, qt.HybridSourceFound, qt.HybridFallback = len(hits), hasPath(hits, q.Source), fallback
			}
		}
		// The whole command, each run with another --limit (never
		// read_context's own, whose answer the cached calls above left
		// in the cache) so that the edge computes every answer; runs
		// beyond the limits there are repeat one and are counted as hits.
		limits := tools.MaxContextLimit - readContextLimit
		cachedCalls += float64(max(0, Warmup+o.QuerySamples-limits))
		s, err := sample(ctx, p, "cue search "+label, o.QuerySamples, all["cue_search"], func(i int) error {
			cmd := exec.CommandContext(ctx, o.Engine, "search", "--workspace", b.root, "--mode", tools.ModeKeyword,
				"--limit", strconv.Itoa(readContextLimit+1+i%limits), "--", q.Text)
			if out, err := cmd.CombinedOutput(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 1 { // 1: no match, still a search
					return fmt.Errorf("cue search %q: %w: %s", q.Text, err, out)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		qt.CueSearchP50, qt.CueSearchP99 = Ms(s.Percentile(50)), Ms(s.Percentile(99))
		if rg != nil {
			s, err := sample(ctx, p, "ripgrep "+label, o.QuerySamples, all["ripgrep"], func(int) error {
				files, err := ripgrepFiles(ctx, rg.Path, q.Text, b.root)
				qt.RgFiles = files
				return err
			})
			if err != nil {
				return err
			}
			qt.RgP50, qt.RgP99 = Ms(s.Percentile(50)), Ms(s.Percentile(99))
		}
		r.Queries = append(r.Queries, qt)
	}
	hitsAfter, err := cacheHits(ctx, n.info)
	if err != nil {
		return err
	}
	note := fmt.Sprintf("%d queries × %d samples", len(b.queries), o.QuerySamples)
	uncachedNote := note + "; every call computed (answer cache missed)"
	// Only the repeated calls may hit; a hit beyond them means an
	// "uncached" call was answered from the cache (a fallback answer is
	// never cached, so fewer hits are expected while embedding runs).
	if extra := hitsAfter - hitsBefore - cachedCalls; extra > 0 {
		uncachedNote = fmt.Sprintf("%s; %.0f calls meant to miss the answer cache hit it", note, extra)
	}
	for _, mode := range modes {
		name := "read_context_" + mode
		n := uncachedNote
		if mode == tools.ModeHybrid && r.Embed != nil && !r.Embed.Complete {
			n += "; embedding still running (capped by --embed-timeout)"
		}
		r.Latency[name] = latencyOf(all[name], "repo", n)
		r.Latency[name+"_cached"] = latencyOf(all[name+"_cached"], "repo", note+"; the same call repeated: answered from the edge's answer cache")
	}
	r.Latency["cue_search"] = latencyOf(all["cue_search"], "repo", note+"; cue-engine search --mode keyword QUERY, whole process, each answer computed")
	if rg != nil {
		r.Latency["ripgrep"] = latencyOf(all["ripgrep"], "repo", note+"; rg -l -i -F QUERY ROOT, whole process")
	}
	return nil
}

var cacheHitsLine = regexp.MustCompile(`(?m)^cue_edge_cache_hits_total\{level="L3"\} ([0-9.e+]+)$`)

// cacheHits reads the answer cache's hits at level L3 (read_context's)
// from /metrics.
func cacheHits(ctx context.Context, info workspace.DaemonInfo) (float64, error) {
	body, _, err := httpGet(ctx, opsURL(info, "/metrics"))
	if err != nil {
		return 0, err
	}
	m := cacheHitsLine.FindSubmatch(body)
	if m == nil {
		return 0, nil
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

func hasPath(hits []tools.ContextHit, path string) bool {
	return slices.ContainsFunc(hits, func(h tools.ContextHit) bool { return h.Path == path })
}

// ripgrepFiles runs `rg -l -i -F query root` and counts the files it
// lists.
func ripgrepFiles(ctx context.Context, rg, query, root string) (int, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, rg, "-l", "-i", "-F", "--", query, root)
	cmd.Stdout = &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil // no match
	}
	return bytes.Count(out.Bytes(), []byte("\n")), err
}

// restart starts the daemon again on the unchanged workspace as `cue up
// --detach` does, times it until ready and answering, then stops it.
func (b *repoRun) restart(ctx context.Context) error {
	p, r := b.o.Progress, b.r
	p.Start("restart (cue up --detach)", 0)
	start := time.Now()
	b.detached = true
	out, err := exec.CommandContext(ctx, b.o.Engine, "up", "--detach", "--workspace", b.root, "--log-level", b.o.LogLevel).CombinedOutput()
	if err != nil {
		return fmt.Errorf("bench: %s up --detach: %w: %s", b.o.Engine, err, out)
	}
	r.Lifecycle.RestartDetachSeconds = Seconds(time.Since(start).Seconds())
	info, err := b.ws.ReadDaemonInfo()
	if err != nil {
		return err
	}
	deadline := start.Add(5 * time.Minute)
	if err := waitReady(ctx, info, deadline, 10*time.Millisecond); err != nil {
		return fmt.Errorf("the restarted daemon: %w: %s", err, tail(b.ws.LogPath()))
	}
	r.Lifecycle.RestartReadySeconds = Seconds(time.Since(start).Seconds())
	n, err := connectNode(ctx, b.ws, info)
	if err != nil {
		return err
	}
	defer n.stop()
	for {
		hits, err := n.readContext(ctx, b.queries[0].Text, tools.ModeKeyword)
		if err == nil && len(hits) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: the restarted daemon did not answer %q within 5 minutes (%v)", b.queries[0].Text, err)
		}
		if err := pause(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
	r.Lifecycle.RestartAnswerSeconds = Seconds(time.Since(start).Seconds())
	// The first daemon's embed workers added the last of what they spent
	// as they stopped.
	if r.Embed != nil {
		kv, err := n.conn.JS.KeyValue(ctx, events.EmbedCostBucket)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		c, rev, err := bus.ReadEmbedCost(ctx, kv, r.Embed.Model)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if rev > 0 {
			r.Embed.Cost = &c
		}
	}
	if v, ok := peakRSS(info.PID); ok {
		r.Memory.RestartPeakRSS = v
	}
	n.stop()
	p.Start("cue down (restarted)", 0)
	took, err := b.down(ctx)
	if err != nil {
		return err
	}
	b.detached = false
	r.Lifecycle.RestartStopSeconds = Seconds(took.Seconds())
	return nil
}
