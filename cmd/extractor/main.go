// Command extractor runs extractor workers against a NATS cluster:
// transcript batches in, deduplicated memories out into the cue_memories
// bucket, extracted by an Ollama model within a daily budget shared by
// every extractor, or by rules. Run any number of them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/cuedeck/cuedeck/internal/extractor"
	"github.com/cuedeck/cuedeck/internal/llm"
	"github.com/cuedeck/cuedeck/internal/role"
	"github.com/cuedeck/cuedeck/internal/version"
)

func main() {
	if role.AsksVersion(os.Args[1:]) {
		if err := version.Print(os.Stdout, "extractor", os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "extractor:", err)
			os.Exit(2)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "extractor:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("extractor", flag.ExitOnError)
	rf := role.Register(fs)
	workers := fs.Int("workers", 2, "transcript batches extracted at once")
	llmSpec := fs.String("llm", envOr("CUE_LLM", "none"), `extraction model: "ollama:<model>" or "none" for rules only (env CUE_LLM)`)
	ollamaHost := fs.String("ollama-host", os.Getenv("OLLAMA_HOST"), "Ollama server (default OLLAMA_HOST, else http://127.0.0.1:11434)")
	daily := fs.Float64("daily-budget-usd", envFloat("CUE_DAILY_BUDGET_USD", 0), "LLM spend per UTC day shared by all extractors; 0 disables (env CUE_DAILY_BUDGET_USD)")
	priceIn := fs.Float64("price-in", envFloat("CUE_PRICE_IN_PER_MTOK", 0), "USD per million prompt tokens; 0 for a local model (env CUE_PRICE_IN_PER_MTOK)")
	priceOut := fs.Float64("price-out", envFloat("CUE_PRICE_OUT_PER_MTOK", 0), "USD per million output tokens (env CUE_PRICE_OUT_PER_MTOK)")
	callTimeout := fs.Duration("call-timeout", 3*time.Minute, "longest one LLM extraction may take before the batch is extracted by rules")
	fs.Parse(os.Args[1:])
	log, err := rf.Logger("extractor")
	if err != nil {
		return err
	}
	ext, err := llm.Open(*llmSpec, llm.OpenConfig{OllamaHost: *ollamaHost, CallTimeout: *callTimeout, Logger: log})
	if err != nil {
		return fmt.Errorf("--llm: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := rf.Connect(ctx, "cue-extractor", log)
	if err != nil {
		return err
	}
	// Shutdown order: the workers drain the consumer (Run returns once the
	// batches in hand are stored and acked), then the connection closes.
	defer conn.Close()

	svc, err := extractor.New(conn, ext, extractor.Config{
		Concurrency:     *workers,
		DailyUSD:        *daily,
		PriceInPerMTok:  *priceIn,
		PriceOutPerMTok: *priceOut,
		CallTimeout:     *callTimeout,
		MaxDeliver:      rf.Settings().MaxDeliver,
	}, log)
	if err != nil {
		return err
	}
	log.Info("extractor starting", "nats", rf.NATSURL, "workers", *workers, "llm", *llmSpec, "daily_budget_usd", *daily)
	return svc.Run(ctx)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envFloat(key string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(key), 64); err == nil {
		return v
	}
	return def
}
