// Package ingest is the ingest role's service: it walks each configured
// repository honouring .gitignore, watches it for changes, and publishes what
// changed as FileUpserted, FileDeleted and FileSkipped events on the ingest
// stream, large contents going through the blobs object store. What was
// published is remembered in a local Badger, so a restart sends nothing for
// unchanged files. It also follows the task log and writes task changes made
// through MCP back into the repos' card files. cmd/cue-ingest and `cue up`
// run it.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Service ingests a set of repositories. Create it with New and start it
// with Run.
type Service struct {
	conn     *bus.Conn
	cfg      Config
	logger   *slog.Logger
	repos    []*repo
	scanDone chan struct{}
	compared chan struct{}
	started  atomic.Bool
	// startReconcile is the outcome of the comparison at start, nil
	// before it ran. Kept apart from later ones: what a start found
	// (a store replaced, files to publish again) is what a later
	// comparison no longer sees, once the first marked them.
	startReconcile atomic.Pointer[Reconciled]

	// Set by Run.
	state *stateStore
	blobs jetstream.ObjectStore
	scans jetstream.KeyValue // nil: scan progress not published
	seed  maphash.Seed
	// runID and comparisons tell the publishes of files a comparison
	// found stale from the publishes they repeat (again), and from those
	// of an earlier comparison of this run: a bucket lost twice within
	// the duplicate window gets its files back both times.
	runID       string
	comparisons atomic.Uint64

	// republished is closed once the files the comparison at start found
	// lost or different have been published again and taken by the
	// indexer (at once when it found none).
	republished     chan struct{}
	republishedOnce sync.Once
	againMu         sync.Mutex
	// againSeqs are the CUE_INGEST sequences of the publishes that repeat
	// what the start comparison found, until the scan after it is over.
	againSeqs   []uint64
	againClosed bool

	// taskLogRecheck asks card write-back to compare the task log with
	// the one it follows now (a comparison found it replaced).
	taskLogRecheck chan struct{}
	taskLogCheck   time.Duration
	// compareNow asks for a comparison before the next ReconcileEvery
	// (card write-back found the task log replaced: the cards are to be
	// published into it).
	compareNow chan struct{}
	// docsReplaced says the server announced cue_docs created, deleted or
	// restored (StreamReplaced): a comparison follows once it settles.
	docsReplaced chan struct{}

	writtenBackMu sync.Mutex
	// writtenBack holds, per card (repo, path), what card write-back last
	// wrote there, until ingest next publishes the path: a publish of that
	// very content is the log's state coming round
	// (events.FileUpserted.WrittenBackFrom), not an edit.
	writtenBack map[[2]string]writtenCard
}

// writtenCard is a card as write-back wrote it: the SHA-256 of its content
// and the task log incarnation it was written from.
type writtenCard struct{ sha, log string }

// noteWrittenBack records that card write-back left c at path, or (a zero
// c) removed the card.
func (s *Service) noteWrittenBack(repo, path string, c writtenCard) {
	s.writtenBackMu.Lock()
	defer s.writtenBackMu.Unlock()
	if c.sha == "" {
		delete(s.writtenBack, [2]string{repo, path})
		return
	}
	if s.writtenBack == nil {
		s.writtenBack = map[[2]string]writtenCard{}
	}
	s.writtenBack[[2]string{repo, path}] = c
}

// writtenBackFrom is the task log incarnation card write-back wrote the
// content of SHA-256 sha at path from, or "" when write-back did not
// leave that content there.
func (s *Service) writtenBackFrom(repo, path, sha string) string {
	s.writtenBackMu.Lock()
	defer s.writtenBackMu.Unlock()
	if c := s.writtenBack[[2]string{repo, path}]; sha != "" && c.sha == sha {
		return c.log
	}
	return ""
}

// New validates cfg and returns a Service publishing through conn. A nil
// logger discards logs.
func New(conn *bus.Conn, cfg Config, logger *slog.Logger) (*Service, error) {
	if conn == nil || conn.JS == nil {
		return nil, errors.New("ingest: no bus connection")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	cfg.Exclude = slices.Clone(cfg.Exclude)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{conn: conn, cfg: cfg, logger: logger, scanDone: make(chan struct{}), compared: make(chan struct{}), republished: make(chan struct{}), taskLogRecheck: make(chan struct{}, 1), taskLogCheck: taskLogCheck, compareNow: make(chan struct{}, 1), docsReplaced: make(chan struct{}, 1), seed: maphash.MakeSeed(), runID: uuid.NewString()}
	for _, rc := range cfg.Repos {
		r, err := newRepo(s, rc)
		if err != nil {
			return nil, err
		}
		s.repos = append(s.repos, r)
	}
	return s, nil
}

// Compared is closed once the comparison of the state with cue_docs at
// start is over (whatever it found, or if it failed): before, the scan
// has not begun and a lost document may not be on its way back.
func (s *Service) Compared() <-chan struct{} { return s.compared }

// compare runs one comparison of the state with cue_docs and logs what it
// found; it reports whether anything is to be published again. atStart
// says it is the comparison at start, the one republished waits for: a
// later one finds nothing in files that one marked and the scan has not
// published yet, which says nothing of whether they are back.
func (s *Service) compare(ctx context.Context, atStart bool) bool {
	rec, err := s.reconcile(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Warn("ingest: could not compare the state with cue_docs; scanning against the state alone", "err", err)
		}
		return false
	}
	if atStart {
		s.startReconcile.Store(&rec)
	}
	if rec.Stale > 0 || rec.Orphans > 0 {
		s.comparisons.Add(1)
	}
	if atStart && rec.Stale == 0 && rec.Orphans == 0 {
		s.republishedOnce.Do(func() { close(s.republished) })
	}
	level := slog.LevelInfo
	found := rec.Stale > 0 || rec.Orphans > 0 || rec.StreamReplaced || rec.TaskLogReplaced
	if found {
		level = slog.LevelWarn
	}
	s.logger.Log(ctx, level, "ingest: compared the state with cue_docs", "files", rec.Files, "docs", rec.Docs,
		"republish", rec.Stale, "unrecorded_docs", rec.Orphans, "ingest_stream_replaced", rec.StreamReplaced, "task_log_replaced", rec.TaskLogReplaced, "took", rec.Took.Round(time.Millisecond))
	return rec.Stale > 0 || rec.Orphans > 0
}

// compareEvery compares again every ReconcileEvery, and when card
// write-back asks (compareNow), and rescans the repos when something is to
// be published again.
func (s *Service) compareEvery(ctx context.Context) {
	t := time.NewTicker(s.cfg.ReconcileEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.compareNow:
		}
		if s.compare(ctx, false) {
			for _, r := range s.repos {
				r.request("")
			}
		}
	}
}

// ScanDone is closed once every repo has finished its first full scan and
// everything that scan found to publish was acknowledged (or failed and was
// logged). It stays open if Run stops before that.
func (s *Service) ScanDone() <-chan struct{} { return s.scanDone }

// Run opens the ingest state, scans every repo concurrently, then watches
// them, until ctx is cancelled. It returns after all its goroutines have
// stopped and the state is closed; nil when it stopped because ctx ended.
// It returns an error at once if the blobs object store is not provisioned,
// a repo root cannot be opened, or the state cannot be opened (for instance
// another ingest holds StateDir); a second call returns an error too.
// Failures to publish single files are logged and counted in Stats, not
// returned: the file is tried again at its next change or rescan.
func (s *Service) Run(ctx context.Context) (err error) {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("ingest: Run called twice")
	}
	blobs, err := s.conn.JS.ObjectStore(ctx, events.BlobsBucket)
	if err != nil {
		return fmt.Errorf("ingest: object store %s: %w (provision the topology first: bus.Provision, which `cue up` does)", events.BlobsBucket, err)
	}
	s.blobs = blobs
	// Scan progress is best effort: without its bucket (a topology
	// provisioned by an older CueDeck) readers count only the streams.
	if scans, err := s.conn.JS.KeyValue(ctx, events.ScansBucket); err == nil {
		s.scans = scans
	} else {
		s.logger.Info("ingest: scan progress is not published", "bucket", events.ScansBucket, "err", err)
	}
	for i, r := range s.repos {
		if err := r.open(); err != nil {
			for _, opened := range s.repos[:i] {
				opened.root.Close()
			}
			return err
		}
	}
	defer func() {
		for _, r := range s.repos {
			r.root.Close()
		}
	}()
	state, err := openState(s.cfg.StateDir, s.logger)
	if err != nil {
		return err
	}
	s.state = state
	defer func() {
		if cerr := state.close(); cerr != nil && err == nil {
			err = fmt.Errorf("ingest: close state: %w", cerr)
		}
	}()
	for _, r := range s.repos {
		r.removeStaging()
	}
	// What cue_docs lacks is published again by the scan below.
	s.compare(ctx, true)
	close(s.compared)
	if ctx.Err() != nil {
		return nil
	}

	// Publishers: one queue each, a path always hashed to the same one, so
	// the events of one file are published in the order they were decided.
	queues := make([]chan job, s.cfg.Publishers)
	var pubs sync.WaitGroup
	for i := range queues {
		queues[i] = make(chan job, 64)
		pubs.Go(func() {
			for j := range queues[i] {
				j.repo.sync(ctx, j.path, j.walked)
				if j.walk != nil {
					j.walk.jobDone(j.walked)
				}
			}
		})
	}
	enqueue := func(ctx context.Context, j job) bool {
		q := queues[maphash.String(s.seed, j.repo.name+"\x00"+j.path)%uint64(len(queues))]
		select {
		case q <- j:
			return true
		case <-ctx.Done():
			return false
		}
	}

	// Task events made through MCP come back into card files.
	var writers sync.WaitGroup
	writers.Go(func() { s.followTasks(ctx) })
	writers.Go(func() { s.compareEvery(ctx) })
	writers.Go(func() { s.compareWhenDocsSettle(ctx) })

	var repos sync.WaitGroup
	for _, r := range s.repos {
		r.enqueue = enqueue
		repos.Go(func() { r.run(ctx) })
	}
	var scans sync.WaitGroup
	for _, r := range s.repos {
		scans.Go(func() {
			select {
			case <-r.firstScan:
			case <-ctx.Done():
			}
		})
	}
	scans.Wait()
	if ctx.Err() == nil {
		close(s.scanDone)
		s.logger.Info("ingest: initial scan done", "repos", len(s.repos))
		writers.Go(func() { s.awaitRepublished(ctx) })
	}

	// Shut down in order: stop the watchers, scanners and card writer, then let the
	// publishers drain (with ctx cancelled they give up at once), then close
	// the state (deferred above).
	repos.Wait()
	writers.Wait()
	for _, q := range queues {
		close(q)
	}
	pubs.Wait()
	return nil
}

// job asks a publisher to bring one path's published state in line with the
// disk. walked says the walker already found the path and decided it is not
// ignored.
type job struct {
	repo   *repo
	path   string
	walked bool
	// walk, when a scan asked for the job, hears when it is done.
	walk *walk
}

// Stats is a snapshot of the service's progress, one entry per repo in
// configuration order.
type Stats struct {
	Repos []RepoStats
}

// RepoStats describes one repo's ingest.
type RepoStats struct {
	Repo string
	// FilesSeen is how many files the last full scan found (not ignored).
	FilesSeen int
	// FilesRead counts files read and hashed since start; unchanged files
	// are not read.
	FilesRead int64
	// Upserted, Deleted and Published count acknowledged publishes since
	// start; Published includes skips.
	Upserted  int64
	Deleted   int64
	Published int64
	// Skipped counts published skips by reason since start.
	Skipped map[events.SkipReason]int64
	// PublishErrors counts publishes that failed after retrying.
	PublishErrors int64
	// LastScan is how long the last full scan took, publishing included.
	LastScan time.Duration
	// Scanning is true while a full scan runs; ScanDone once the first one
	// finished.
	Scanning bool
	ScanDone bool
	// Watching is false when file watching is unavailable and the repo is
	// rescanned every PollInterval instead.
	Watching bool
}

// Stats returns a snapshot of every repo's progress.
func (s *Service) Stats() Stats {
	out := Stats{Repos: make([]RepoStats, 0, len(s.repos))}
	for _, r := range s.repos {
		out.Repos = append(out.Repos, r.snapshot())
	}
	return out
}

// Republished is closed once what the comparison at start found lost or
// different in cue_docs has been published again and taken by the
// indexer: closed with Compared when it found nothing, never when Run
// stopped first. Readiness waits for it: before, a document may be
// served as it was, or not at all.
func (s *Service) Republished() <-chan struct{} { return s.republished }

// publishedAgain notes the sequence of a publish that repeats one the
// comparison found lost.
func (s *Service) publishedAgain(seq uint64) {
	s.againMu.Lock()
	defer s.againMu.Unlock()
	if !s.againClosed {
		s.againSeqs = append(s.againSeqs, seq)
	}
}

// awaitRepublished waits, after the scan that follows the start
// comparison, until the indexer has taken every publish that scan
// repeated, then closes Republished.
func (s *Service) awaitRepublished(ctx context.Context) {
	s.againMu.Lock()
	seqs := slices.Clone(s.againSeqs)
	s.againSeqs, s.againClosed = nil, true
	s.againMu.Unlock()
	slices.Sort(seqs)
	republished := len(seqs)
	for len(seqs) > 0 {
		if settled, err := bus.Settled(ctx, s.conn.JS, events.IngestStream, events.IndexerConsumer); err == nil {
			for len(seqs) > 0 {
				if done, err := settled(seqs[0]); err != nil || !done {
					break
				}
				seqs = seqs[1:]
			}
			if len(seqs) == 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.republishedOnce.Do(func() { close(s.republished) })
	if republished > 0 {
		s.logger.Info("ingest: what the comparison at start found lost or different is indexed again", "files", republished)
	}
}

// again is msgID for a publish that repeats one reconcile found lost:
// JetStream may still remember the first under msgID and drop the repeat.
func (s *Service) again(msgID string, again bool) string {
	if !again {
		return msgID
	}
	return fmt.Sprintf("%s|again:%s.%d", msgID, s.runID, s.comparisons.Load())
}

// StartReconcile is the outcome of the comparison of the state with
// cue_docs at start; ok is false before it completed (or if it failed).
func (s *Service) StartReconcile() (r Reconciled, ok bool) {
	if p := s.startReconcile.Load(); p != nil {
		return *p, true
	}
	return Reconciled{}, false
}

// StreamReplaced has ingest compare, rather than at its next periodic
// check, when the server announced stream created, deleted or restored
// (bus.OnStreamReplaced). For the task log at once: card write-back
// the log it follows, and the comparison the cards with the log. For
// cue_docs once the bucket has settled (compareWhenDocsSettle): one
// comparison run at the moment cue_docs was created again, while a
// restore was still writing into it, had the indexer's writes of the
// files published again refused ("too many concurrent writers") until it
// gave them up, on a three-node cluster (e2e
// TestClusterDocsBucketRestoredFromBackup).
func (s *Service) StreamReplaced(stream string) {
	switch stream {
	case events.TasksStream:
		signal(s.taskLogRecheck)
		signal(s.compareNow)
	case "KV_" + events.DocsBucket:
		signal(s.docsReplaced)
	}
}

// Settle is how a replaced stream is judged settled: unchanged for
// Quiet, read every Poll; after Most a comparison runs whether or not it
// settled (writers may never stop writing into a busy stream).
type Settle struct{ Poll, Quiet, Most time.Duration }

// compareWhenDocsSettle asks for a comparison (compareNow) each time the
// server announced cue_docs replaced, once the bucket's stream has stopped
// changing: a team's ingest refills a bucket recreated empty, or
// restored from an older backup, within seconds rather than at its next
// periodic comparison, and never while a restore still writes into it.
func (s *Service) compareWhenDocsSettle(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.docsReplaced:
		}
		settled := s.waitSettled(ctx, "KV_"+events.DocsBucket)
		if ctx.Err() != nil {
			return
		}
		s.logger.Info("ingest: cue_docs was created, deleted or restored; comparing the files with it", "settled", settled)
		signal(s.compareNow)
	}
}

// waitSettled waits until stream has shown one state (its incarnation
// and last sequence) for Settle.Quiet, or Settle.Most has passed (settled
// is then false).
func (s *Service) waitSettled(ctx context.Context, stream string) (settled bool) {
	deadline := time.Now().Add(s.cfg.Settle.Most)
	var last bus.StreamState
	var since time.Time
	for time.Now().Before(deadline) {
		now, err := bus.ReadStream(ctx, s.conn.JS, stream)
		switch {
		case err != nil:
			since = time.Time{} // not there (yet): nothing to compare with
		case since.IsZero() || now.ID() != last.ID() || now.LastSeq != last.LastSeq:
			last, since = now, time.Now()
		case time.Since(since) >= s.cfg.Settle.Quiet:
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(s.cfg.Settle.Poll):
		}
	}
	return false
}

// CompareNow has ingest compare the files with cue_docs now rather than
// at its next periodic comparison: a daemon calls it once its edge has
// confirmed cue_docs replaced (edge.Materialiser.OnStartOver), by which
// time a restore writing into the new bucket has had time to finish.
func (s *Service) CompareNow() { signal(s.compareNow) }
