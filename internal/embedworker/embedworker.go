// Package embedworker is the embed worker role: workers on the durable
// consumer "embedder" that turn each EmbedRequest into a VectorRecord in
// cue_vectors, embedding the DocRecord's chunks through the vector cache,
// and a background reconciler that asks for the vectors a model switch (or
// a lost request) left missing. Keyword search never waits on them: the
// DocRecords are stored before any request is published. The daemon runs
// one beside the indexer.
package embedworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/embed/cache"
	"github.com/cuedeck/cuedeck/internal/embed/split"
	"github.com/cuedeck/cuedeck/internal/priority"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Config tunes the worker. The zero value is usable.
type Config struct {
	// Concurrency is how many requests are handled at once; default 2
	// (embedding is CPU-bound with the built-in model).
	Concurrency int
	// Cache, if set, answers chunks embedded before: a chunk's vector is
	// kept under its texts (its windows), so a chunk whose text did not
	// change is not embedded again, whichever file or version it is in.
	Cache *cache.Cache
	// WindowTokens is the most tokens (tokens.Count, cl100k_base) of one
	// text the model sees. A chunk whose text is longer is embedded in
	// windows of whole lines, each with the chunk's heading path, and its
	// vector is the normalised mean of theirs, so the whole chunk counts
	// and not only its head. A single line longer than the window is cut
	// by the model. Zero: 100 for the built-in model (which cuts at 128
	// tokens of its own vocabulary; the margin covers the difference
	// between the tokenizers), also where it is a split model's prose
	// model (embed/split); no windows for other models, whose servers
	// cut what exceeds their context.
	WindowTokens int
	// MaxRecordBytes bounds an encoded VectorRecord, below the server's
	// max payload (1 MiB). Default 900 KiB. A file with more chunks than
	// fit has its first ones embedded, in file order, and the record's
	// ChunksOmitted counts the rest (logged as a warning).
	MaxRecordBytes int
	// RetryDelay is the redelivery delay after the n-th failed delivery
	// (the model unavailable, a transient NATS error). Default: 1 s
	// doubling to 5 min. No delivery cap applies: only requests that can
	// never succeed are dead-lettered.
	RetryDelay func(delivered uint64) time.Duration
	// Gate, if set, makes the worker background work: it waits at the gate
	// before each request, and an embedder that computes on this
	// process's cores (embed.Yielding) waits there between steps too. The
	// laptop daemon sets it so that embedding never holds up indexing or
	// answers; a worker process of its own needs none.
	Gate *priority.Gate
	// ProseOnly embeds prose only (docparse.Prose: markdown, cards, text
	// documents): other files, code most of all, are recorded without
	// vectors (events.VectorRecord.LeftOut) and found by keyword search
	// alone. ProseOnlyByDefault says what a model's workers do unless told.
	ProseOnly bool
	// ReconcileEvery is how often the reconciler scans for missing vectors
	// after the scan at start. Default 30 min: longer than the duplicate
	// window, so a request dropped as stale is asked for again. Negative:
	// no reconciler.
	ReconcileEvery time.Duration
}

func (c *Config) setDefaults(model string) {
	if c.Concurrency <= 0 {
		c.Concurrency = 2
	}
	if c.MaxRecordBytes <= 0 {
		c.MaxRecordBytes = 900 << 10
	}
	if c.RetryDelay == nil {
		c.RetryDelay = func(n uint64) time.Duration {
			return min(time.Second<<min(max(n, 1)-1, 9), 5*time.Minute)
		}
	}
	if c.ReconcileEvery == 0 {
		c.ReconcileEvery = 30 * time.Minute
	}
}

// ProseOnlyByDefault says whether model's workers embed prose only unless
// told otherwise ([embed] files). The built-in model's do: it reads 128
// tokens of natural language and is near random on code (`cue eval code`:
// semantic alone 0.106 nDCG@10 against keyword's 0.493, hybrid 0.002
// above keyword), while code and data are most of a repository's chunks,
// of the embedding time and of the vectors on disk. A model a user chose
// for its server embeds every file.
func ProseOnlyByDefault(model string) bool { return model == builtin.ModelID }

// leavesOut reports whether doc is recorded without vectors.
func (s *Service) leavesOut(doc events.DocRecord) bool {
	return s.cfg.ProseOnly && !docparse.Prose(doc.Kind, doc.Path)
}

// Stats counts what a Service did since New.
type Stats struct {
	// Embedded is the vector records written, Removed those deleted.
	Embedded, Removed uint64
	// Current is the requests whose vectors were already up to date.
	Current uint64
	// Stale is the requests dropped because they name another model.
	Stale uint64
	// Unavailable is the deliveries put back because the model could not
	// answer.
	Unavailable uint64
	// Reconciles counts the reconciler's passes, Rerequested the requests
	// they published for vectors found missing.
	Reconciles, Rerequested uint64
	// Cost is what embedding cost this worker (Model and the counts;
	// events.EmbedCost).
	Cost events.EmbedCost
}

// Service is the embed worker role for one model.
type Service struct {
	conn   *bus.Conn
	emb    embed.Embedder
	cache  *cache.Cache // nil: none
	model  string
	cfg    Config
	logger *slog.Logger

	embedded, removed, current, stale, unavailable atomic.Uint64
	reconciles, rerequested                        atomic.Uint64
	costs                                          costs
}

// New builds an embed worker on conn for e's model; the topology must be
// provisioned. e must not be nil (the "none" model runs no worker).
func New(conn *bus.Conn, e embed.Embedder, cfg Config, logger *slog.Logger) (*Service, error) {
	if e == nil {
		return nil, errors.New("embedworker: no embedder (the \"none\" model needs no embed worker)")
	}
	model := e.ModelID()
	cfg.setDefaults(model)
	if y, ok := e.(embed.Yielding); ok && cfg.Gate != nil {
		e = y.Yielding(cfg.Gate)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{conn: conn, emb: e, cache: cfg.Cache, model: model, cfg: cfg, logger: logger.With("role", "embedder", "model", model)}, nil
}

// Model is the model id this worker embeds with.
func (s *Service) Model() string { return s.model }

// Stats returns the counters.
func (s *Service) Stats() Stats {
	return Stats{Embedded: s.embedded.Load(), Removed: s.removed.Load(), Current: s.current.Load(),
		Stale: s.stale.Load(), Unavailable: s.unavailable.Load(),
		Reconciles: s.reconciles.Load(), Rerequested: s.rerequested.Load(), Cost: s.cost()}
}

func (s *Service) cost() events.EmbedCost {
	s.costs.mu.Lock()
	defer s.costs.mu.Unlock()
	return s.costs.total
}

// Run embeds until ctx is cancelled, then drains its consumer; the
// reconciler runs beside it. A reconcile that fails is logged and tried
// again at the next interval: it never stops the workers.
func (s *Service) Run(ctx context.Context) error {
	w := bus.NewWorker(s.conn, bus.WorkerConfig{
		Stream:      events.EmbedStream,
		Consumer:    events.EmbedderConsumer,
		Concurrency: s.cfg.Concurrency,
		MaxDeliver:  math.MaxInt, // the consumer's is -1: unlimited
		RetryDelay:  s.cfg.RetryDelay,
		// Embedding a large file takes seconds: shutting down stops it
		// mid-file, and it is embedded again after a restart.
		Interruptible: true,
		Logger:        s.logger,
	}, s.Handle)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return w.Run(gctx) })
	if s.cfg.ReconcileEvery > 0 {
		g.Go(func() error { s.reconcileLoop(gctx); return nil })
	}
	g.Go(func() error { s.flushCostsLoop(gctx); return nil })
	err := g.Wait()
	// What the last requests cost, the workers having stopped.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	s.flushCosts(fctx)
	return err
}

func (s *Service) reconcileLoop(ctx context.Context) {
	for {
		err := s.waitQueueEmpty(ctx)
		if err == nil {
			_, err = s.Reconcile(ctx)
		}
		if err != nil && ctx.Err() == nil {
			s.logger.Warn("reconcile failed; will try again", "err", err, "retry_in", s.cfg.ReconcileEvery)
		}
		t := time.NewTimer(s.cfg.ReconcileEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// errConflict means another writer changed a key between read and write;
// the request is handled again from the start.
var errConflict = errors.New("embedworker: concurrent write")

// Handle handles one EmbedRequest. It is idempotent: what it writes is a
// function of the DocRecord stored when it runs. Requests for another
// model are acknowledged and dropped. A request it cannot decode, a record
// of a newer release or a missing blob are permanent (dead-lettered); an
// unavailable model and NATS errors are retried with RetryDelay.
func (s *Service) Handle(ctx context.Context, env events.Envelope) error {
	req, ok := env.Event.(events.EmbedRequest)
	if !ok {
		return bus.Permanent(fmt.Errorf("embedworker: unexpected %s event on %s", env.Event.EventKind(), env.Subject))
	}
	log := s.logger.With("repo", req.Repo, "path", req.Path, "stream_seq", env.StreamSeq)
	if req.Model != s.model {
		// A model switch: the worker of that model is gone, and the
		// reconciler of this one asks for what this model lacks.
		s.stale.Add(1)
		log.Debug("dropping request for another model", "requested", req.Model)
		return nil
	}
	// Held at the gate while a repository is indexed, or embedding a
	// large file, a request can outlast the consumer's AckWait: tell the
	// server it is still in hand, so it is not handed out again.
	defer keepInProgress(ctx, inProgressEvery)()
	if err := s.cfg.Gate.Wait(ctx); err != nil {
		return err
	}
	for range 20 {
		err := s.handleOnce(ctx, req, log)
		if !errors.Is(err, errConflict) {
			return err
		}
	}
	return fmt.Errorf("embedworker: %s/%s: too many concurrent writers", req.Repo, req.Path)
}

// inProgressEvery is how often a request in hand is reported in progress:
// well within the embedder consumer's AckWait of five minutes.
const inProgressEvery = time.Minute

// keepInProgress reports the message of ctx in progress every interval
// until the returned stop is called.
func keepInProgress(ctx context.Context, every time.Duration) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_ = bus.InProgress(ctx)
			}
		}
	}()
	return func() { close(done); <-exited }
}

func (s *Service) handleOnce(ctx context.Context, req events.EmbedRequest, log *slog.Logger) error {
	docs, err := s.conn.KV(ctx, events.DocsBucket)
	if err != nil {
		return fmt.Errorf("embedworker: bucket %s: %w", events.DocsBucket, err)
	}
	vectors, err := s.conn.KV(ctx, events.VectorsBucket)
	if err != nil {
		return fmt.Errorf("embedworker: bucket %s: %w", events.VectorsBucket, err)
	}
	key := events.VectorKey(s.model, req.Repo, req.Path)
	doc, found, err := loadDoc(ctx, docs, events.DocKey(req.Repo, req.Path))
	if err != nil {
		return err
	}
	if !found || doc.Deleted || doc.Skip != nil {
		// Vectors of a document that is gone are removed, unless they
		// belong to a version newer than the tombstone.
		upTo := uint64(math.MaxUint64)
		if found {
			upTo = doc.SourceSeq
		}
		removed, err := remove(ctx, vectors, key, upTo)
		if removed {
			s.removed.Add(1)
			log.Debug("vectors removed")
		}
		return err
	}
	if doc.SourceSeq < req.SourceSeq {
		// The record the request was published after is not visible yet
		// (a replica behind): try again later rather than embed old text.
		return fmt.Errorf("embedworker: %s/%s: doc record at seq %d is older than the request's %d", req.Repo, req.Path, doc.SourceSeq, req.SourceSeq)
	}
	cur, rev, err := loadVectors(ctx, vectors, key)
	if err != nil {
		return err
	}
	if cur != nil && (cur.SourceSeq > doc.SourceSeq || cur.SourceSeq == doc.SourceSeq && cur.LeftOut == s.leavesOut(doc)) {
		s.current.Add(1)
		return nil
	}
	content, err := s.content(ctx, doc)
	if err != nil {
		return err
	}
	rec, data, err := s.build(ctx, doc, content, log)
	if err != nil {
		return err
	}
	if cur == nil && rev == 0 {
		_, err = vectors.Create(ctx, key, data)
	} else {
		_, err = vectors.Update(ctx, key, data, rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return errConflict
	}
	if err != nil {
		return fmt.Errorf("embedworker: put %s: %w", key, err)
	}
	s.embedded.Add(1)
	log.Debug("embedded", "chunks", len(rec.Chunks), "source_seq", rec.SourceSeq)
	return nil
}

// loadDoc reads a DocRecord; found is false when the key is absent or
// deleted.
func loadDoc(ctx context.Context, kv jetstream.KeyValue, key string) (events.DocRecord, bool, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return events.DocRecord{}, false, nil
	}
	if err != nil {
		return events.DocRecord{}, false, fmt.Errorf("embedworker: get %s: %w", key, err)
	}
	rec, err := events.DecodeDocRecord(e.Value())
	if err != nil {
		// Neither a newer release's record nor a corrupt one gets better
		// by waiting; the indexer rewrites the key on the next change.
		return events.DocRecord{}, false, bus.Permanent(fmt.Errorf("embedworker: doc record %s: %w", key, err))
	}
	return rec, true, nil
}

// loadVectors reads a VectorRecord and the key's revision (also of a
// delete marker); cur is nil when there is no record. A record that does
// not decode is treated as absent, so it is replaced.
func loadVectors(ctx context.Context, kv jetstream.KeyValue, key string) (cur *events.VectorRecord, rev uint64, err error) {
	e, err := kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		if e != nil {
			rev = e.Revision()
		}
		return nil, rev, nil
	case err != nil:
		return nil, 0, fmt.Errorf("embedworker: get %s: %w", key, err)
	}
	rec, derr := events.DecodeVectorRecord(e.Value())
	if derr != nil {
		if errors.Is(derr, events.ErrUnsupportedVersion) {
			return nil, 0, bus.Permanent(fmt.Errorf("embedworker: %s was written by a newer release (%v); upgrade this worker", key, derr))
		}
		return nil, e.Revision(), nil
	}
	return &rec, e.Revision(), nil
}

// remove deletes the vectors under key if they were built from a source
// sequence up to upTo, with a revision check so that a newer record put
// meanwhile survives (errConflict: handle again).
func remove(ctx context.Context, kv jetstream.KeyValue, key string, upTo uint64) (bool, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("embedworker: get %s: %w", key, err)
	}
	// A record that does not decode is removed too.
	if cur, derr := events.DecodeVectorRecord(e.Value()); derr == nil && cur.SourceSeq > upTo {
		return false, nil
	}
	err = kv.Delete(ctx, key, jetstream.LastRevision(e.Revision()))
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return false, errConflict
	}
	if err != nil {
		return false, fmt.Errorf("embedworker: delete %s: %w", key, err)
	}
	return true, nil
}

// content returns the document's text: inline, or its blob.
func (s *Service) content(ctx context.Context, doc events.DocRecord) (string, error) {
	if doc.Blob == "" {
		return doc.Content, nil
	}
	obs, err := s.conn.Objects(ctx, events.BlobsBucket)
	if err != nil {
		return "", fmt.Errorf("embedworker: object store: %w", err)
	}
	b, err := obs.GetBytes(ctx, doc.Blob)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return "", bus.Permanent(fmt.Errorf("embedworker: blob %s of %s/%s is missing from %s; re-save the file to re-ingest it", doc.Blob, doc.Repo, doc.Path, events.BlobsBucket))
	}
	if err != nil {
		return "", fmt.Errorf("embedworker: get blob %s: %w", doc.Blob, err)
	}
	if events.SHA256Hex(b) != doc.Blob {
		return "", bus.Permanent(fmt.Errorf("embedworker: blob %s of %s/%s is corrupt; re-save the file to re-ingest it", doc.Blob, doc.Repo, doc.Path))
	}
	return string(b), nil
}

// build embeds doc's chunks that have text and encodes the record,
// keeping it under MaxRecordBytes.
func (s *Service) build(ctx context.Context, doc events.DocRecord, content string, log *slog.Logger) (events.VectorRecord, []byte, error) {
	rec := events.VectorRecord{Repo: doc.Repo, Path: doc.Path, Model: s.model, SHA256: doc.SHA256, SourceSeq: doc.SourceSeq}
	if s.leavesOut(doc) {
		rec.Dimensions, rec.LeftOut = s.emb.Dimensions(), true
		data, err := events.Encode(rec)
		if err != nil {
			return rec, nil, bus.Permanent(err)
		}
		return rec, data, nil
	}
	prose := docparse.Prose(doc.Kind, doc.Path)
	chunks, windows := s.texts(content, doc.Chunks, s.windowTokens(prose))
	keys := make([]string, len(windows))
	for i, w := range windows {
		keys[i] = s.chunkKey(w, prose)
	}
	vecs, err := s.cached(keys)
	if err != nil {
		return rec, nil, err
	}
	dims := s.emb.Dimensions()
	for _, v := range vecs {
		if dims == 0 && v != nil {
			dims = len(v) // an adapter that has not answered yet
		}
	}
	if dims == 0 && len(windows) > 0 {
		// An adapter that learns its length from its first answer: learn
		// it on one text to size the cap.
		if _, err := s.embed(ctx, windows[0][:1], prose, 0); err != nil {
			return rec, nil, err
		}
		dims = s.emb.Dimensions()
	}
	rec.Dimensions = dims
	if keep := s.maxChunks(rec); len(chunks) > keep {
		rec.ChunksOmitted = len(chunks) - keep
		chunks, windows, keys, vecs = chunks[:keep], windows[:keep], keys[:keep], vecs[:keep]
		log.Warn("file has more chunks than a vector record holds; embedding the first ones only",
			"chunks", keep+rec.ChunksOmitted, "embedded", keep, "max_record_bytes", s.cfg.MaxRecordBytes)
	}
	if err := s.embedMissing(ctx, keys, windows, vecs, prose); err != nil {
		return rec, nil, err
	}
	if len(vecs) > 0 {
		rec.Dimensions = len(vecs[0])
	}
	rec.Chunks = make([]events.ChunkVector, 0, len(chunks))
	for i, c := range chunks {
		rec.Chunks = append(rec.Chunks, events.ChunkVector{StartLine: c.StartLine, EndLine: c.EndLine, Vector: events.EncodeInt8Vector(vecs[i])})
	}
	for {
		data, err := events.Encode(rec)
		if err != nil {
			return rec, nil, bus.Permanent(err)
		}
		if len(data) <= s.cfg.MaxRecordBytes || len(rec.Chunks) == 0 {
			return rec, data, nil
		}
		// The estimate was short (long paths): drop a tenth more.
		drop := max(1, len(rec.Chunks)/10)
		rec.Chunks = rec.Chunks[:len(rec.Chunks)-drop]
		rec.ChunksOmitted += drop
	}
}

// chunkKey is what a chunk's vector is cached under: its windows, which
// hold its heading path and text. A chunk of one window has that text as
// its key.
func chunkKey(windows []string) string { return strings.Join(windows, "\x00") }

// chunkKey is the cache key of a chunk's windows in a document that is
// prose or not. A model that embeds prose and code each its own way
// (embed.KindEmbedder) embeds the same text apart in each, so the key
// says which.
func (s *Service) chunkKey(windows []string, prose bool) string {
	if _, ok := s.emb.(embed.KindEmbedder); ok && !prose {
		return "code\x00" + chunkKey(windows)
	}
	return chunkKey(windows)
}

// cached returns the cached vector of each key, nil where there is none
// (every one without a cache).
func (s *Service) cached(keys []string) ([][]float32, error) {
	if s.cache == nil || len(keys) == 0 {
		return make([][]float32, len(keys)), nil
	}
	vecs, err := s.cache.Lookup(s.model, keys)
	if err != nil {
		return nil, fmt.Errorf("embedworker: %w", err)
	}
	return vecs, nil
}

// embedMissing fills the nil vectors of vecs: it embeds the windows of
// each missing chunk (a key seen twice once) in one call, keeps each
// chunk's normalised mean and caches it.
func (s *Service) embedMissing(ctx context.Context, keys []string, windows [][]string, vecs [][]float32, prose bool) error {
	var missing []int // first index of each missing key
	at := map[string][]int{}
	var flat []string
	for i, v := range vecs {
		if v != nil {
			continue
		}
		if _, seen := at[keys[i]]; !seen {
			missing = append(missing, i)
			flat = append(flat, windows[i]...)
		}
		at[keys[i]] = append(at[keys[i]], i)
	}
	if len(missing) == 0 {
		return nil
	}
	embedded, err := s.embed(ctx, flat, prose, len(missing))
	if err != nil {
		return err
	}
	means := make([][]float32, len(missing))
	missKeys := make([]string, len(missing))
	n := 0
	for j, i := range missing {
		w := len(windows[i])
		means[j], missKeys[j] = mean(embedded[n:n+w]), keys[i]
		n += w
		for _, k := range at[keys[i]] {
			vecs[k] = means[j]
		}
	}
	if s.cache != nil {
		if err := s.cache.Store(s.model, missKeys, means); err != nil {
			return fmt.Errorf("embedworker: %w", err)
		}
	}
	return nil
}

// embed embeds texts, the windows of chunks chunks of a document that is
// prose or not, counting an unavailable model and what embedding cost.
func (s *Service) embed(ctx context.Context, texts []string, prose bool, chunks int) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := s.embedMetered(ctx, texts, chunks, func(ctx context.Context) ([][]float32, error) {
		return embed.EmbedDocs(ctx, s.emb, texts, prose)
	})
	if err != nil {
		if errors.Is(err, embed.ErrUnavailable) {
			s.unavailable.Add(1)
		}
		return nil, fmt.Errorf("embedworker: embed with %s: %w", s.model, err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embedworker: %s returned %d vectors for %d texts", s.model, len(vecs), len(texts))
	}
	return vecs, nil
}

// maxChunks is how many chunk vectors fit in a record like rec.
func (s *Service) maxChunks(rec events.VectorRecord) int {
	// {"start":…,"end":…,"vector":"q8:…"}, with room for large line
	// numbers; the fixed part covers the envelope, names and hash.
	per := 3 + 4*((4+max(rec.Dimensions, 1)+2)/3) + 48
	fixed := 512 + 2*(len(rec.Repo)+len(rec.Path)+len(rec.Model))
	return max(0, (s.cfg.MaxRecordBytes-fixed)/per)
}

// windowTokens is Config.WindowTokens for the texts of a document that
// is prose or not, by the model that embeds them.
func (s *Service) windowTokens(prose bool) int {
	if s.cfg.WindowTokens != 0 {
		return s.cfg.WindowTokens
	}
	model := s.model
	if p, c, ok := split.Parts(model); ok {
		model = c
		if prose {
			model = p
		}
	}
	if model == builtin.ModelID {
		return 100
	}
	return 0
}

// texts returns the chunks that have text and, for each, the texts to
// embed: the heading path line and its lines, in windows of whole lines
// when it exceeds window tokens.
func (s *Service) texts(content string, all []events.Chunk, window int) ([]events.Chunk, [][]string) {
	bare := make([]events.Chunk, len(all))
	for i, c := range all {
		bare[i] = events.Chunk{StartLine: c.StartLine, EndLine: c.EndLine}
	}
	bodies := docparse.ChunkTexts(content, bare)
	var chunks []events.Chunk
	var windows [][]string
	for i, body := range bodies {
		if strings.TrimSpace(body) == "" {
			continue
		}
		prefix := ""
		if len(all[i].HeadingPath) > 0 {
			prefix = strings.Join(all[i].HeadingPath, " > ") + "\n"
		}
		chunks = append(chunks, all[i])
		windows = append(windows, splitLines(prefix, body, window))
	}
	return chunks, windows
}

// splitLines cuts body into texts of whole lines, each prefixed, of at most
// limit tokens (a single longer line stands alone); limit 0 keeps it
// whole.
func splitLines(prefix, body string, limit int) []string {
	if limit <= 0 || tokens.Count(prefix+body) <= limit {
		return []string{prefix + body}
	}
	var out []string
	budget := limit - tokens.Count(prefix)
	var cur strings.Builder
	used := 0
	for line := range strings.Lines(body) {
		n := tokens.Count(line)
		if used > 0 && used+n > budget {
			out = append(out, prefix+strings.TrimSuffix(cur.String(), "\n"))
			cur.Reset()
			used = 0
		}
		cur.WriteString(line)
		used += n
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, prefix+strings.TrimSuffix(cur.String(), "\n"))
	}
	return out
}

// mean is the L2-normalised mean of vecs (vecs[0] itself when alone).
func mean(vecs [][]float32) []float32 {
	if len(vecs) == 1 {
		return vecs[0]
	}
	out := make([]float32, len(vecs[0]))
	for _, v := range vecs {
		for i, x := range v {
			out[i] += x
		}
	}
	var sum float64
	for _, x := range out {
		sum += float64(x) * float64(x)
	}
	if norm := math.Sqrt(sum); norm > 0 {
		for i := range out {
			out[i] = float32(float64(out[i]) / norm)
		}
	}
	return out
}
