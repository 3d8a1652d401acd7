// Command indexer runs indexer workers against a NATS cluster: file events
// in, DocRecords out into the cue_docs bucket. Run any number of them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/role"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "indexer:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("indexer", flag.ExitOnError)
	rf := role.Register(fs)
	concurrency := fs.Int("concurrency", 4, "files indexed at once")
	fs.Parse(os.Args[1:])
	log, err := rf.Logger("indexer")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := rf.Connect(ctx, "cue-indexer", log)
	if err != nil {
		return err
	}
	// Shutdown order: the worker drains its consumer (Run returns once
	// in-flight files are written and acked), then the connection closes.
	defer conn.Close()
	log.Info("indexer running", "nats", rf.NATSURL, "concurrency", *concurrency)
	return indexer.New(conn, indexer.Config{Concurrency: *concurrency}, log).Run(ctx)
}
