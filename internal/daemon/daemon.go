// Package daemon composes every CueDeck role in one process for a laptop:
// an embedded NATS server (or a configured cluster), ingest, indexer, the
// embed worker of the configured model, the edge materialiser with its MCP
// HTTP endpoint and NATS query service. The
// roles talk through JetStream exactly as separate processes would. `cue up`
// runs it; `cue mcp` starts it in the background when none runs.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/dashboard"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/embed/cache"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/embedworker"
	"github.com/cuedeck/cuedeck/internal/extractor"
	"github.com/cuedeck/cuedeck/internal/hookserver"
	"github.com/cuedeck/cuedeck/internal/humanize"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/internal/lifecycle"
	"github.com/cuedeck/cuedeck/internal/llm"
	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/memstore"
	"github.com/cuedeck/cuedeck/internal/priority"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/transcripts"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/core/card"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Options configure a daemon run.
type Options struct {
	Workspace *workspace.Workspace
	Config    *workspace.Config
	Logger    *slog.Logger
	// Ready is called once every role runs and the daemon file is written.
	Ready func(workspace.DaemonInfo)
}

// QueryPrefix is the subject prefix of the query service. One per NATS
// account: an embedded server serves one workspace.
const QueryPrefix = "cue.query"

// LocalQueryPrefix is the daemon's query prefix when its embedded server
// joins a team as a leaf node. The team's edges serve the team prefix
// ([nats] team_query_prefix, default QueryPrefix), which the leaf
// forwards; were the daemon to serve it too, NATS would prefer the local
// subscriber and `cue mcp` would never hear the team. This prefix is
// outside what the team's laptop user may publish, so it stays on the
// laptop.
const LocalQueryPrefix = "cue.local"

// Run holds the workspace lock and runs all roles until ctx is cancelled,
// then shuts down in order. If the lock is held, the error is a
// *workspace.LockError (code 1007).
func Run(ctx context.Context, o Options) (err error) {
	ws, cfg, log := o.Workspace, o.Config, o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A cache of a newer CueDeck is refused before anything touches it.
	if err := ws.CheckCacheFormat(); err != nil {
		return err
	}
	lock, err := ws.AcquireLock()
	if err != nil {
		return err
	}
	defer lock.Release()
	// cacheLost is set when the cache is deleted under the daemon: its
	// stores' files are gone and closing them may never end.
	var cacheLost atomic.Bool
	moved, err := ws.PrepareCache(time.Now())
	if err != nil {
		return err
	}
	// A daemon killed or crashed left its running mark: the messages it
	// held are handed out again below, once.
	unclean, err := ws.MarkRunning()
	if err != nil {
		return err
	}
	defer ws.ClearRunning()
	if moved != "" {
		log.Warn("the workspace cache was of an older data format: its derived state was moved aside and is rebuilt from the streams; delete the moved directory once CueDeck works", "moved_to", moved, "data_format", version.DataFormat)
	}

	// Joined to a team, the daemon leaves the team prefix to the team's
	// edges and answers on its own.
	servePrefix, teamPrefix := QueryPrefix, ""
	if cfg.NATS.URL == "" && len(cfg.NATS.LeafRemotes) > 0 {
		servePrefix, teamPrefix = LocalQueryPrefix, cfg.NATS.TeamQueryPrefix
		if teamPrefix == "" {
			teamPrefix = QueryPrefix
		}
		if teamPrefix == LocalQueryPrefix || strings.HasPrefix(teamPrefix, LocalQueryPrefix+".") {
			return fmt.Errorf("config [nats] team_query_prefix %q: %s is the daemon's own prefix on a leaf node; use the team edges' --query-prefix (default %s)", teamPrefix, LocalQueryPrefix, QueryPrefix)
		}
	}

	// The heap is bounded before the stores open: loading a large
	// workspace's index at start makes as much garbage as indexing it.
	stopHeapLimits := limitHeapFromStart(ctx, log)
	defer stopHeapLimits()

	// Until it is ready, the daemon says what it is doing where `cue up
	// --detach` and `cue mcp`, waiting for it, can show the user.
	starting := newStartProgress(ws, log)
	defer ws.RemoveStarting()
	starting.say("starting the NATS server")

	// NATS: the embedded server unless the config names a cluster.
	natsURL := cfg.NATS.URL
	var srv *bus.Embedded
	var storeDamage map[string]string
	if natsURL == "" {
		host, port, err := splitListen(cfg.NATS.Listen)
		if err != nil {
			return fmt.Errorf("config [nats] listen: %w", err)
		}
		// The server trusts a block its index vouches for: check every
		// record's checksum before it opens them.
		checkStart := time.Now()
		if storeDamage, err = bus.CheckStoreFiles(ws.NATSStoreDir()); err != nil {
			return err
		}
		log.Debug("checked the JetStream store", "took", time.Since(checkStart), "damaged", len(storeDamage))
		srv, err = bus.StartEmbedded(bus.EmbeddedConfig{
			StoreDir: ws.NATSStoreDir(), Host: host, Port: port,
			SyncAlways: *cfg.NATS.SyncAlways, ServerName: "cue-" + cfg.Workspace.Name,
			LeafRemotes: cfg.NATS.LeafRemotes, Logger: log,
		})
		if err != nil {
			return err
		}
		// Last of all: the server outlives every client of it.
		defer unlessCacheLost(&cacheLost, log, "nats-server", func() {
			srv.Shutdown()
			log.Info("stopped", "component", "nats-server")
		})
		natsURL = srv.ClientURL()
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	conn, err := bus.Connect(cctx, natsURL, bus.ConnectOptions{Name: "cue-daemon", Credentials: cfg.NATS.Credentials, Logger: log})
	cancel()
	if err != nil {
		return err
	}
	if srv != nil {
		conn.SetDurable(srv.Durable())
	}
	defer unlessCacheLost(&cacheLost, log, "nats-connection", func() {
		conn.Close()
		log.Info("stopped", "component", "nats-connection")
	})
	settings := bus.Settings{Replicas: cfg.NATS.Replicas, IngestMaxBytes: cfg.NATS.QueueMaxBytes}
	var free uint64
	if srv != nil {
		// The embedded server's queues reserve their caps on this disk.
		dir := ws.NATSStoreDir()
		if free, err = bus.FreeBytes(dir); err != nil {
			return err
		}
		if settings.IngestMaxBytes == 0 {
			if settings.IngestMaxBytes, err = bus.QueueMaxBytesFor(dir, free); err != nil {
				return err
			}
		}
		log.Debug("queues sized", "queue_max_mib", settings.IngestMaxBytes>>20, "free_mib", free>>20)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	if srv != nil {
		// Streams whose blocks the server could not read back are deleted
		// when the files can give their data again; Provision then
		// creates them empty, and their readers rebuild.
		damaged := srv.DamagedStreams()
		maps.Copy(damaged, storeDamage)
		if len(damaged) > 0 {
			starting.say("rebuilding damaged JetStream streams")
			if _, err := bus.RepairDamaged(pctx, conn.JS, damaged, log); err != nil {
				cancel()
				return err
			}
		}
	}
	if srv != nil {
		// No worker runs yet: an empty queue an earlier release made a
		// work queue can be created again as this one declares it.
		if _, err := bus.UpgradeEmptyQueues(pctx, conn.JS, log); err != nil {
			cancel()
			return err
		}
	}
	err = bus.Provision(pctx, conn.JS, bus.DeclaredTopology(settings), log)
	if err != nil && srv != nil && bus.IsInsufficientStorage(err) {
		// Queues created larger than the disk now allows block each other's
		// shrinking: recreate the empty ones at the new size.
		if shrunk, serr := bus.ShrinkEmptyQueues(pctx, conn.JS, settings.IngestMaxBytes, log); serr != nil {
			err = serr
		} else if len(shrunk) > 0 {
			err = bus.Provision(pctx, conn.JS, bus.DeclaredTopology(settings), log)
		}
	}
	if err == nil && srv != nil {
		err = redeliverAfterUncleanStop(pctx, conn.JS, settings, unclean, log)
	}
	cancel()
	if err != nil {
		if srv != nil {
			err = bus.ExplainInsufficientStorage(err, ws.NATSStoreDir(), free, settings.IngestMaxBytes)
		}
		return err
	}

	starting.say("opening the index")
	repos := []ingest.RepoConfig{{Name: cfg.Workspace.Name, Root: ws.Root}}
	for _, r := range cfg.Repos {
		repos = append(repos, ingest.RepoConfig{Name: r.Name, Root: r.Path})
	}
	ing, err := ingest.New(conn, ingest.Config{
		Repos: repos, Exclude: append(slices.Clone(ingest.DefaultExclude), cfg.Ingest.Exclude...), MaxFileBytes: cfg.Ingest.MaxFileBytes,
		InlineBytes: cfg.Ingest.InlineBytes, Debounce: cfg.Ingest.Debounce.Duration,
		StateDir: ws.StateDir("ingest"),
	}, log.With("role", "ingest"))
	if err != nil {
		return err
	}
	// Transcripts of agents working in these repos become memories.
	var tailer *transcripts.Tailer
	if !cfg.Transcripts.Disabled {
		roots := make([]transcripts.RepoRoot, 0, len(repos))
		for _, r := range repos {
			root, err := filepath.Abs(r.Root)
			if err != nil {
				return err
			}
			roots = append(roots, transcripts.RepoRoot{Name: r.Name, Root: root})
		}
		chat := make([]transcripts.ChatSource, 0, len(cfg.Transcripts.Chat))
		for _, c := range cfg.Transcripts.Chat {
			chat = append(chat, transcripts.ChatSource{Glob: c.Glob, Repo: c.Repo})
		}
		tailer, err = transcripts.New(conn, transcripts.Config{
			Repos: roots, ClaudeDirs: slices.Clone(cfg.Transcripts.ClaudeDirs), ChatSources: chat,
			StateDir: ws.StateDir("transcripts"),
		}, log.With("role", "transcripts"))
		if err != nil {
			return fmt.Errorf("config [transcripts]: %w", err)
		}
	}
	// Extraction turns transcript batches into memories: by rules, or by
	// an LLM under the shared daily budget with rules as the fallback.
	xllm, err := llm.Open(cfg.Extract.LLM, llm.OpenConfig{OllamaHost: cfg.Extract.OllamaHost, CallTimeout: cfg.Extract.CallTimeout.Duration, Logger: log.With("role", "extractor")})
	if err != nil {
		return fmt.Errorf("config [extract] llm: %w", err)
	}
	xtr, err := extractor.New(conn, xllm, extractor.Config{
		DailyUSD: cfg.Extract.DailyBudgetUSD, PriceInPerMTok: cfg.Extract.PriceInPerMTok,
		PriceOutPerMTok: cfg.Extract.PriceOutPerMTok, CallTimeout: cfg.Extract.CallTimeout.Duration,
	}, log.With("role", "extractor"))
	if err != nil {
		return fmt.Errorf("config [extract]: %w", err)
	}
	// The roles share this process's cores: indexing, materialising and
	// answering run as soon as they have work, embedding only while they
	// have none.
	gate := priority.New(0)
	gate.SetBackgroundCores(cfg.Embed.Cores)
	// Starting is foreground work too: the embed worker would otherwise
	// take a core from the edge's load and ingest's comparison with every
	// request left queued by the last run, and the restart would be
	// ready later.
	endStart := sync.OnceFunc(gate.Begin())
	defer endStart()
	// Embeddings trail indexing: the indexer asks the embed worker for the
	// vectors of each record it stores, unless the model is "none".
	emb, err := provider.Open(cfg.Embed.Model, provider.Config{OllamaHost: cfg.Embed.OllamaHost, Logger: log.With("role", "embedder")})
	if err != nil {
		return fmt.Errorf("config [embed] model: %w", err)
	}
	var embedder *embedworker.Service
	if emb != nil {
		vc, err := cache.Open(ws.StateDir("embed"), log)
		if err != nil {
			return err
		}
		// After the embed worker has drained (g.Wait returns first), and
		// before the NATS connection closes.
		defer unlessCacheLost(&cacheLost, log, "vector-cache", func() {
			if err := vc.Close(); err != nil {
				log.Warn("closing the vector cache", "err", err)
			}
			log.Info("stopped", "component", "vector-cache")
		})
		proseOnly := cfg.Embed.ProseOnly(embedworker.ProseOnlyByDefault(emb.ModelID()))
		if embedder, err = embedworker.New(conn, emb, embedworker.Config{Cache: vc, Gate: gate, ProseOnly: proseOnly}, log); err != nil {
			return err
		}
	}
	idxCfg := indexer.Config{Gate: gate}
	if embedder != nil {
		idxCfg.EmbedModel = embedder.Model()
	}
	idx := indexer.New(conn, idxCfg, log)
	tokens, err := access.NewTokens(cfg.MCP.Tokens)
	if err != nil {
		return fmt.Errorf("config [[mcp.tokens]] %w", err)
	}
	var limiter *resilience.RateLimiter
	if rules := cfg.MCP.RateRules(); rules != nil {
		if limiter, err = resilience.NewRateLimiter(rules, clock.System{}); err != nil {
			return fmt.Errorf("config [mcp.rate_limits]: %w", err)
		}
	}
	// The edge embeds queries with the same model (uncached: queries
	// rarely repeat) and searches only that model's vectors.
	// The edge replays its vectors once the daemon is ready: on two cores
	// the replay slowed the start by a third.
	started := make(chan struct{})
	mat, err := edge.OpenOnWith(ctx, conn.JS, ws.StateDir("edge"), edge.Options{Logger: log.With("role", "edge"), Embedder: emb, Gate: gate, Loading: starting.loading, VectorsAfter: started})
	if err != nil {
		return err
	}
	// Task tools write to the workspace's own repo unless a call names
	// another.
	board := tasks.NewBoard(conn.JS, log.With("role", "tasks"))
	board.SetDurable(conn.Durable)
	// read_context says how far indexing got while files are still to
	// come: on a new workspace the first answers would look final.
	indexing := telemetry.NewIndexing(conn.JS, mat, telemetry.IndexingOptions{Logger: log.With("role", "edge")})
	memories, err := memstore.Open(ctx, conn.JS, nil)
	if err != nil {
		mat.Close()
		return err
	}
	memories.SetDurable(conn.Durable)
	// Edges of one team that share a repo's tasks forward their writes to
	// one of them; a lone daemon holds the lease itself.
	writers := edge.NewTaskWriters(conn.NC, conn.JS, log.With("role", "tasks"))
	edg := edge.New(mat, log.With("role", "edge"), edge.WithBoard(board), edge.WithMemoryStore(memories), edge.WithTaskWriters(writers),
		edge.WithActor("cue-daemon"), edge.WithDefaultRepo(cfg.Workspace.Name), edge.WithProgress(indexing.Progress))

	var httpLn net.Listener
	mcpURL := ""
	if !cfg.MCP.HTTPDisabled {
		httpLn, err = net.Listen("tcp", cfg.MCP.HTTPAddr)
		if err != nil {
			mat.Close()
			return fmt.Errorf("config [mcp] http_addr %s: %w (choose another port, or 127.0.0.1:0 for any free one)", cfg.MCP.HTTPAddr, err)
		}
		mcpURL = "http://" + httpLn.Addr().String() + "/mcp"
	}
	// get_scene reads the workspace's files, which this process has and a
	// team edge does not; os.Root keeps its references inside.
	wsRoot, err := os.OpenRoot(ws.Root)
	if err != nil {
		return fmt.Errorf("open the workspace %s: %w", ws.Root, err)
	}
	defer wsRoot.Close()
	// One instrumented caller answers both transports, so the metrics
	// count every call whichever way it came; the rate limits sit inside
	// it so that their refusals are counted too. The edge itself keeps
	// each identity to its repos.
	metrics := telemetry.NewMetrics()
	var inner tools.Caller = access.RateLimitNaming(foreground(scenes.Tool(edg, wsRoot.FS(), cfg.Workspace.Name, log.With("role", "mcp")), gate), limiter,
		"To allow more, raise [mcp.rate_limits.%s] limit (and burst, window) in .cuedeck/config.toml, or set [mcp] rate_limits_mode = \"off\".", log.With("role", "mcp"))
	var guard *diskGuard
	if srv != nil {
		// A full disk refuses writes at once, rather than after a
		// timeout; space coming back clears the server's write errors.
		var stores []string
		for _, role := range []string{"edge", "ingest", "embed", "transcripts"} {
			stores = append(stores, ws.StateDir(role))
		}
		guard = newDiskGuard(ws.NATSStoreDir(), stores, srv, log.With("role", "disk"))
		inner = guard.wrap(inner)
	}
	caller := metrics.Instrument(inner)
	var reconciled atomic.Bool
	edgeFeeds := telemetry.EdgeProgress(conn.JS, mat, board)
	progress := func() []telemetry.Progress {
		// Not ready while documents the start comparison found lost or
		// different are on their way back: until then some are served as
		// they were, or not at all.
		return append(edgeFeeds(), telemetry.Progress{Feed: "reconcile", Replayed: reconciled.Load(), GatesReady: true})
	}
	mon := telemetry.NewMonitor(progress, telemetry.MonitorOptions{Logger: log.With("role", "edge")})
	metrics.RegisterMonitor(mon)
	metrics.RegisterEdge(mat)
	metrics.RegisterEdgeCache(edg)
	// `cue hook` signals arrive on the workspace's socket; the context the
	// hooks inject is rendered from the same files and decisions.
	var flusher hookserver.Flusher
	if tailer != nil {
		flusher = tailer
	}
	hooks := hookserver.New(hookserver.Options{
		Root: ws.Root, Files: wsRoot.FS(), Decisions: edg, Repo: cfg.Workspace.Name,
		Tasks:    func() ([]scenes.Card, bool) { return activeTasks(board, cfg.Workspace.Name) },
		Revision: func() uint64 { return mat.Revision() + mat.MemoryRevision() + board.Version() },
		Flusher:  flusher, Ready: mat.Ready(), Logger: log.With("role", "hooks"),
	})
	hookConn, err := hooks.Listen()
	if err != nil {
		// The daemon serves without hooks rather than not at all.
		log.Warn("hooks disabled", "err", err)
	}
	mcpSrv := mcpserver.New(caller, mcpserver.Options{Logger: log.With("role", "mcp")})

	// Started in this order, stopped in reverse: ingest stops watching
	// first, the indexer drains its consumer, then the embed worker drains
	// its own, then the query endpoints close, then the edge syncs and
	// closes its Badger. The vector cache, the NATS connection and the
	// embedded server close last (deferred above).
	// A cue_docs replaced under the daemon is refilled from the files
	// once the edge has confirmed it, not at ingest's next comparison.
	mat.OnStartOver(func(bucket string) {
		if bucket == events.DocsBucket {
			ing.CompareNow()
		}
	})
	stopRechecks, err := edge.RecheckOnReplace(conn.NC, mat, board, ing.StreamReplaced)
	if err != nil {
		return err
	}
	defer stopRechecks()
	g := lifecycle.New(ctx, log)
	g.Start("edge", mat.Run)
	g.Start("tasks", board.Run)
	// Stopped after the query service, before the board: forwarded
	// writes still in flight are made and answered.
	g.Start("task-writers", func(ctx context.Context) error { return writers.Run(ctx, edg.Forwarded) })
	g.Start("lag-monitor", mon.Run)
	if guard != nil {
		g.Start("disk-guard", guard.Run)
	}
	g.Start("memory-trim", func(ctx context.Context) error {
		gate.AfterBursts(ctx, 2*time.Second, 200, returnMemory)
		return nil
	})
	g.Start("indexing-progress", indexing.Run)
	queryReady := make(chan struct{})
	g.Start("query", func(ctx context.Context) error {
		return query.Serve(ctx, conn.NC, caller, query.Options{Prefix: servePrefix, Tokens: tokens, Logger: log.With("role", "query"), Ready: func() { close(queryReady) }, Docs: mat.DocSets})
	})
	if httpLn != nil {
		g.Start("mcp-http", func(ctx context.Context) error {
			mux := telemetry.Mux(mcpserver.HTTPHandler(mcpSrv, mcpserver.HTTPOptions{
				Tokens: tokens, AllowedOrigins: cfg.MCP.AllowedOrigins, Logger: log.With("role", "mcp"),
			}), metrics, mon)
			dailyLimit := cfg.Extract.DailyBudgetUSD
			mux.Handle(dashboard.Path, dashboard.Handler(dashboard.Options{
				Caller: caller, Memories: edg, Repos: func() []string {
					names := board.Repos()
					for _, r := range repos {
						names = append(names, r.Name)
					}
					return names
				},
				TaskRepos: board.Repos, Monitor: mon, Metrics: metrics, JetStream: conn.JS, DailyLimitUSD: &dailyLimit,
				Tokens: tokens, AllowedOrigins: cfg.MCP.AllowedOrigins, Logger: log.With("role", "dashboard"),
			}))
			return mcpserver.ServeListener(ctx, httpLn, mux)
		})
	}
	if embedder != nil {
		g.Start("embedder", embedder.Run)
	}
	held := holdDirs(ws)
	g.Start("workspace-lock", func(ctx context.Context) error {
		err := watchLock(ctx, ws, lock, held)
		if err != nil {
			cacheLost.Store(true)
			g.BoundStop(lockLostStopBound)
		}
		return err
	})
	g.Start("indexer", idx.Run)
	g.Start("extractor", xtr.Run)
	g.Start("ingest", ing.Run)
	g.Start("rewatch-on-reconnect", func(ctx context.Context) error {
		// A server restarted in place (after a full disk) leaves the
		// watches waiting for missed heartbeats: re-create them at once.
		reconnected := conn.NC.StatusChanged(nats.CONNECTED)
		defer conn.NC.RemoveStatusListener(reconnected)
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-reconnected:
				mat.Rewatch()
			}
		}
	})
	g.Start("reconcile-readiness", func(ctx context.Context) error {
		awaitReconciled(ctx, conn.JS, ing, mat, board, &reconciled)
		<-ctx.Done() // a component that returns has failed
		return nil
	})
	if tailer != nil {
		g.Start("transcripts", tailer.Run)
	}
	if hookConn != nil {
		g.Start("hooks", func(ctx context.Context) error { return hooks.Serve(ctx, hookConn) })
	}

	// Announce the daemon only once it answers: the query endpoints are
	// registered and the edge has replayed the documents already indexed
	// and the task log.
	starting.say("catching up with the documents and tasks indexed while it was stopped")
	for _, ready := range []<-chan struct{}{queryReady, mat.Ready(), board.Ready(), ing.Compared()} {
		select {
		case <-ready:
		case <-g.Failed():
			return g.Wait()
		case <-ctx.Done():
			return g.Wait()
		}
	}
	endStart()
	info := workspace.DaemonInfo{
		PID: os.Getpid(), Workspace: ws.Root, Repo: cfg.Workspace.Name, NATSURL: natsURL,
		MCPURL: mcpURL, QueryPrefix: servePrefix, TeamQueryPrefix: teamPrefix, StartedAt: time.Now().UTC(), Version: version.Version,
	}
	if err := ws.WriteDaemonInfo(info); err != nil {
		g.StopAll()
		return err
	}
	ws.RemoveStarting()
	defer ws.RemoveDaemonInfo(os.Getpid())
	// Loading the index at start leaves garbage the size of the index.
	returnMemory()
	close(started)
	if o.Ready != nil {
		o.Ready(info)
	}
	return g.Wait()
}

// lockCheckEvery is how often the daemon checks that its cache is still
// the one it locked.
const lockCheckEvery = 2 * time.Second

// lockLostStopBound is how long each component may take to stop once
// the cache is gone.
const lockLostStopBound = 3 * time.Second

// unlessCacheLost runs a deferred close: to its end as usual, but once
// the cache is lost for lockLostStopBound at most, then left behind.
func unlessCacheLost(lost *atomic.Bool, log *slog.Logger, name string, stop func()) {
	if !lost.Load() {
		stop()
		return
	}
	done := make(chan struct{})
	go func() { defer close(done); stop() }()
	select {
	case <-done:
	case <-time.After(lockLostStopBound):
		log.Error("did not stop in time; left behind", "component", name, "after", lockLostStopBound)
	}
}

// watchLock fails when the workspace's lock file is no longer the one
// lock holds, or when a store directory the daemon holds open was deleted
// or replaced: the cache (or part of it) was removed under the daemon,
// its stores are gone from under it, and with the lock gone another
// daemon could start beside it. An embedded NATS server restarted in
// place (after a write error) would come back without its streams, and
// the edges would go on answering from what they hold, ready and wrong.
// Stopping is the honest answer; a new start rebuilds the cache.
func watchLock(ctx context.Context, ws *workspace.Workspace, lock *workspace.Lock, held []heldDir) error {
	t := time.NewTicker(lockCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if !lock.Intact(ws.LockPath()) {
			return fmt.Errorf("the workspace cache %s was deleted or replaced under the running daemon, which stops rather than serve state that is gone: start it again with `cue up`, which rebuilds the cache from the files and the task log", ws.Cache())
		}
		for _, d := range held {
			if !d.intact() {
				return fmt.Errorf("%s was deleted or replaced under the running daemon, which stops rather than serve state that is gone: start it again with `cue up`, which rebuilds it from the files and the task log", d.path)
			}
		}
	}
}

// heldDir is a directory of the cache a store keeps open, as it was when
// the daemon opened it.
type heldDir struct {
	path string
	info os.FileInfo
}

// intact reports whether d's path is still the directory opened. As for
// the lock file, only a missing or different directory counts: a stat
// that fails otherwise is not evidence enough to stop a daemon.
func (d heldDir) intact() bool {
	now, err := os.Stat(d.path)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	return os.SameFile(d.info, now)
}

// holdDirs notes the store directories of ws that exist now and that the
// daemon opened before it runs its services: the embedded NATS server's,
// the edge's store and the vector cache. Ingest and the transcript tailer
// open theirs as they start, and may first move a damaged one aside.
func holdDirs(ws *workspace.Workspace) []heldDir {
	var held []heldDir
	for _, p := range []string{ws.NATSStoreDir(), filepath.Join(ws.NATSStoreDir(), "jetstream"), ws.StateDir("edge"), ws.StateDir("embed")} {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			held = append(held, heldDir{path: p, info: info})
		}
	}
	return held
}

// Caller is how `cue mcp` reaches the tools of the daemon info describes:
// its query service, or, on a laptop joined to a team (info names a team
// prefix), the team's edges through the leaf node first and the daemon
// when no team edge answers: offline, or none runs. log hears which one
// answers whenever that changes. token goes with every call.
func Caller(nc *nats.Conn, info workspace.DaemonInfo, token string, log *slog.Logger) (tools.Caller, error) {
	local, err := query.NewClient(nc, query.ClientOptions{Prefix: info.QueryPrefix, Token: token})
	if err != nil {
		return nil, err
	}
	if info.TeamQueryPrefix == "" {
		return local, nil
	}
	team, err := query.NewClient(nc, query.ClientOptions{Prefix: info.TeamQueryPrefix, Token: token})
	if err != nil {
		return nil, err
	}
	return query.NewFallback(
		query.Route{Name: "team", Prefix: info.TeamQueryPrefix, Caller: team},
		query.Route{Name: "local", Prefix: info.QueryPrefix, Caller: local}, log), nil
}

// startProgress writes what a starting daemon is doing to the
// workspace's starting file, at most a few times a second.
type startProgress struct {
	ws   *workspace.Workspace
	log  *slog.Logger
	mu   sync.Mutex
	last time.Time
}

func newStartProgress(ws *workspace.Workspace, log *slog.Logger) *startProgress {
	return &startProgress{ws: ws, log: log}
}

func (p *startProgress) say(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Now()
	p.log.Info("starting: " + line)
	if err := p.ws.WriteStarting(line); err != nil {
		p.log.Debug("cannot write the starting line", "err", err)
	}
}

// loading is edge.Options.Loading: what the edge is loading, throttled.
func (p *startProgress) loading(what string, done int) {
	p.mu.Lock()
	quiet := time.Since(p.last) < 250*time.Millisecond && done > 0
	p.mu.Unlock()
	if quiet {
		return
	}
	if done > 0 {
		what = fmt.Sprintf("%s: %s", what, humanize.Thousands(done))
	}
	p.say(what)
}

// redeliverAfterUncleanStop hands out again at once what the daemon
// before this one held when it was killed or crashed (unclean is how many
// in a row stopped so), instead of after the consumers' AckWait: files
// in flight would otherwise be indexed half a minute after the restart,
// and transcripts five minutes after. No worker runs yet and the lock
// keeps any other daemon out, so nothing else holds those messages. Only
// after the first unclean stop in a row: handing them out again starts
// their delivery counts again, and a message that stops the daemon each
// time it is handled must reach MaxDeliver to be dead-lettered.
func redeliverAfterUncleanStop(ctx context.Context, js jetstream.JetStream, settings bus.Settings, unclean int, log *slog.Logger) error {
	switch {
	case unclean == 0:
		return nil
	case unclean > 1:
		log.Warn("the daemon stopped without finishing several times in a row: what it held is handed out again only after the ack wait, so that a message that stops it each time is dead-lettered", "unclean_stops", unclean)
		return nil
	}
	held, err := bus.RedeliverHeld(ctx, js, bus.DeclaredTopology(settings).Consumers, log)
	if err != nil {
		return err
	}
	if held > 0 {
		log.Info("the daemon before this one stopped without finishing (killed or crashed): what it was working on is handed out again now", "messages", held)
	}
	return nil
}

// Heap limits: garbage may grow the heap by a quarter of its live size,
// and to heapFloor whatever the live size. Go's default lets it double:
// with an index of a few hundred MiB, the daemon held twice that while it
// embedded or indexed. At half again and 448 MiB, indexing 5,000 Go files
// peaked at 475-483 MiB of RSS; at a quarter and 320 MiB, with less
// garbage made per file, at 384-397 MiB in the same time to searchable.
const (
	heapFloor      = 320 << 20
	heapGrowthPct  = 25
	heapLimitEvery = 2 * time.Second
)

// gcPercent is the garbage collector's target while the daemon runs:
// the heap may grow to three times its live size before a collection,
// where Go's default is twice, but never past the limit limitHeap keeps.
// Indexing makes garbage fast and the daemon is CPU-bound while it does:
// at the default, collections took a tenth of its CPU; at 200, indexing
// 5,000 Go files went from 573-599 to 632-658 files/s with the same peak
// RSS (the limit binds first). A small workspace's heap stays small
// either way.
const gcPercent = 200

// limitHeapFromStart sets the garbage collector's target and, unless the
// user set GOGC or GOMEMLIMIT, keeps the memory limit in step with the
// live heap (limitHeap) until the returned stop is called, which also
// restores the runtime's earlier settings.
func limitHeapFromStart(ctx context.Context, log *slog.Logger) (stop func()) {
	var undo []func()
	if os.Getenv("GOGC") == "" {
		before := debug.SetGCPercent(gcPercent)
		undo = append(undo, func() { debug.SetGCPercent(before) })
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The first limit is set before returning, so the stores opened
		// next are under it.
		first := heapLimit()
		before := debug.SetMemoryLimit(first)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			limitHeap(ctx, log, first)
		}()
		undo = append(undo, func() {
			cancel()
			<-done
			debug.SetMemoryLimit(before)
		})
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// heapLimit is the larger of heapFloor and the live heap plus
// heapGrowthPct.
func heapLimit() int64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	live := int64(sample[0].Value.Uint64())
	return max(heapFloor, live+live*heapGrowthPct/100)
}

// limitHeap keeps the Go runtime's soft memory limit at heapLimit, set
// (the limit in force, or 0 for none yet) moving with it, until ctx ends.
func limitHeap(ctx context.Context, log *slog.Logger, set int64) {
	t := time.NewTicker(heapLimitEvery)
	defer t.Stop()
	for {
		limit := heapLimit()
		// Only moves of a tenth or more: each one is a runtime call.
		if set == 0 || limit > set+set/10 || limit < set-set/10 {
			debug.SetMemoryLimit(limit)
			log.Debug("heap limit", "limit_mib", limit>>20)
			set = limit
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// returnMemory gives the heap's garbage back to the system. Twice: the
// buffers NATS's file store keeps in sync.Pools (tens of MiB while a
// repository is indexed) survive one collection.
func returnMemory() {
	debug.FreeOSMemory()
	debug.FreeOSMemory()
}

// foreground counts each tool call as foreground work at gate.
func foreground(c tools.Caller, gate *priority.Gate) tools.Caller {
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		defer gate.Begin()()
		return c.Call(ctx, tool, args)
	})
}

func splitListen(listen string) (string, int, error) {
	if listen == "" {
		return "127.0.0.1", 0, nil
	}
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, err
	}
	var port int
	if _, err := fmt.Sscanf(portStr, "%d", &port); err != nil {
		return "", 0, fmt.Errorf("port %q is not a number", portStr)
	}
	return host, port, nil
}

// awaitReconciled sets done once what ingest's comparison at start found
// lost or different in cue_docs is indexed again, and the edge and the
// task board have applied cue_docs and the task log up to where they
// stood then (a card published again brings its task back into the log).
func awaitReconciled(ctx context.Context, js jetstream.StreamManager, ing *ingest.Service, mat *edge.Materialiser, board *tasks.Board, done *atomic.Bool) {
	select {
	case <-ing.Republished():
	case <-ctx.Done():
		return
	}
	for {
		head, err := telemetry.StreamHead(js, "KV_"+events.DocsBucket)(ctx)
		if err == nil {
			err = mat.WaitRevision(ctx, head)
		}
		if err == nil {
			err = board.Sync(ctx)
		}
		if err == nil {
			done.Store(true)
			return
		}
		// The feeds' own lines in /readyz say what cannot be reached.
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// activeTasks are repo's tasks whose status is active, as the cards the
// hook context picks its active task from; ok is false until board has
// replayed the task log.
func activeTasks(board *tasks.Board, repo string) (active []scenes.Card, ok bool) {
	select {
	case <-board.Ready():
	default:
		return nil, false
	}
	board.View(repo, func(all map[string]events.Task) {
		for _, t := range all {
			if !strings.EqualFold(t.Status, "active") {
				continue
			}
			active = append(active, scenes.Card{ID: t.ID, Path: card.PathOf(t), Title: t.Title, Status: t.Status, DependsOn: t.DependsOn})
		}
	})
	slices.SortFunc(active, func(a, b scenes.Card) int { return strings.Compare(a.ID, b.ID) })
	return active, true
}
