package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/version"
)

// FormatFile, in the cache, holds the data format (version.DataFormat) of
// what the cache holds. A cache with content and no FormatFile predates
// versioning: format 0.
const FormatFile = "FORMAT"

// NewerFormatError means the workspace was written by a newer CueDeck,
// whose data this binary may misread; nothing was changed.
type NewerFormatError struct {
	What   string // "workspace cache at …" or "stream CUE_INGEST"
	Format int
}

func (e *NewerFormatError) Error() string {
	return fmt.Sprintf("%s: this workspace was written by a newer CueDeck (data format %d, this binary knows %d); upgrade cue (cue upgrade) or use a newer binary", e.What, e.Format, version.DataFormat)
}

// FormatPath is the cache's format marker.
func (w *Workspace) FormatPath() string { return filepath.Join(w.Cache(), FormatFile) }

// keptOnMigration are the cache entries a format change leaves in place:
// the daemon's lock (held while migrating), the log a background start
// writes to, and the embedded NATS store, which holds the streams the
// rest of the cache is rebuilt from (they carry their own format).
var keptOnMigration = map[string]bool{"lock": true, "daemon.log": true, "nats": true, FormatFile: true}

// CacheFormat returns the cache's data format: the marker's number, 0 for
// a cache with content but no marker, and version.DataFormat for a cache
// that does not exist or holds nothing yet.
func (w *Workspace) CacheFormat() (int, error) {
	data, err := os.ReadFile(w.FormatPath())
	if err == nil {
		n, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("workspace: %s holds %q, not a data format number; remove it (the cache is then treated as format 0 and rebuilt)", w.FormatPath(), strings.TrimSpace(string(data)))
		}
		return n, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("workspace: %w", err)
	}
	entries, err := os.ReadDir(w.Cache())
	if errors.Is(err, os.ErrNotExist) {
		return version.DataFormat, nil
	}
	if err != nil {
		return 0, fmt.Errorf("workspace: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); n != "lock" && n != "daemon.log" && !strings.HasPrefix(n, ".") {
			return 0, nil
		}
	}
	return version.DataFormat, nil
}

// CheckCacheFormat returns a *NewerFormatError if the cache was written by
// a newer CueDeck. It only reads, so callers run it before touching the
// cache at all.
func (w *Workspace) CheckCacheFormat() error {
	f, err := w.CacheFormat()
	if err != nil {
		return err
	}
	if f > version.DataFormat {
		return &NewerFormatError{What: "workspace cache at " + w.Cache(), Format: f}
	}
	return nil
}

// PrepareCache makes the cache one of this binary's format; the daemon
// calls it holding the workspace lock. A newer format is refused with a
// *NewerFormatError and nothing is touched. An older one is rebuilt: its
// derived state (everything but the lock, the daemon log and the NATS
// store) is moved into a format<N>-<time> directory inside the cache, and
// the returned message says so; the roles then rebuild from the streams.
// The marker is written atomically, once the cache is of this format.
func (w *Workspace) PrepareCache(now time.Time) (moved string, err error) {
	f, err := w.CacheFormat()
	if err != nil {
		return "", err
	}
	if f > version.DataFormat {
		return "", &NewerFormatError{What: "workspace cache at " + w.Cache(), Format: f}
	}
	if f < version.DataFormat {
		if moved, err = w.moveCacheAside(f, now); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(w.FormatPath()); err == nil && f == version.DataFormat {
		return moved, nil
	}
	return moved, writeFileAtomic(w.FormatPath(), []byte(strconv.Itoa(version.DataFormat)+"\n"), 0o644)
}

func (w *Workspace) moveCacheAside(format int, now time.Time) (string, error) {
	entries, err := os.ReadDir(w.Cache())
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	aside := filepath.Join(w.Cache(), fmt.Sprintf("format%d-%s", format, now.UTC().Format("20060102T150405Z")))
	if err := os.Mkdir(aside, 0o755); err != nil {
		return "", fmt.Errorf("workspace: move the format %d cache aside: %w", format, err)
	}
	for _, e := range entries {
		n := e.Name()
		if keptOnMigration[n] || strings.HasPrefix(n, "format") && e.IsDir() {
			continue
		}
		if err := os.Rename(filepath.Join(w.Cache(), n), filepath.Join(aside, n)); err != nil {
			return "", fmt.Errorf("workspace: move the format %d cache aside: %w", format, err)
		}
	}
	// The old marker says what the moved state was; a new one follows.
	if format > 0 {
		if err := os.Rename(w.FormatPath(), filepath.Join(aside, FormatFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("workspace: %w", err)
		}
	}
	return aside, nil
}
