// Package indexer is the indexer role: workers on the durable consumer of
// file events that turn each event into a DocRecord (parsed headings,
// links, frontmatter, chunks, token counts) and write it into the cue_docs
// bucket with compare-and-set on the ingest sequence, so a redelivered or
// out-of-order event never overwrites a newer record. When an embedding
// model is configured, each stored record is followed by an EmbedRequest
// for the embed workers: keyword search has the record at once, vectors
// trail.
package indexer

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/internal/priority"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/core/importance"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Config tunes the indexer.
type Config struct {
	// Concurrency is how many files are indexed at once; default 64: each
	// spends far longer waiting for the server to store its record, for
	// the syncs (SyncWithin) and for its ack than parsing (docs/bench.md
	// has the figures behind 64).
	Concurrency int
	// SyncWithin is how long after one sync of an embedded store the
	// next may wait to gather more files' writes (bus.WorkerConfig);
	// default 10 ms. Agents' writes still sync at once, and take the
	// indexer's waiting writes with them.
	SyncWithin time.Duration
	// MaxDeliver must match the consumer's MaxDeliver (bus.Settings).
	MaxDeliver int
	// MaxRecordBytes bounds an encoded DocRecord, below the server's max
	// payload (1 MiB by default in a cluster). Default 900 KiB.
	MaxRecordBytes int
	// EmbedModel is the model id (embed.Embedder.ModelID, e.g.
	// "builtin:use-lite") whose embed workers are asked for the vectors of
	// every record stored; empty publishes no EmbedRequests (keyword
	// search only).
	EmbedModel string
	// Gate, if set, counts indexing a file as foreground work, so that
	// background embedding in the same process gives way to it.
	Gate *priority.Gate
}

func (c *Config) setDefaults() {
	if c.SyncWithin <= 0 {
		c.SyncWithin = 10 * time.Millisecond
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 64
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = 5
	}
	if c.MaxRecordBytes <= 0 {
		c.MaxRecordBytes = 900 << 10
	}
}

// Service is the indexer role.
type Service struct {
	conn   *bus.Conn
	cfg    Config
	logger *slog.Logger
	now    func() time.Time
	board  *tasks.Board
	tasks  TaskLog
	// cardLocks serialise the events of one card path in this process
	// from the record write to the task append, so two workers holding
	// successive versions cannot append them out of order.
	cardLocks [64]sync.Mutex
	seed      maphash.Seed
}

// New builds an indexer on conn; the topology must be provisioned.
func New(conn *bus.Conn, cfg Config, logger *slog.Logger) *Service {
	cfg.setDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("role", "indexer")
	board := tasks.NewBoard(conn.JS, logger)
	return &Service{conn: conn, cfg: cfg, logger: logger, now: time.Now, board: board, tasks: board, seed: maphash.MakeSeed()}
}

// Board is the task board the indexer reconciles card files against. Run
// runs it; a caller of Handle alone must run it too.
func (s *Service) Board() *tasks.Board { return s.board }

// Run indexes until ctx is cancelled, then drains its consumer and stops
// following the task log.
func (s *Service) Run(ctx context.Context) error {
	w := bus.NewWorker(s.conn, bus.WorkerConfig{
		Stream:      events.IngestStream,
		Consumer:    events.IndexerConsumer,
		Concurrency: s.cfg.Concurrency,
		MaxDeliver:  s.cfg.MaxDeliver,
		// Records carry the event's sequence, which orders a path's
		// versions (SourceSeq).
		SyncEvents: true,
		SyncWithin: s.cfg.SyncWithin,
		Logger:     s.logger,
	}, s.Handle)
	g, gctx := errgroup.WithContext(ctx)
	boardCtx, stopBoard := context.WithCancel(context.Background())
	defer stopBoard()
	g.Go(func() error {
		err := s.board.Run(boardCtx)
		if err == nil && boardCtx.Err() == nil {
			err = errors.New("indexer: the task board stopped")
		}
		return err
	})
	g.Go(func() error {
		// The worker drains first; the board it appends through stops after.
		defer stopBoard()
		return w.Run(gctx)
	})
	return g.Wait()
}

// Handle indexes one file event. It is idempotent: the record it writes is
// a function of the event and its stream sequence.
func (s *Service) Handle(ctx context.Context, env events.Envelope) error {
	defer s.cfg.Gate.Begin()()
	var rec events.DocRecord
	var cardCh *cardChange
	var first bool
	switch ev := env.Event.(type) {
	case events.FileUpserted:
		first = ev.First
		content := ev.Content
		if ev.Blob != "" {
			b, err := s.blob(ctx, ev.Blob)
			if err != nil {
				return err
			}
			content = string(b)
		}
		rec = docparse.Build(ev.Repo, ev.Path, content)
		rec.SHA256, rec.Size, rec.ModTime = ev.SHA256, ev.Size, ev.ModTime
		if rec.Kind == events.DocCard {
			if cardCh = s.parseCard(ctx, &rec, content); cardCh != nil {
				cardCh.repeat, cardCh.writtenBackFrom = ev.Repeat, ev.WrittenBackFrom
			}
		}
		if ev.UTF8Repaired && !slices.Contains(rec.Warnings, docparse.WarnInvalidUTF8) {
			// The replacement characters usually say so already.
			rec.Warnings = append(rec.Warnings, docparse.WarnInvalidUTF8)
		}
		if ev.Blob != "" {
			rec.Blob = ev.Blob
		} else {
			rec.Content = content
		}
	case events.FileDeleted:
		rec = events.DocRecord{Repo: ev.Repo, Path: ev.Path, Deleted: true}
		if isCard(ev.Path) {
			cardCh = &cardChange{deleted: true}
		}
	case events.FileSkipped:
		first = ev.First
		rec = events.DocRecord{Repo: ev.Repo, Path: ev.Path, Size: ev.Size, ModTime: ev.ModTime,
			Skip: &events.Skip{Reason: ev.Reason, Detail: ev.Detail}}
	default:
		return bus.Permanent(fmt.Errorf("indexer: unexpected %s event on %s", env.Event.EventKind(), env.Subject))
	}
	if cardCh != nil {
		mu := &s.cardLocks[maphash.String(s.seed, rec.Repo+"\x00"+rec.Path)%uint64(len(s.cardLocks))]
		mu.Lock()
		defer mu.Unlock()
	}
	rec.SourceSeq = env.StreamSeq
	rec.IndexedAt = s.now().UTC()
	// The record names the event's sequence: the event must outlive a
	// power cut before the record can. Parsing above overlapped its sync.
	if err := bus.EventDurable(ctx); err != nil {
		return err
	}
	data, err := s.encode(ctx, &rec)
	if err != nil {
		return err
	}
	current, err := s.write(ctx, events.DocKey(rec.Repo, rec.Path), &rec, data, first)
	if err != nil {
		return err
	}
	s.logger.Debug("indexed", "repo", rec.Repo, "path", rec.Path, "stream_seq", rec.SourceSeq, "current", current)
	if current && cardCh != nil {
		// After the record, so a crash in between costs a redelivery; and
		// only while the record is this event's, so an older event of the
		// card delivered late cannot set the task back.
		cardCh.seq = rec.SourceSeq
		if err := s.publishCard(ctx, rec.Repo, rec.Path, cardCh); err != nil {
			return err
		}
	}
	if current && s.cfg.EmbedModel != "" {
		// Only after the record is stored, and again on a redelivery (the
		// message id drops the copy): a crash between the put and this
		// publish costs a redelivery, not the vectors.
		if err := s.requestEmbedding(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

// requestEmbedding asks the embed workers for rec's vectors, or for their
// removal when rec is a tombstone or a skip.
func (s *Service) requestEmbedding(ctx context.Context, rec events.DocRecord) error {
	req := events.EmbedRequest{Repo: rec.Repo, Path: rec.Path, Model: s.cfg.EmbedModel, SHA256: rec.SHA256, SourceSeq: rec.SourceSeq}
	if rec.Deleted || rec.Skip != nil {
		req.SHA256, req.Deleted = "", true
	}
	if _, err := bus.PublishEvent(ctx, s.conn.JS, events.EmbedSubject(rec.Repo), events.EmbedRequestMsgID(req), req); err != nil {
		return fmt.Errorf("indexer: request embedding of %s/%s: %w", rec.Repo, rec.Path, err)
	}
	return nil
}

func (s *Service) blob(ctx context.Context, name string) ([]byte, error) {
	obs, err := s.conn.Objects(ctx, events.BlobsBucket)
	if err != nil {
		return nil, fmt.Errorf("indexer: object store: %w", err)
	}
	b, err := obs.GetBytes(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		// Ingest stores the blob before publishing the event, so a missing
		// blob was removed since: no retry brings it back.
		return nil, bus.Permanent(fmt.Errorf("indexer: blob %s is missing from %s", name, events.BlobsBucket))
	}
	if err != nil {
		return nil, fmt.Errorf("indexer: get blob %s: %w", name, err)
	}
	return b, nil
}

// encode fits rec under MaxRecordBytes: inline content moves to the object
// store first; a record still too large loses its chunk and link detail,
// with a warning saying so.
func (s *Service) encode(ctx context.Context, rec *events.DocRecord) ([]byte, error) {
	data, err := events.Encode(*rec)
	if err != nil {
		return nil, bus.Permanent(err)
	}
	if len(data) <= s.cfg.MaxRecordBytes {
		return data, nil
	}
	if rec.Content != "" {
		obs, err := s.conn.Objects(ctx, events.BlobsBucket)
		if err != nil {
			return nil, fmt.Errorf("indexer: object store: %w", err)
		}
		name := events.SHA256Hex([]byte(rec.Content))
		if _, err := obs.GetInfo(ctx, name); err != nil {
			if _, err := obs.PutBytes(ctx, name, []byte(rec.Content)); err != nil {
				return nil, fmt.Errorf("indexer: put blob: %w", err)
			}
		}
		rec.Blob, rec.Content = name, ""
		if data, err = events.Encode(*rec); err != nil {
			return nil, bus.Permanent(err)
		}
		if len(data) <= s.cfg.MaxRecordBytes {
			return data, nil
		}
	}
	rec.Warnings = append(rec.Warnings, fmt.Sprintf("record trimmed: %d links and %d chunks dropped to fit %d bytes", len(rec.Links), len(rec.Chunks), s.cfg.MaxRecordBytes))
	rec.Links, rec.Chunks, rec.Frontmatter = nil, nil, nil
	if len(rec.Headings) > 1000 {
		rec.Headings = rec.Headings[:1000]
	}
	if data, err = events.Encode(*rec); err != nil {
		return nil, bus.Permanent(err)
	}
	return data, nil
}

// write stores rec, encoded as data, under key unless the stored record was
// built from the same or a later ingest sequence; rec carries the stored
// record's change times forward (changesAfter), re-encoded when they
// differ. It retries compare-and-set conflicts (another worker wrote the
// key in between) until one side wins. current reports that the stored
// record is this event's: written now, or by an earlier delivery of it.
// first (the event's First hint) tries the write as the key's first entry
// before reading it: a new file, the bulk of a first index, then costs
// the bucket one request instead of two.
func (s *Service) write(ctx context.Context, key string, rec *events.DocRecord, data []byte, first bool) (current bool, err error) {
	seq := rec.SourceSeq
	conflicted := false
	if first {
		err := s.putRecord(ctx, key, rec, data, 0)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, errRevisionMoved) {
			return false, fmt.Errorf("indexer: write %s: %w", key, err)
		}
		// The key has an entry after all (a redelivery of this event, an
		// earlier index ingest forgot, a delete marker): read it.
		conflicted = true
	}
	for attempt := 0; attempt < 100; attempt++ {
		// After a conflict the key is read from the bucket's leader: on
		// a cluster the first read may be answered by a replica still
		// catching up (a restore, a node back from a restart), and every
		// write against its answer would fail for as long as it lags.
		stored, rev, err := s.lastRecord(ctx, key, conflicted)
		if err != nil {
			return false, err
		}
		if stored != nil {
			dec, derr := events.DecodeDocRecord(stored)
			if derr != nil && errors.Is(derr, events.ErrUnsupportedVersion) {
				return false, bus.Permanent(fmt.Errorf("indexer: %s was written by a newer release (%v); upgrade this indexer", key, derr))
			}
			if derr == nil && dec.SourceSeq >= seq {
				// A newer event already won, or this very one did.
				return dec.SourceSeq == seq, nil
			}
			if changed := changesAfter(dec, *rec); derr == nil && !slices.EqualFunc(changed, rec.Changed, time.Time.Equal) {
				rec.Changed = changed
				if data, err = s.encode(ctx, rec); err != nil {
					return false, err
				}
			}
		}
		err = s.putRecord(ctx, key, rec, data, rev)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, errRevisionMoved) {
			return false, fmt.Errorf("indexer: write %s: %w", key, err)
		}
		conflicted = true
	}
	return false, fmt.Errorf("indexer: write %s: too many concurrent writers", key)
}

// lastRecord is key's last entry in the docs bucket: the stored record
// (nil for none, a delete or a purge) and the revision a write after it
// must expect (0 for no entry at all). fromLeader asks the bucket's
// leader (bus.LastFromLeader); otherwise any replica answers, which is
// one round trip and, on a single node or a replica that keeps up, the
// same answer.
func (s *Service) lastRecord(ctx context.Context, key string, fromLeader bool) (stored []byte, rev uint64, err error) {
	if fromLeader {
		msg, err := s.conn.LastFromLeader(ctx, "KV_"+events.DocsBucket, events.DocsSubject(key))
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return nil, 0, nil
		case err != nil:
			return nil, 0, fmt.Errorf("indexer: read %s: %w", key, err)
		}
		if op := msg.Header.Get("KV-Operation"); op == "DEL" || op == "PURGE" {
			return nil, msg.Sequence, nil
		}
		return msg.Data, msg.Sequence, nil
	}
	kv, err := s.conn.KV(ctx, events.DocsBucket)
	if err != nil {
		return nil, 0, fmt.Errorf("indexer: bucket %s: %w", events.DocsBucket, err)
	}
	entry, err := kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		// KeyValue.Get hides a delete marker's revision: a write after
		// it conflicts, and the retry reads the marker from the leader.
		if entry != nil {
			return nil, entry.Revision(), nil
		}
		return nil, 0, nil
	case err != nil:
		return nil, 0, fmt.Errorf("indexer: get %s: %w", key, err)
	}
	return entry.Value(), entry.Revision(), nil
}

// errRevisionMoved is putRecord's compare-and-set conflict.
var errRevisionMoved = errors.New("indexer: the record changed meanwhile")

// putRecord stores data, rec encoded, under key if the key's last
// revision is rev (0: the key has no entry), as KeyValue.Update does, with
// rec's DocSummary in the entry's headers: ingest compares the bucket with
// the files by reading headers alone.
func (s *Service) putRecord(ctx context.Context, key string, rec *events.DocRecord, data []byte, rev uint64) error {
	msg := nats.NewMsg(events.DocsSubject(key))
	msg.Data = data
	msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	for name, v := range rec.Summary().Headers() {
		msg.Header.Set(name, v)
	}
	_, err := s.conn.JS.PublishMsg(ctx, msg)
	if bus.WrongLastSequence(err) {
		return errRevisionMoved
	}
	return err
}

// changesAfter is rec's change times (DocRecord.Changed) when it replaces
// stored: stored's, plus rec's IndexedAt when the content differs. A
// tombstone or a skip has none, and a file that comes back after one
// starts again, its first version not being a change.
func changesAfter(stored, rec events.DocRecord) []time.Time {
	switch {
	case rec.Deleted || rec.Skip != nil || stored.Deleted || stored.Skip != nil || stored.SHA256 == "":
		return nil
	case stored.SHA256 == rec.SHA256:
		return stored.Changed
	}
	return importance.CarryChanges(stored.Changed, rec.IndexedAt)
}
