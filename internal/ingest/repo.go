package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// repo is one repository being ingested: its scanner, its watcher and its
// counters. Paths inside it are slash-separated and relative to its root.
type repo struct {
	s       *Service
	name    string
	absRoot string
	rules   *ignoreRules
	logger  *slog.Logger

	// Set by Service.Run before any goroutine starts.
	root    *os.Root
	enqueue func(context.Context, job) bool

	firstScan chan struct{}

	// Scan requests from the watcher to the scanner: directory prefixes to
	// rescan, "" for the whole repo.
	reqMu sync.Mutex
	reqs  map[string]bool
	wake  chan struct{}

	watcher     *fsnotify.Watcher // nil when watching is unavailable; owned by run
	watching    atomic.Bool
	watchFailed atomic.Bool

	mu    sync.Mutex
	stats RepoStats
}

func newRepo(s *Service, rc RepoConfig) (*repo, error) {
	abs, err := filepath.Abs(rc.Root)
	if err != nil {
		return nil, fmt.Errorf("ingest: repo %q: root %s: %w", rc.Name, rc.Root, err)
	}
	exclude := s.cfg.Exclude
	// The state's own files must never be ingested: every publish writes
	// them, which would be seen as a change to publish.
	if stateDir, err := filepath.Abs(s.cfg.StateDir); err == nil {
		if rel, err := filepath.Rel(abs, stateDir); err == nil && rel != "." && filepath.IsLocal(rel) {
			exclude = append(slices.Clone(exclude), "/"+filepath.ToSlash(rel)+"/")
		}
	}
	return &repo{
		s:         s,
		name:      rc.Name,
		absRoot:   abs,
		rules:     newIgnoreRules(exclude),
		logger:    s.logger.With("repo", rc.Name),
		firstScan: make(chan struct{}),
		reqs:      make(map[string]bool),
		wake:      make(chan struct{}, 1),
		stats:     RepoStats{Repo: rc.Name, Skipped: make(map[events.SkipReason]int64)},
	}, nil
}

func (r *repo) open() error {
	root, err := os.OpenRoot(r.absRoot)
	if err != nil {
		return fmt.Errorf("ingest: repo %q: open root %s: %w (does the directory still exist?)", r.name, r.absRoot, err)
	}
	r.root = root
	return nil
}

// run scans the repo, then keeps it in sync until ctx ends.
func (r *repo) run(ctx context.Context) {
	w, err := newWatcher()
	if err != nil {
		r.watchUnavailable(err)
	} else {
		r.watcher = w
		r.watching.Store(true)
	}
	var wg sync.WaitGroup
	if w != nil {
		wg.Go(func() { r.watchLoop(ctx, w) })
	}
	r.scanLoop(ctx)
	wg.Wait()
	if w != nil {
		if err := w.Close(); err != nil {
			r.logger.Warn("ingest: close file watcher", "err", err)
		}
	}
}

// watchUnavailable switches the repo to periodic rescans, once.
func (r *repo) watchUnavailable(err error) {
	if !r.watchFailed.CompareAndSwap(false, true) {
		return
	}
	r.watching.Store(false)
	r.logger.Error("ingest: file watching failed; falling back to rescanning periodically. "+
		"On Linux raise the inotify limits, e.g. sudo sysctl fs.inotify.max_user_watches=524288 fs.inotify.max_user_instances=1024, then restart ingest",
		"err", err, "rescan_every", r.s.cfg.PollInterval)
}

// scanLoop runs the first full scan, then the scans the watcher requests,
// and periodic full scans while watching is unavailable.
func (r *repo) scanLoop(ctx context.Context) {
	r.scan(ctx, "")
	if ctx.Err() == nil {
		r.mu.Lock()
		r.stats.ScanDone = true
		r.mu.Unlock()
	}
	close(r.firstScan)
	var tick <-chan time.Time
	for {
		if tick == nil && r.watchFailed.Load() {
			t := time.NewTicker(r.s.cfg.PollInterval)
			defer t.Stop()
			tick = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-tick:
			r.request("")
		}
		for _, p := range r.takeRequests() {
			if ctx.Err() != nil {
				return
			}
			r.scan(ctx, p)
		}
	}
}

// signal wakes whoever waits on ch, a channel of one slot, unless a wake
// is pending already.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// request asks the scanner to rescan dir ("" for the whole repo).
func (r *repo) request(dir string) {
	r.reqMu.Lock()
	r.reqs[dir] = true
	r.reqMu.Unlock()
	signal(r.wake)
}

// takeRequests returns the pending scan requests, dropping those another
// request covers.
func (r *repo) takeRequests() []string {
	r.reqMu.Lock()
	reqs := r.reqs
	r.reqs = make(map[string]bool)
	r.reqMu.Unlock()
	if reqs[""] {
		return []string{""}
	}
	dirs := slices.Sorted(maps.Keys(reqs))
	out := dirs[:0]
	for _, d := range dirs {
		if n := len(out); n > 0 && strings.HasPrefix(d, out[n-1]+"/") {
			continue
		}
		out = append(out, d)
	}
	return out
}

// scan walks dir ("" for the whole repo), hands every file found to the
// publishers, then hands them every recorded file under dir the walk did not
// find (deleted, or now ignored), and waits until all were handled.
func (r *repo) scan(ctx context.Context, dir string) {
	start := time.Now()
	full := dir == ""
	if full {
		r.mu.Lock()
		r.stats.Scanning = true
		r.mu.Unlock()
		info, err := r.root.ReadFile(filepath.Join(".git", "info", "exclude"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.logger.Warn("ingest: cannot read .git/info/exclude; its patterns are not applied", "err", err)
		}
		r.rules.setInfoExclude(info)
	}
	w := &walk{seen: make(map[string]bool), visited: make(map[string]bool)}
	var report *scanReport // nil methods do nothing
	if full {
		report = r.reportScan(ctx, w)
	}
	if r.walkable(dir) {
		r.walkDir(ctx, w, dir)
	}
	// The whole listing comes before the first publish, so that the files
	// still to come are known (and reported) from the start.
	report.listed(ctx, len(w.found))
	for _, p := range w.found {
		w.jobs.Add(1)
		if !r.enqueue(ctx, job{repo: r, path: p, walked: true, walk: w}) {
			w.jobs.Done()
			break
		}
	}
	recorded, err := r.s.state.paths(r.name, dir)
	if err != nil {
		r.logger.Error("ingest: cannot list ingest state; deletions are not detected in this scan", "err", err)
	}
	for _, p := range recorded {
		if w.seen[p] {
			continue
		}
		w.jobs.Add(1)
		if !r.enqueue(ctx, job{repo: r, path: p, walk: w}) {
			w.jobs.Done()
			break
		}
	}
	w.jobs.Wait()
	report.finish(ctx)
	if !full {
		return
	}
	if ctx.Err() == nil {
		r.rules.retainDirs(w.visited)
	}
	took := time.Since(start)
	r.mu.Lock()
	r.stats.Scanning = false
	r.stats.FilesSeen = len(w.seen)
	r.stats.LastScan = took
	r.mu.Unlock()
	if ctx.Err() == nil {
		r.logger.Info("ingest: scan done", "files", len(w.seen), "took", took)
	}
}

// walkable reports whether dir is a real, not ignored directory of the repo.
func (r *repo) walkable(dir string) bool {
	if dir == "" {
		return true
	}
	fi, err := r.root.Lstat(osPath(dir))
	return err == nil && fi.IsDir() && !r.rules.ignored(dir, true) && !r.underSymlink(dir)
}

type walk struct {
	seen    map[string]bool // files found, not ignored
	found   []string        // the same, in walk order
	visited map[string]bool // directories walked
	jobs    sync.WaitGroup
	// handled counts the jobs of found files done, for the scan's
	// progress report.
	handled atomic.Int64
}

// jobDone counts one of the walk's jobs done: a found file's when found.
func (w *walk) jobDone(found bool) {
	if found {
		w.handled.Add(1)
	}
	w.jobs.Done()
}

func (r *repo) walkDir(ctx context.Context, w *walk, dir string) {
	if ctx.Err() != nil {
		return
	}
	// Watch before listing, so a file created meanwhile is either listed or
	// reported by the watcher.
	r.watch(dir)
	w.visited[dir] = true
	gi, err := r.root.ReadFile(osPath(path.Join(dir, ".gitignore")))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.logger.Warn("ingest: cannot read .gitignore; its patterns are not applied", "path", path.Join(dir, ".gitignore"), "err", err)
	}
	r.rules.setDir(dir, gi)

	f, err := r.root.Open(osPath(dir))
	var entries []fs.DirEntry
	if err == nil {
		entries, err = f.ReadDir(-1)
		f.Close()
	}
	if err != nil {
		r.logger.Warn("ingest: cannot list directory; its files are not ingested (check its permissions)", "path", dir, "err", err)
		return
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		child := path.Join(dir, e.Name())
		if err := events.ValidatePath(child); err != nil {
			r.logger.Warn("ingest: path cannot be carried by events; not ingested", "path", child, "err", err)
			continue
		}
		if e.IsDir() {
			if !r.rules.ignored(child, true) {
				r.walkDir(ctx, w, child)
			}
			continue
		}
		if r.rules.ignored(child, false) {
			continue
		}
		w.seen[child] = true
		w.found = append(w.found, child)
	}
}

// watch adds a watch on dir. The first failure switches the repo to
// periodic rescans.
func (r *repo) watch(dir string) {
	if r.watcher == nil || r.watchFailed.Load() {
		return
	}
	err := r.watcher.Add(filepath.Join(r.absRoot, filepath.FromSlash(dir)))
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return
	}
	r.watchUnavailable(fmt.Errorf("watch %s: %w", dir, err))
}

// underSymlink reports whether a parent directory of rel is a symlink;
// such directories are not descended.
func (r *repo) underSymlink(rel string) bool {
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		fi, err := r.root.Lstat(osPath(rel[:i]))
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// watchLoop turns file system events into work, each path debounced: it is
// handled once it has been quiet for Config.Debounce.
func (r *repo) watchLoop(ctx context.Context, w *fsnotify.Watcher) {
	debounce := r.s.cfg.Debounce
	pending := make(map[string]time.Time)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			rel, ok := r.relPath(ev.Name)
			if !ok {
				continue
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				// A directory moved away keeps reporting under its old
				// name; stop watching it (an error means it was a file).
				_ = w.Remove(ev.Name)
			}
			pending[rel] = time.Now().Add(debounce)
			if !armed {
				timer.Reset(debounce)
				armed = true
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				r.logger.Warn("ingest: file events were lost (queue overflow); rescanning the repo. If this recurs raise fs.inotify.max_queued_events", "err", err)
				r.request("")
				continue
			}
			r.logger.Warn("ingest: file watcher error", "err", err)
		case now := <-timer.C:
			armed = false
			var next time.Time
			for p, due := range pending {
				if !due.After(now) {
					delete(pending, p)
					r.changed(ctx, p)
					continue
				}
				if next.IsZero() || due.Before(next) {
					next = due
				}
			}
			if !next.IsZero() {
				timer.Reset(next.Sub(now))
				armed = true
			}
		}
	}
}

// changed handles a path that changed and has since been quiet.
func (r *repo) changed(ctx context.Context, rel string) {
	if rel == "" {
		r.request("")
		return
	}
	if path.Base(rel) == ".gitignore" {
		// Which files are ignored may have changed anywhere below.
		dir := path.Dir(rel)
		if dir == "." {
			dir = ""
		}
		r.request(dir)
		return
	}
	fi, err := r.root.Lstat(osPath(rel))
	switch {
	case err == nil && fi.IsDir():
		r.request(rel)
	case errors.Is(err, fs.ErrNotExist):
		// A file or a whole directory is gone.
		r.enqueue(ctx, job{repo: r, path: rel})
		if under, _ := r.s.state.paths(r.name, rel); len(under) > 1 || len(under) == 1 && under[0] != rel {
			r.unwatchUnder(rel)
			r.request(rel)
		}
	default:
		r.enqueue(ctx, job{repo: r, path: rel})
	}
}

// unwatchUnder drops the watches of the subdirectories of a directory that
// moved away: inotify keeps them, reporting under the old names.
func (r *repo) unwatchUnder(dir string) {
	prefix := filepath.Join(r.absRoot, filepath.FromSlash(dir)) + string(filepath.Separator)
	for _, p := range r.watcher.WatchList() {
		if strings.HasPrefix(p, prefix) {
			_ = r.watcher.Remove(p)
		}
	}
}

// relPath turns a watcher's absolute name into a repo path.
func (r *repo) relPath(name string) (string, bool) {
	rel, err := filepath.Rel(r.absRoot, name)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}

// newWatcher is replaced by tests that need watching to fail.
var newWatcher = fsnotify.NewWatcher

func osPath(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

func (r *repo) snapshot() RepoStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats
	st.Skipped = maps.Clone(r.stats.Skipped)
	st.Watching = r.watching.Load()
	return st
}
