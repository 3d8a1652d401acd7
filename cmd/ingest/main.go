// Command ingest watches repositories and publishes their file changes to
// JetStream for the indexers, and tails the transcripts of agents working in
// them for the extractors. Give it one --repo name=path per repository.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/internal/role"
	"github.com/cuedeck/cuedeck/internal/transcripts"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/pkg/events"
)

type repoFlags []ingest.RepoConfig

func (r *repoFlags) String() string { return fmt.Sprint(*r) }
func (r *repoFlags) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want name=path, e.g. --repo api=/src/api")
	}
	*r = append(*r, ingest.RepoConfig{Name: name, Root: path})
	return nil
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if role.AsksVersion(os.Args[1:]) {
		if err := version.Print(os.Stdout, "ingest", os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "ingest:", err)
			os.Exit(2)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ingest:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("ingest", flag.ExitOnError)
	rf := role.Register(fs)
	var repos repoFlags
	var exclude listFlag
	fs.Var(&repos, "repo", "repository to watch as name=path (repeatable)")
	fs.Var(&exclude, "exclude", "gitignore-style pattern to skip in every repo (repeatable)")
	stateDir := fs.String("state-dir", "ingest-state", "directory of ingest's local state (what it has published)")
	maxFile := fs.Int64("max-file-bytes", 8<<20, "skip (and report) files larger than this")
	inline := fs.Int64("inline-bytes", 256<<10, "files up to this size travel inline; larger via the object store")
	debounce := fs.Duration("debounce", 0, "quiet time after the last write before publishing (default 500ms)")
	reconcileEvery := fs.Duration("reconcile-every", 0, "how often to compare what was published with cue_docs and publish again what it lost, e.g. after the bucket was recreated or restored from a backup (default 10m)")
	var claudeDirs, chat listFlag
	fs.Var(&claudeDirs, "claude-dir", "Claude Code projects directory to tail transcripts from (repeatable; default ~/.claude/projects)")
	fs.Var(&chat, "chat", "generic chat-JSONL transcripts as glob or repo=glob (repeatable)")
	noTranscripts := fs.Bool("no-transcripts", false, "do not tail agent transcripts")
	fs.Parse(os.Args[1:])
	if len(repos) == 0 {
		return fmt.Errorf("no repositories: give at least one --repo name=path")
	}
	log, err := rf.Logger("ingest")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := rf.Connect(ctx, "cue-ingest", log)
	if err != nil {
		return err
	}
	// Shutdown order: Run stops the watchers and waits for publishes in
	// flight, then closes its state store; the connection closes last.
	defer conn.Close()
	svc, err := ingest.New(conn, ingest.Config{
		Repos: repos, Exclude: append(slices.Clone(ingest.DefaultExclude), exclude...), MaxFileBytes: *maxFile, InlineBytes: *inline,
		Debounce: *debounce, StateDir: *stateDir, ReconcileEvery: *reconcileEvery,
	}, log)
	if err != nil {
		return err
	}
	// The server's word that the task log was created, deleted or
	// restored brings card write-back's comparison on at once; that
	// cue_docs was, a comparison with it once it settles.
	stopRechecks, err := bus.OnStreamReplaced(conn.NC, svc.StreamReplaced, events.TasksStream, "KV_"+events.DocsBucket)
	if err != nil {
		return err
	}
	defer stopRechecks()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return svc.Run(gctx) })
	if !*noTranscripts {
		tcfg, err := transcriptConfig(repos, claudeDirs, chat, filepath.Join(*stateDir, "transcripts"))
		if err != nil {
			return err
		}
		tl, err := transcripts.New(conn, tcfg, log.With("component", "transcripts"))
		if err != nil {
			return err
		}
		g.Go(func() error { return tl.Run(gctx) })
	}
	log.Info("ingest running", "nats", rf.NATSURL, "repos", len(repos), "transcripts", !*noTranscripts)
	return g.Wait()
}

// transcriptConfig maps the flags onto the tailer's config. The tailer
// keeps its offsets in a Badger of its own beside ingest's state.
func transcriptConfig(repos []ingest.RepoConfig, claudeDirs, chat []string, stateDir string) (transcripts.Config, error) {
	cfg := transcripts.Config{StateDir: stateDir}
	known := map[string]bool{}
	for _, r := range repos {
		root, err := filepath.Abs(r.Root)
		if err != nil {
			return cfg, err
		}
		cfg.Repos = append(cfg.Repos, transcripts.RepoRoot{Name: r.Name, Root: root})
		known[r.Name] = true
	}
	if len(claudeDirs) > 0 {
		cfg.ClaudeDirs = claudeDirs
	}
	for _, c := range chat {
		repo, glob, ok := strings.Cut(c, "=")
		if !ok {
			repo, glob = "", c
		}
		if repo != "" && !known[repo] {
			return cfg, fmt.Errorf("--chat %s: repo %q is not one of the --repo names", c, repo)
		}
		cfg.ChatSources = append(cfg.ChatSources, transcripts.ChatSource{Glob: glob, Repo: repo})
	}
	return cfg, nil
}
