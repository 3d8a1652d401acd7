// Command mcp-edge materialises the cue_docs bucket into a local store and
// answers agents: MCP over Streamable HTTP and the same tools over NATS
// request/reply. Run any number; each rebuilds from JetStream.
// --embed-model (CUE_EMBED_MODEL) picks the model of semantic search:
// builtin (default), ollama:<model> or none for keyword search only; it
// must name the indexers' model, whose vectors the edge searches.
// --tokens names a TOML file of [[tokens]] (name, token or sha256, repos):
// with it, every HTTP and NATS call needs a bearer token, and only then may
// --http bind beyond loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/daemon"
	"github.com/cuedeck/cuedeck/internal/dashboard"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/lifecycle"
	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/memstore"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/role"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/core/tiercache"
)

func main() {
	if role.AsksVersion(os.Args[1:]) {
		if err := version.Print(os.Stdout, "mcp-edge", os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "mcp-edge:", err)
			os.Exit(2)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-edge:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("mcp-edge", flag.ExitOnError)
	rf := role.Register(fs)
	stateDir := fs.String("state-dir", "edge-state", "directory of the edge's local store (rebuildable)")
	httpAddr := fs.String("http", "127.0.0.1:8080", "MCP Streamable HTTP address; empty disables")
	prefix := fs.String("query-prefix", daemon.QueryPrefix, "subject prefix of the NATS query service")
	model := fs.String("embed-model", envOr("CUE_EMBED_MODEL", "builtin"), `model of semantic search, the indexers' model: "builtin" (USE Lite, in the binary), "ollama:<model>" or "none" (keyword only)`)
	defaultRepo := fs.String("default-repo", "", "repo of task tool calls that name none (default: the first repo with tasks)")
	ollamaHost := fs.String("ollama-host", "", "Ollama server for ollama:<model> (default $OLLAMA_HOST, else http://127.0.0.1:11434)")
	tokensFile := fs.String("tokens", envOr("CUE_TOKENS_FILE", ""), "TOML file of [[tokens]] name, token (or sha256), repos; required to bind --http beyond loopback")
	origins := fs.String("allowed-origins", "", "comma-separated browser origins admitted besides the edge's own")
	rateLimits := fs.String("rate-limits", "seed", `per-tool, per-client limits: "seed" (seed 002's table) or "off"`)
	cacheMB := fs.Int("cache-mb", tiercache.DefaultMaxBytes>>20, "cap of the edge's answer cache in MiB; 0 turns it off")
	fs.Parse(os.Args[1:])
	log, err := rf.Logger("mcp-edge")
	if err != nil {
		return err
	}
	embedder, err := provider.Open(*model, provider.Config{OllamaHost: *ollamaHost, Logger: log})
	if err != nil {
		return fmt.Errorf("--embed-model: %w", err)
	}
	tokens, err := access.LoadTokensFile(*tokensFile)
	if err != nil {
		return fmt.Errorf("--tokens: %w", err)
	}
	if *httpAddr != "" {
		if err := access.CheckBind(*httpAddr, tokens); err != nil {
			return fmt.Errorf("--http: %w", err)
		}
	}
	var limiter *resilience.RateLimiter
	switch *rateLimits {
	case "seed":
		limiter, _ = resilience.NewRateLimiter(nil, clock.System{})
	case "off":
	default:
		return fmt.Errorf(`--rate-limits %q: use "seed" or "off"`, *rateLimits)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := rf.Connect(ctx, "cue-mcp-edge", log)
	if err != nil {
		return err
	}
	defer conn.Close() // last: after the edge has closed its store
	mat, err := edge.OpenOnWith(ctx, conn.JS, *stateDir, edge.Options{Logger: log, Embedder: embedder})
	if err != nil {
		return err
	}
	board := tasks.NewBoard(conn.JS, log)
	memories, err := memstore.Open(ctx, conn.JS, nil)
	if err != nil {
		mat.Close()
		return err
	}
	host, _ := os.Hostname()
	cache := edge.WithCache(tiercache.Config{MaxBytes: int64(*cacheMB) << 20})
	if *cacheMB <= 0 {
		cache = edge.WithoutCache()
	}
	// read_context says how far indexing got while files are still to come.
	indexing := telemetry.NewIndexing(conn.JS, mat, telemetry.IndexingOptions{Logger: log})
	// The edges sharing a repo forward its task writes to one of them.
	writers := edge.NewTaskWriters(conn.NC, conn.JS, log)
	edg := edge.New(mat, log, edge.WithBoard(board), edge.WithMemoryStore(memories), edge.WithTaskWriters(writers), edge.WithActor("mcp-edge@"+host), edge.WithDefaultRepo(*defaultRepo), cache,
		edge.WithProgress(indexing.Progress))
	// Both transports answer through one instrumented caller, so the
	// metrics count every call whichever way it came, the rate limits'
	// refusals included.
	metrics := telemetry.NewMetrics()
	caller := metrics.Instrument(access.RateLimitNaming(edg, limiter, "Seed 002's limits apply per token on this edge; to lift them, run it with --rate-limits off.", log))
	mon := telemetry.NewMonitor(telemetry.EdgeProgress(conn.JS, mat, board), telemetry.MonitorOptions{Logger: log})
	metrics.RegisterMonitor(mon)
	metrics.RegisterEdge(mat)
	metrics.RegisterEdgeCache(edg)
	// Started in order, stopped in reverse: HTTP and the query service stop
	// answering before the edge syncs and closes its store.
	stopRechecks, err := edge.RecheckOnReplace(conn.NC, mat, board, nil)
	if err != nil {
		mat.Close()
		return err
	}
	defer stopRechecks()
	g := lifecycle.New(ctx, log)
	g.Start("edge", mat.Run)
	g.Start("tasks", board.Run)
	g.Start("task-writers", func(ctx context.Context) error { return writers.Run(ctx, edg.Forwarded) })
	g.Start("lag-monitor", mon.Run)
	g.Start("indexing-progress", indexing.Run)
	g.Start("query", func(ctx context.Context) error {
		return query.Serve(ctx, conn.NC, caller, query.Options{Prefix: *prefix, Tokens: tokens, Logger: log, Docs: mat.DocSets})
	})
	if *httpAddr != "" {
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			return fmt.Errorf("--http %s: %w", *httpAddr, err)
		}
		base := "http://" + ln.Addr().String()
		log.Info("serving MCP and operations endpoints", "url", base+telemetry.PathMCP, "dashboard", base+dashboard.Path, "healthz", base+telemetry.PathHealth, "readyz", base+telemetry.PathReady, "metrics", base+telemetry.PathMetrics)
		srv := mcpserver.New(caller, mcpserver.Options{Logger: log})
		h := mcpserver.HTTPHandler(srv, mcpserver.HTTPOptions{Tokens: tokens, AllowedOrigins: splitList(*origins), Logger: log})
		mux := telemetry.Mux(h, metrics, mon)
		mux.Handle(dashboard.Path, dashboard.Handler(dashboard.Options{
			Caller: caller, Memories: edg, Repos: func() []string { return append(board.Repos(), *defaultRepo) }, TaskRepos: board.Repos,
			Monitor: mon, Metrics: metrics, JetStream: conn.JS,
			Tokens: tokens, AllowedOrigins: splitList(*origins), Logger: log,
		}))
		g.Start("mcp-http", func(ctx context.Context) error {
			return mcpserver.ServeListener(ctx, ln, mux)
		})
	}
	return g.Wait()
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
