// Package localdb opens the Badger databases a CueDeck process keeps on
// its own disk (ingest state, the edge store, the vector cache). Several
// share one laptop process, so all start from the same small footprint and
// send Badger's warnings and errors to slog.
package localdb

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// Options are Badger's defaults for dir with small memtables and caches,
// one version per key and two compactors, logging to logger (nil: none).
// Callers adjust what their data needs (a bigger block cache, in-memory).
func Options(dir string, logger *slog.Logger) badger.Options {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return badger.DefaultOptions(dir).
		WithMemTableSize(8 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(8 << 20).
		WithIndexCacheSize(4 << 20).
		WithValueLogFileSize(64 << 20).
		WithNumVersionsToKeep(1).
		WithNumCompactors(2).
		WithLogger(badgerLogger{logger})
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
