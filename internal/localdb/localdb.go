// Package localdb opens the Badger databases a CueDeck process keeps on
// its own disk (ingest state, the edge store, the vector cache). Several
// share one laptop process, so all start from the same small footprint and
// send Badger's warnings and errors to slog.
package localdb

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// Options are Badger's defaults for dir with small memtables and caches,
// one version per key and two compactors, logging to logger (nil: none):
// enough for the per-file state ingest and the tailer keep, whose entries
// are a few hundred bytes. Callers with more data adjust (WithLargerData,
// in-memory).
func Options(dir string, logger *slog.Logger) badger.Options {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Each memtable's arena is allocated whole: four stores of two 8 MiB
	// memtables were a tenth of the daemon's memory.
	return badger.DefaultOptions(dir).
		WithMemTableSize(2 << 20).
		WithValueThreshold(64 << 10). // below a 2 MiB memtable's largest batch
		WithNumMemtables(2).
		WithBlockCacheSize(2 << 20).
		WithIndexCacheSize(1 << 20).
		WithValueLogFileSize(64 << 20).
		WithNumVersionsToKeep(1).
		WithNumCompactors(2).
		// A garbled block or value is an error, never data: without the
		// checks Badger serves what it reads, and compacts a garbled
		// table into a new one with good checksums. Each costs a CRC of
		// what is read from disk (the caches hold checked data).
		WithChecksumVerificationMode(options.OnBlockRead).
		WithVerifyValueChecksum(true).
		WithLogger(badgerLogger{logger})
}

// WithLargerData sizes opts for stores of documents or vectors: larger
// memtables, so a batch of large entries fits one transaction, and a
// larger block cache.
func WithLargerData(opts badger.Options) badger.Options {
	return opts.WithMemTableSize(8 << 20).WithBlockCacheSize(16 << 20).WithIndexCacheSize(8 << 20)
}

// badgerLogger routes Badger's warnings and errors to slog; its chatter
// below warning level is dropped.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any) {
	b.l.Error(strings.TrimSpace(fmt.Sprintf(f, a...)), "component", "badger")
}

func (b badgerLogger) Warningf(f string, a ...any) {
	b.l.Warn(strings.TrimSpace(fmt.Sprintf(f, a...)), "component", "badger")
}
func (badgerLogger) Infof(string, ...any)  {}
func (badgerLogger) Debugf(string, ...any) {}

// closeGrace is how long Close keeps waiting once the store's directory
// is gone.
const closeGrace = 2 * time.Second

// Close closes db. Badger retries a failed memtable flush forever, so a
// store whose directory was deleted under it would never close and would
// hold up the process's stop: once the directory is gone, Close stops
// waiting after closeGrace and returns an error naming it, leaving the
// store's goroutines behind (the process is stopping).
func Close(db *badger.DB) error {
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	opts := db.Opts()
	if opts.InMemory {
		return <-done
	}
	t := time.NewTicker(closeGrace / 8)
	defer t.Stop()
	var goneSince time.Time
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
		}
		if _, err := os.Stat(opts.Dir); !errors.Is(err, fs.ErrNotExist) {
			goneSince = time.Time{}
			continue
		}
		if goneSince.IsZero() {
			goneSince = time.Now()
		}
		if time.Since(goneSince) >= closeGrace {
			return fmt.Errorf("the store in %s was deleted while it was open; left it unclosed (its unsaved writes are lost; the next start rebuilds it)", opts.Dir)
		}
	}
}
