// Command indexer runs indexer workers against a NATS cluster: file events
// in, DocRecords out into the cue_docs bucket. With an embedding model it
// asks for each record's vectors and, unless told not to, runs embed
// workers beside, which write them into cue_vectors. Run any number of
// them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/cuedeck/cuedeck/internal/embed/cache"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/embedworker"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/role"
	"github.com/cuedeck/cuedeck/internal/version"
)

func main() {
	if role.AsksVersion(os.Args[1:]) {
		if err := version.Print(os.Stdout, "indexer", os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "indexer:", err)
			os.Exit(2)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "indexer:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("indexer", flag.ExitOnError)
	rf := role.Register(fs)
	concurrency := fs.Int("concurrency", 16, "files indexed at once")
	embedModel := fs.String("embed-model", envOr("CUE_EMBED_MODEL", provider.Builtin), `embedding model: "builtin", "ollama:<model>" or "none" (env CUE_EMBED_MODEL)`)
	ollamaHost := fs.String("ollama-host", "", "Ollama server for ollama: models (default OLLAMA_HOST, else http://127.0.0.1:11434)")
	embedWorkers := fs.Int("embed-workers", 2, "embed requests handled at once in this process; 0 runs no embed worker (another process does)")
	embedCache := fs.String("embed-cache", os.Getenv("CUE_EMBED_CACHE"), "Badger directory caching vectors across restarts (env CUE_EMBED_CACHE; empty: no cache)")
	embedFiles := fs.String("embed-files", "auto", `files embedded: "prose" (markdown, cards, text documents), "all", or "auto" (prose with the built-in model, which is near random on code; all with Ollama models)`)
	fs.Parse(os.Args[1:])
	if *embedFiles != "auto" && *embedFiles != "prose" && *embedFiles != "all" {
		return fmt.Errorf(`--embed-files %q: give "prose", "all" or "auto"`, *embedFiles)
	}
	log, err := rf.Logger("indexer")
	if err != nil {
		return err
	}
	emb, err := provider.Open(*embedModel, provider.Config{OllamaHost: *ollamaHost, Logger: log})
	if err != nil {
		return fmt.Errorf("--embed-model: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := rf.Connect(ctx, "cue-indexer", log)
	if err != nil {
		return err
	}
	// Shutdown order: the workers drain their consumers (Run returns once
	// in-flight messages are written and acked), the vector cache closes,
	// then the connection.
	defer conn.Close()

	cfg := indexer.Config{Concurrency: *concurrency}
	g, gctx := errgroup.WithContext(ctx)
	if emb != nil {
		cfg.EmbedModel = emb.ModelID()
		if *embedWorkers > 0 {
			ecfg := embedworker.Config{Concurrency: *embedWorkers}
			ecfg.ProseOnly = *embedFiles == "prose" || *embedFiles == "auto" && embedworker.ProseOnlyByDefault(emb.ModelID())
			if *embedCache != "" {
				vc, err := cache.Open(*embedCache, log)
				if err != nil {
					return err
				}
				defer vc.Close()
				ecfg.Cache = vc
			}
			ew, err := embedworker.New(conn, emb, ecfg, log)
			if err != nil {
				return err
			}
			g.Go(func() error { return ew.Run(gctx) })
		}
	}
	log.Info("indexer running", "nats", rf.NATSURL, "concurrency", *concurrency, "embed_model", cfg.EmbedModel, "embed_workers", *embedWorkers)
	g.Go(func() error { return indexer.New(conn, cfg, log).Run(gctx) })
	return g.Wait()
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
