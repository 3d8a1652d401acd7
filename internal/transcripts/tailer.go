// Package transcripts is ingest's transcript tailer: it follows Claude Code
// session and subagent transcripts and generic chat-jsonl logs as agents
// append to them, maps each to the repo its lines' cwd lies in, and
// publishes the new whole lines as events.TranscriptBatch for the
// extractor. What was published is kept in a local Badger, written only
// after JetStream acknowledged the batch, so a restart neither skips nor
// repeats a line. The daemon and cmd/ingest run it; the Stop and
// SubagentStop hooks call Flush.
package transcripts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// The errors of Flush.
var (
	// ErrNotRunning: Flush was called while Run is not running.
	ErrNotRunning = errors.New("transcripts: tailer is not running")
	// ErrUnknownTranscript: the path is not a transcript under ClaudeDirs
	// or ChatSources (or a symlink leading out of them).
	ErrUnknownTranscript = errors.New("transcripts: not a transcript the tailer follows")
	// ErrIgnored: the transcript's cwd is in none of the configured repos.
	ErrIgnored = errors.New("transcripts: transcript is in no configured repo")
	// ErrNoCwd: no complete line of the transcript names its cwd yet, so
	// it cannot be given a repo.
	ErrNoCwd = errors.New("transcripts: transcript names no cwd yet")
)

// Tailer follows transcripts and publishes their new lines. Create it with
// New and start it with Run.
type Tailer struct {
	conn   *bus.Conn
	cfg    Config
	logger *slog.Logger
	repos  []RepoRoot // roots cleaned and resolved

	started atomic.Bool
	// life is held for reading while a transcript is processed and for
	// writing while Run opens and closes the state.
	life  sync.RWMutex
	state *stateStore

	mu    sync.Mutex
	files map[string]*tracked // by resolved path
	// refused remembers paths turned away (symlinks out of the watched
	// dirs), so each is logged once.
	refused map[string]bool

	batches, lines, badLines, tooLong, restarts, duplicates, publishErrors atomic.Int64
	watching                                                               atomic.Bool
}

// tracked is one transcript.
type tracked struct {
	path      string // resolved
	format    string
	session   string // from the file name
	agent     string
	fixedRepo string

	// Guarded by Tailer.mu: what the watcher has seen of the file.
	size      int64
	published int64
	changed   time.Time // when growth was last seen; zero when none is pending
	since     time.Time // when the oldest unpublished growth was seen
	gen       uint64    // bumped at each growth seen
	ignored   bool

	// mu is held while the file is read and published.
	mu     sync.Mutex
	rec    record
	loaded bool
}

// New validates cfg and returns a Tailer publishing through conn. A nil
// logger discards logs.
func New(conn *bus.Conn, cfg Config, logger *slog.Logger) (*Tailer, error) {
	if conn == nil || conn.JS == nil {
		return nil, errors.New("transcripts: no bus connection")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if conn.NC != nil {
		if max := conn.NC.MaxPayload(); max > 0 && int64(cfg.MaxBatchBytes)+batchOverhead > max {
			return nil, fmt.Errorf("transcripts: MaxBatchBytes %d leaves no room for the envelope under the server's max payload of %d bytes: lower it to %d or less", cfg.MaxBatchBytes, max, max-batchOverhead)
		}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t := &Tailer{conn: conn, cfg: cfg, logger: logger, files: map[string]*tracked{}, refused: map[string]bool{}}
	for _, r := range cfg.Repos {
		t.repos = append(t.repos, RepoRoot{Name: r.Name, Root: resolve(r.Root)})
	}
	return t, nil
}

// resolve cleans p and follows its symlinks when it exists.
func resolve(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) || (dir == string(filepath.Separator) && filepath.IsAbs(p))
}

// repoFor is the repo whose root is the longest prefix of cwd, "" if none.
func (t *Tailer) repoFor(cwd string) string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return ""
	}
	best, bestLen := "", -1
	for _, c := range []string{filepath.Clean(cwd), resolve(cwd)} {
		for _, r := range t.repos {
			if within(c, r.Root) && len(r.Root) > bestLen {
				best, bestLen = r.Name, len(r.Root)
			}
		}
	}
	return best
}

// Stats is a snapshot of the tailer's work since it started.
type Stats struct {
	// Transcripts is how many transcripts are followed; Ignored how many
	// of them are in no configured repo.
	Transcripts, Ignored int
	// Batches and Lines count acknowledged publishes; BadLines lines that
	// were not JSON; TooLong lines over MaxBatchBytes, skipped.
	Batches, Lines, BadLines, TooLong int64
	// Restarts counts transcripts read again from the start because they
	// shrank or were replaced.
	Restarts int64
	// Duplicates counts batches JetStream already had: a batch published
	// again after a crash, or (see Restarts) one it dropped.
	Duplicates    int64
	PublishErrors int64
	// Watching is false when file watching failed and only polling runs.
	Watching bool
}

// Stats returns a snapshot of the tailer's counters.
func (t *Tailer) Stats() Stats {
	t.mu.Lock()
	s := Stats{Transcripts: len(t.files)}
	for _, f := range t.files {
		if f.ignored {
			s.Ignored++
		}
	}
	t.mu.Unlock()
	s.Batches, s.Lines, s.BadLines, s.TooLong = t.batches.Load(), t.lines.Load(), t.badLines.Load(), t.tooLong.Load()
	s.Restarts, s.Duplicates, s.PublishErrors = t.restarts.Load(), t.duplicates.Load(), t.publishErrors.Load()
	s.Watching = t.watching.Load()
	return s
}

// classify says whether path is a transcript the tailer follows, and how.
// It checks that path, with its symlinks followed, stays inside the
// directory it was found under and is a regular file.
func (t *Tailer) classify(path string) (*tracked, bool) {
	path = filepath.Clean(path)
	for _, dir := range t.cfg.ClaudeDirs {
		dir = filepath.Clean(dir)
		rel, err := filepath.Rel(dir, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		parts := strings.Split(rel, string(filepath.Separator))
		var tr *tracked
		switch {
		case len(parts) == 2 && strings.HasSuffix(parts[1], ".jsonl") && parts[1] != ".jsonl":
			tr = &tracked{format: events.TranscriptClaudeCode, session: strings.TrimSuffix(parts[1], ".jsonl")}
		case len(parts) == 4 && parts[2] == "subagents" && strings.HasPrefix(parts[3], "agent-") && strings.HasSuffix(parts[3], ".jsonl"):
			agent := strings.TrimSuffix(strings.TrimPrefix(parts[3], "agent-"), ".jsonl")
			if agent == "" {
				continue
			}
			tr = &tracked{format: events.TranscriptClaudeCode, session: parts[1], agent: agent}
		default:
			continue
		}
		if real, ok := t.contained(path, dir); ok {
			tr.path = real
			return tr, true
		}
		return nil, false
	}
	for _, src := range t.cfg.ChatSources {
		if ok, _ := filepath.Match(src.Glob, path); !ok {
			continue
		}
		if real, ok := t.contained(path, globBase(src.Glob)); ok {
			name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			return &tracked{path: real, format: events.TranscriptChatJSONL, session: name, fixedRepo: src.Repo}, true
		}
		return nil, false
	}
	return nil, false
}

// contained resolves path and reports whether it is a regular file inside
// dir (resolved too).
func (t *Tailer) contained(path, dir string) (string, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	if !within(real, resolve(dir)) {
		t.mu.Lock()
		first := !t.refused[path]
		t.refused[path] = true
		t.mu.Unlock()
		if first {
			t.logger.Warn("transcripts: not following a symlink out of the watched directory", "path", path, "target", real, "dir", dir)
		}
		return "", false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return real, true
}

// observe notes that path may have grown. quiet says the new lines should
// wait for FlushInterval of quiet; otherwise they are due at once.
func (t *Tailer) observe(path string, quiet bool) *tracked {
	cand, ok := t.classify(path)
	if !ok {
		return nil
	}
	fi, err := os.Stat(cand.path)
	if err != nil {
		return nil
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	tr := t.files[cand.path]
	if tr == nil {
		tr = cand
		tr.size = -1
		t.files[cand.path] = tr
	}
	if fi.Size() != tr.size {
		tr.size = fi.Size()
		tr.gen++
		if !quiet {
			now = now.Add(-t.cfg.FlushInterval)
		}
		tr.changed = now
		if tr.since.IsZero() {
			tr.since = now
		}
	}
	return tr
}

// dueAt is when tr's new lines should be published; zero when none wait.
func (t *Tailer) dueAtLocked(tr *tracked) time.Time {
	if tr.changed.IsZero() || tr.ignored {
		return time.Time{}
	}
	if tr.size-tr.published >= int64(t.cfg.MaxBatchBytes) {
		return tr.changed
	}
	quiet := tr.changed.Add(t.cfg.FlushInterval)
	if latest := tr.since.Add(MaxDelayFactor * t.cfg.FlushInterval); latest.Before(quiet) {
		return latest
	}
	return quiet
}

// Run opens the state, publishes what every transcript gained while the
// tailer was stopped, then follows them until ctx is cancelled. It returns
// nil when ctx ended, or an error at once if the state cannot be opened or
// Run was already called. Publish failures are logged, counted in Stats
// and retried at the transcript's next change or poll.
func (t *Tailer) Run(ctx context.Context) (err error) {
	if !t.started.CompareAndSwap(false, true) {
		return errors.New("transcripts: Run called twice")
	}
	if err := os.MkdirAll(t.cfg.StateDir, 0o755); err != nil {
		return fmt.Errorf("transcripts: create StateDir: %w", err)
	}
	st, err := openState(t.cfg.StateDir, t.logger)
	if err != nil {
		return err
	}
	t.life.Lock()
	t.state = st
	t.life.Unlock()
	defer func() {
		// Wait for a Flush in progress, then close the state.
		t.life.Lock()
		t.state = nil
		t.life.Unlock()
		if cerr := st.close(); cerr != nil && err == nil {
			err = fmt.Errorf("transcripts: close state: %w", cerr)
		}
	}()

	w, werr := fsnotify.NewWatcher()
	if werr != nil {
		t.logger.Warn("transcripts: file watching unavailable; polling only", "err", werr, "poll_every", t.cfg.PollInterval)
	} else {
		t.watching.Store(true)
		defer w.Close()
	}
	var evs <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		evs, errs = w.Events, w.Errors
	}

	t.scan(w, false)
	poll := time.NewTicker(t.cfg.PollInterval)
	defer poll.Stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		t.processDue(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if next := t.nextDue(); !next.IsZero() {
			timer.Reset(max(time.Until(next), time.Millisecond))
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-evs:
			if !ok {
				evs = nil
				continue
			}
			t.handle(w, ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			t.logger.Warn("transcripts: file watching error; rescanning", "err", err)
			t.scan(w, true)
		case <-poll.C:
			t.scan(w, true)
		case <-timer.C:
		}
	}
}

func (t *Tailer) handle(w *fsnotify.Watcher, ev fsnotify.Event) {
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) {
		return
	}
	fi, err := os.Lstat(ev.Name)
	if err != nil {
		return
	}
	if fi.IsDir() {
		if t.watchable(ev.Name) {
			t.watchTree(w, ev.Name)
		}
		return
	}
	t.observe(ev.Name, true)
}

// watchable reports a directory within a Claude dir at the depths that
// hold transcripts: a project, a session, its subagents.
func (t *Tailer) watchable(dir string) bool {
	for _, d := range t.cfg.ClaudeDirs {
		rel, err := filepath.Rel(filepath.Clean(d), dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		parts := strings.Split(rel, string(filepath.Separator))
		return rel == "." || len(parts) <= 2 || (len(parts) == 3 && parts[2] == "subagents")
	}
	return false
}

// watchTree watches dir and, below it, the directories that may hold
// transcripts, then looks at what they already hold: files written before
// the watch was in place would otherwise wait for the next poll.
func (t *Tailer) watchTree(w *fsnotify.Watcher, dir string) {
	if w != nil {
		if err := w.Add(dir); err != nil {
			t.logger.Debug("transcripts: cannot watch", "path", dir, "err", err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() { // not a symlink to one: DirEntry does not follow
			if t.watchable(p) {
				t.watchTree(w, p)
			}
			continue
		}
		t.observe(p, true)
	}
}

// recentSession is how recently a session must have been written for its
// subagent directories to be watched at a scan; older ones are polled, to
// keep inotify watches for the sessions that are live.
const recentSession = 24 * time.Hour

// scan finds every transcript (the poll and the start), notes which grew
// and watches the directories they are in. quiet is false at the start,
// when what was written while the tailer was stopped is due at once.
func (t *Tailer) scan(w *fsnotify.Watcher, quiet bool) {
	for _, d := range t.cfg.ClaudeDirs {
		d = filepath.Clean(d)
		if w != nil {
			_ = w.Add(d)
		}
		projects, _ := os.ReadDir(d)
		for _, p := range projects {
			if !p.IsDir() {
				continue
			}
			pdir := filepath.Join(d, p.Name())
			if w != nil {
				_ = w.Add(pdir)
			}
			entries, _ := os.ReadDir(pdir)
			for _, e := range entries {
				path := filepath.Join(pdir, e.Name())
				switch {
				case !e.IsDir():
					t.observe(path, quiet)
				default:
					subs, _ := filepath.Glob(filepath.Join(path, "subagents", "agent-*.jsonl"))
					for _, s := range subs {
						t.observe(s, quiet)
					}
					if w != nil && len(subs) > 0 || t.recent(path+".jsonl") {
						t.watchTree(w, path)
					}
				}
			}
		}
	}
	for _, src := range t.cfg.ChatSources {
		if w != nil {
			_ = w.Add(globBase(src.Glob))
		}
		matches, _ := filepath.Glob(src.Glob)
		for _, m := range matches {
			t.observe(m, quiet)
		}
	}
}

func (t *Tailer) recent(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && time.Since(fi.ModTime()) < recentSession
}

func (t *Tailer) nextDue() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var next time.Time
	for _, tr := range t.files {
		if d := t.dueAtLocked(tr); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	return next
}

func (t *Tailer) processDue(ctx context.Context) {
	now := time.Now()
	var due []*tracked
	t.mu.Lock()
	for _, tr := range t.files {
		if d := t.dueAtLocked(tr); !d.IsZero() && !d.After(now) {
			due = append(due, tr)
		}
	}
	t.mu.Unlock()
	for _, tr := range due {
		if ctx.Err() != nil {
			return
		}
		err := t.process(ctx, tr, false)
		switch {
		case err == nil, errors.Is(err, ErrIgnored), errors.Is(err, ErrNoCwd):
		case ctx.Err() != nil:
			return
		default:
			t.logger.Warn("transcripts: publish failed; retrying at the next change or poll", "path", tr.path, "err", err)
		}
	}
}

// Flush publishes the complete lines of the transcript at path that are
// not published yet, the last batch with Final set, and returns once
// JetStream acknowledged them; with nothing new it publishes an empty
// Final batch, so the extractor still learns that the work stopped. The
// Stop and SubagentStop hooks call it with their transcript_path or
// agent_transcript_path.
//
// Its errors wrap ErrNotRunning, ErrUnknownTranscript, ErrIgnored (the
// transcript is in no configured repo: nothing to do), ErrNoCwd, or the
// publish's error.
func (t *Tailer) Flush(ctx context.Context, path string) error {
	tr := t.observe(path, true)
	if tr == nil {
		return fmt.Errorf("%w: %s", ErrUnknownTranscript, path)
	}
	return t.process(ctx, tr, true)
}

// process publishes tr's new lines. final marks the last batch Final.
func (t *Tailer) process(ctx context.Context, tr *tracked, final bool) error {
	t.life.RLock()
	defer t.life.RUnlock()
	st := t.state
	if st == nil {
		return ErrNotRunning
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()

	t.mu.Lock()
	gen := tr.gen
	t.mu.Unlock()
	err := t.publishNew(ctx, st, tr, final)

	t.mu.Lock()
	tr.published = tr.rec.Offset
	tr.ignored = tr.rec.Ignored
	switch {
	case err != nil && !errors.Is(err, ErrIgnored) && !errors.Is(err, ErrNoCwd):
		// Try again after another FlushInterval.
		tr.changed = time.Now()
	case tr.gen == gen:
		tr.changed, tr.since = time.Time{}, time.Time{}
	}
	t.mu.Unlock()
	return err
}

func (t *Tailer) publishNew(ctx context.Context, st *stateStore, tr *tracked, final bool) error {
	if !tr.loaded {
		rec, _, err := st.get(tr.path)
		if err != nil {
			return err
		}
		if rec.Ignored && tr.fixedRepo == "" {
			// The repos may have changed since it was set aside.
			if repo := t.repoFor(rec.Cwd); repo != "" {
				t.logger.Info("transcripts: transcript now in a configured repo; reading it from the start", "path", tr.path, "repo", repo)
				rec = record{}
			}
		}
		tr.rec, tr.loaded = rec, true
	}
	rec := &tr.rec

	f, err := openNoFollow(tr.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("transcripts: open %s: %w", tr.path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("transcripts: stat %s: %w", tr.path, err)
	}
	size := fi.Size()
	dev, ino := fileID(fi)
	replaced := rec.Ino != 0 && (rec.Dev != dev || rec.Ino != ino)
	if replaced || size < rec.Offset || size < rec.PendingEnd {
		t.logger.Warn("transcripts: transcript shrank or was replaced; reading it again from the start",
			"path", tr.path, "size", size, "offset", rec.Offset, "replaced", replaced)
		t.restarts.Add(1)
		*rec = record{Epoch: rec.Epoch + 1}
	}
	if rec.Ino == 0 && rec.Dev == 0 {
		rec.Dev, rec.Ino = dev, ino
	}

	if !rec.mapped() {
		if err := t.mapRepo(f, size, tr, rec); err != nil {
			return err
		}
		if err := st.put(tr.path, *rec); err != nil {
			return err
		}
	}
	if rec.Ignored {
		return fmt.Errorf("%w: %s (cwd %s)", ErrIgnored, tr.path, rec.Cwd)
	}

	sentFinal := false
	for {
		exact := rec.PendingEnd > rec.Offset
		limit := size
		if exact {
			limit = rec.PendingEnd
		}
		c, err := readChunk(f, rec.Offset, limit, t.cfg.MaxBatchLines, t.cfg.MaxBatchBytes, exact)
		if err != nil {
			return fmt.Errorf("transcripts: read %s: %w", tr.path, err)
		}
		if c.tooLong > 0 {
			t.logger.Warn("transcripts: skipped lines longer than MaxBatchBytes", "path", tr.path, "lines", c.tooLong, "offset", c.start, "max_batch_bytes", t.cfg.MaxBatchBytes)
		}
		if c.end == rec.Offset {
			break
		}
		if len(c.lines) == 0 {
			// Only blank, bad or overlong lines: pass them without a batch.
			rec.Offset, rec.PendingEnd = c.end, 0
			if err := st.put(tr.path, *rec); err != nil {
				return err
			}
			t.badLines.Add(int64(c.bad))
			t.tooLong.Add(int64(c.tooLong))
			continue
		}
		last := final && !exact && !c.full
		ev := t.batch(tr, rec, c)
		ev.Final = last
		if err := t.publish(ctx, st, tr, rec, ev, "", exact); err != nil {
			return err
		}
		t.badLines.Add(int64(c.bad))
		t.tooLong.Add(int64(c.tooLong))
		sentFinal = last
	}
	if final && !sentFinal {
		ev := t.batch(tr, rec, chunk{start: rec.Offset, end: rec.Offset})
		ev.Final = true
		return t.publish(ctx, st, tr, rec, ev, "/final", false)
	}
	return nil
}

func (t *Tailer) batch(tr *tracked, rec *record, c chunk) events.TranscriptBatch {
	return events.TranscriptBatch{
		Repo:        rec.Repo,
		Session:     rec.Session,
		Agent:       rec.Agent,
		Source:      tr.path,
		Format:      tr.format,
		Cwd:         rec.Cwd,
		StartOffset: c.start,
		EndOffset:   c.end,
		Lines:       c.lines,
		Offsets:     c.offsets,
		BadLines:    c.bad,
	}
}

// publish sends ev and moves rec past it once it is acknowledged. The end
// of the batch is written as pending first: see record.PendingEnd. An
// empty Final batch takes the id of the offset it sits at plus suffix, so
// that it cannot shadow the batch that will later start there.
func (t *Tailer) publish(ctx context.Context, st *stateStore, tr *tracked, rec *record, ev events.TranscriptBatch, suffix string, replay bool) error {
	if ev.EndOffset > rec.Offset {
		rec.PendingEnd = ev.EndOffset
		if err := st.put(tr.path, *rec); err != nil {
			return err
		}
	}
	msgID := msgID(ev, rec.Epoch) + suffix
	ack, err := bus.PublishEvent(ctx, t.conn.JS, events.TranscriptSubject(ev.Repo), msgID, ev)
	if err != nil {
		t.publishErrors.Add(1)
		return err
	}
	if ack.Duplicate {
		t.duplicates.Add(1)
		if !replay && suffix == "" {
			t.logger.Warn("transcripts: JetStream dropped a batch as a duplicate of one published before the transcript was rewritten",
				"path", tr.path, "repo", ev.Repo, "offset", ev.StartOffset, "lines", len(ev.Lines))
		}
	}
	// The transcript is read past the batch only once the batch would
	// survive a power cut: else the lines would be lost for good.
	if err := t.conn.Durable(ctx); err != nil {
		t.publishErrors.Add(1)
		return err
	}
	rec.Offset, rec.PendingEnd = ev.EndOffset, 0
	if err := st.put(tr.path, *rec); err != nil {
		return err
	}
	t.batches.Add(1)
	t.lines.Add(int64(len(ev.Lines)))
	t.logger.Debug("transcripts: published", "repo", ev.Repo, "path", tr.path, "offset", ev.StartOffset, "lines", len(ev.Lines), "stream_seq", ack.Sequence, "final", ev.Final)
	return nil
}

// msgID is the batch's Nats-Msg-Id: events.TranscriptBatchMsgID, with
// the stream key marked by the epoch once the transcript was rewritten.
func msgID(ev events.TranscriptBatch, epoch int) string {
	key := ev.StreamKey()
	if epoch > 0 {
		key += "#" + strconv.Itoa(epoch)
	}
	return events.TranscriptBatchMsgID(ev.Repo, key, ev.StartOffset)
}

// mapRepo decides a new transcript's repo, session and agent.
func (t *Tailer) mapRepo(f *os.File, size int64, tr *tracked, rec *record) error {
	h, ok, err := readHeader(f, size)
	if err != nil {
		return fmt.Errorf("transcripts: read %s: %w", tr.path, err)
	}
	rec.Session, rec.Agent = tr.session, tr.agent
	if tr.format == events.TranscriptChatJSONL && h.session != "" {
		rec.Session = h.session
	}
	if tr.format == events.TranscriptClaudeCode && rec.Agent == "" && h.agent != "" {
		rec.Agent = h.agent
	}
	rec.Cwd = h.cwd
	if tr.fixedRepo != "" {
		rec.Repo = tr.fixedRepo
		return nil
	}
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoCwd, tr.path)
	}
	if rec.Repo = t.repoFor(h.cwd); rec.Repo == "" {
		rec.Ignored = true
		t.logger.Info("transcripts: ignoring a transcript outside every configured repo", "path", tr.path, "cwd", h.cwd)
	}
	return nil
}
