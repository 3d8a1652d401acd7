package edge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/localdb"
	"github.com/cuedeck/cuedeck/internal/priority"
	"github.com/cuedeck/cuedeck/pkg/core/origin"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// DocsWatcher is the part of the cue_docs KeyValue bucket the materialiser
// uses; a jetstream.KeyValue is one.
type DocsWatcher interface {
	WatchAll(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error)
}

// VectorsWatcher is the part of the cue_vectors KeyValue bucket the
// materialiser uses; a jetstream.KeyValue is one.
type VectorsWatcher interface {
	Watch(ctx context.Context, keys string, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error)
}

// BlobGetter is the part of the cue_blobs object store the materialiser
// uses; a jetstream.ObjectStore is one.
type BlobGetter interface {
	GetBytes(ctx context.Context, name string, opts ...jetstream.GetObjectOpt) ([]byte, error)
}

// Config configures a Materialiser.
type Config struct {
	// Dir is the Badger directory; empty keeps the store in memory.
	Dir string
	// Docs is the cue_docs bucket and Blobs the cue_blobs object store.
	Docs  DocsWatcher
	Blobs BlobGetter
	// Logger receives warnings about undecodable records and missing
	// blobs; nil discards.
	Logger *slog.Logger
	// Embedder is the model of semantic search, nil for keyword search
	// only. The materialiser follows the records of its ModelID in
	// Vectors; the Edge embeds queries with it.
	Embedder embed.Embedder
	// Vectors is the cue_vectors bucket; without it (or an Embedder) the
	// edge has no vectors and answers every mode by keyword.
	Vectors VectorsWatcher
	// Memories is the cue_memories bucket; without it the edge serves no
	// memories (search_memories finds nothing, scenes have no recent
	// decisions) and its readiness does not wait for them.
	Memories MemoriesWatcher
	// MaxContentInMemory is the largest document whose content is kept in
	// memory; larger ones are read from Badger on each read_doc. Default
	// 1 MiB. Content over plainContent is kept S2-compressed: holding
	// every file as it is would cost the daemon about the repository's
	// size in RAM, twice over with garbage collection.
	MaxContentInMemory int
	// History bounds the earlier versions of each document the store
	// keeps for read_doc's since_hash; zero fields take the defaults
	// (DefaultHistoryVersions, DefaultHistoryBytes), and Versions < 0
	// keeps none.
	History HistoryLimits
	// BeforeApply, when set, is called with each batch's bucket and size
	// before the batch is applied, on the goroutine following that bucket:
	// while it blocks, that bucket's materialisation waits. It is the seam
	// that lets tests (and tracing) observe a replay in progress; ctx ends
	// when Run is stopping.
	BeforeApply func(ctx context.Context, bucket string, entries int)
	// Gate, if set, counts applying a batch as foreground work, so that
	// background embedding in the same process gives way to it.
	Gate *priority.Gate
	// Loading, if set, hears how far Open is in loading the store: what
	// it is doing and how many documents it has done, every thousand.
	Loading func(what string, done int)
	// VectorsAfter, if set, holds the replay of cue_vectors back until it
	// is closed. The vectors are not stored, so every start replays them
	// (tens of MB for a few thousand files): a daemon lets its start
	// finish first, which the replay would otherwise slow on a small
	// machine. Hybrid answers meanwhile say how few vectors they had.
	VectorsAfter <-chan struct{}
	// Sources, if set, are the streams behind the buckets as they are
	// now (ReadSources): a store built from another incarnation of a
	// bucket, or from further than the bucket now reaches, is discarded
	// at Open and the bucket replayed. While Run follows, the buckets are
	// compared again every SourceCheck and whenever a watch is re-created;
	// what came from a bucket replaced under a running edge is discarded
	// and the bucket replayed, as Open does (startOver).
	Sources Sources
	// SourceCheck is how often Run compares the buckets with the
	// incarnations the store was built from; default 5 s. A watch does
	// not end when its bucket is deleted and created again (it resumes
	// on the new one past the entries it lacks), so this check is how a
	// running edge learns of it: one stream-info request per bucket.
	SourceCheck time.Duration
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxContentInMemory == 0 {
		c.MaxContentInMemory = 1 << 20
	}
	if c.History.Versions == 0 {
		c.History.Versions = DefaultHistoryVersions
	}
	if c.History.Bytes == 0 {
		c.History.Bytes = DefaultHistoryBytes
	}
	if c.SourceCheck == 0 {
		c.SourceCheck = 5 * time.Second
	}
}

// Errors of the Materialiser.
var (
	// ErrStopped is returned by WaitRevision and reads once Run has
	// returned or Close was called.
	ErrStopped = errors.New("edge: materialiser stopped")
	// ErrRunning is returned by a second call of Run.
	ErrRunning = errors.New("edge: materialiser already running")
)

// Status is what an edge reports about its materialised state.
type Status struct {
	// Ready is true once the initial replays of cue_docs and cue_memories
	// are done.
	Ready bool
	// Docs counts materialised documents, Skipped those among them that
	// ingest did not index.
	Docs    int
	Skipped int
	// Revision is the last applied cue_docs revision.
	Revision uint64
	// Applied counts the entries applied since Open; Undecodable those
	// among them that were dropped because they did not decode.
	Applied     uint64
	Undecodable uint64
	// Model is the embedding model whose vectors the edge follows, ""
	// when it has none; VectorDocs counts the documents whose current
	// content has vectors, VectorRevision is the last applied cue_vectors
	// revision. VectorBytes estimates the vector index's memory.
	Model          string
	VectorDocs     int
	VectorRevision uint64
	VectorBytes    int
	// Memories counts materialised memories, MemoryVectors those among
	// them with a vector of Model (they trail the records);
	// MemoryRevision is the last applied cue_memories revision, and
	// MemoriesUndecodable counts the entries dropped since Open because
	// they did not decode.
	Memories            int
	MemoryVectors       int
	MemoryRevision      uint64
	MemoriesUndecodable uint64
	// StoreDamaged is true from a read that found the store damaged
	// while the edge ran until the store is emptied to be rebuilt from
	// cue_docs; what it cannot read meanwhile is answered from cue_docs.
	StoreDamaged bool
}

// FeedStatus is the progress of one bucket the materialiser follows, for
// operators' lag reports (internal/telemetry compares Revision with the
// bucket's head).
type FeedStatus struct {
	// Bucket is the KeyValue bucket, such as cue_docs.
	Bucket string
	// Keys is the key filter the materialiser watches: ">" for the whole
	// bucket, or a prefix such as a model's vectors.
	Keys string
	// Revision is the last applied revision of the bucket.
	Revision uint64
	// LastApplied is when a batch of the bucket was last applied or its
	// replay ended, whichever is later: the last moment the edge knew it
	// was current. Zero before either.
	LastApplied time.Time
	// Replayed is true once the initial replay is done. GatesReady says
	// whether readiness (Ready) waits for it: vectors trail.
	Replayed   bool
	GatesReady bool
}

// feedProgress is what Feeds reports of one followed bucket.
type feedProgress struct {
	bucket, keys string
	gatesReady   bool
	rev          func() uint64
	appliedAt    atomic.Int64 // unix nanoseconds; 0 before the first batch
	replayed     atomic.Bool
}

// replayDone notes the end of the initial replay, when the feed was current.
func (p *feedProgress) replayDone() {
	p.replayed.Store(true)
	p.appliedAt.Store(time.Now().UnixNano())
}

// doc is a materialised document in memory.
type doc struct {
	key string
	rev uint64
	// rec is the record; rec.Content is empty unless inMemory and not
	// packed.
	rec      events.DocRecord
	inMemory bool
	// packed is the content S2-compressed, for content in memory that is
	// larger than plainContent.
	packed  []byte
	anchors []string
	// targets are the names of each link's target (linkTargets), for the
	// graph route.
	targets [][]string
	// origin is the page's language and whether it is a post (prior.go).
	origin origin.Origin
	// module is a go.mod's module path, read while its content is at hand.
	module string
	// trimmedTokens caches tokens.Count of the trimmed content plus one
	// (0: not counted yet); counting costs far more than serving.
	trimmedTokens atomic.Int64
}

// Materialiser keeps an edge's local copy of cue_docs: it watches the bucket,
// writes each entry to its Store and keeps an in-memory view and keyword
// index in step. Its reads are safe for concurrent use with Run.
type Materialiser struct {
	cfg    Config
	logger *slog.Logger
	// rewatch is closed by Rewatch to end every current watch.
	rewatchMu sync.Mutex
	rewatch   chan struct{}
	store     *Store
	index     *search.Index
	// vindex holds the vectors of documents whose current content they
	// embed; nil without an embedder. It is written only under mu.
	vindex *vector.Index
	model  string

	mu      sync.RWMutex
	docs    map[string]*doc
	byPath  map[string][]string // repo-relative path → doc keys
	repos   map[string]int      // repo → documents
	skipped int
	rev     uint64
	// settled is rev once the hooks of its changes have run: what
	// WaitRevision waits for.
	settled     uint64
	applied     uint64
	undecodable uint64
	// changed is closed and replaced whenever rev advances or the
	// materialiser stops, waking WaitRevision.
	changed chan struct{}
	stopped bool
	// pathsGen counts changes to the set of paths, for suggestion caches.
	pathsGen uint64
	// startOvers counts the replays from the start of a replaced bucket
	// (startOver): revisions before and after one name different states.
	startOvers uint64
	running    bool
	// vecs is the vector state of each document with a record of model;
	// vrev the last applied cue_vectors revision.
	vecs map[string]*vecState
	vrev uint64
	// mems is the materialised cue_memories (memories.go); mrev, under
	// mu, its last applied revision.
	mems *memState
	mrev uint64

	// ready is closed when readyLeft, the replays still to finish, falls
	// to zero.
	ready                chan struct{}
	readyLeft            atomic.Int32
	docsReady, memsReady sync.Once

	// imp caches importance scores per repo (importance.go).
	imp importanceCache
	// prior caches what the origin prior needs (prior.go).
	prior priorCache

	// progress is one entry per bucket Run follows.
	progress []*feedProgress

	// appliedHooks, under mu, hear the keys of each applied batch.
	appliedHooks []func(keys []string)
	// startOverHooks, under mu, hear the bucket of each replay from the
	// start (OnStartOver).
	startOverHooks []func(bucket string)

	// storeDamaged is set by a read that found the store damaged
	// (content) and cleared once the store is emptied (discardStore);
	// docsRebuild, under mu, is the cue_docs follower's channel that has
	// it rebuild the store while it runs (rebuildDamagedStore), nil when
	// Run is not following.
	storeDamaged atomic.Bool
	docsRebuild  chan *replaced
	// srcIDs, under srcMu, are the incarnations of the buckets the
	// materialiser follows, as Open found them or the first check read
	// them (sources.go).
	srcMu  sync.Mutex
	srcIDs map[string]string
	// recheck asks for a comparison of the buckets now (Recheck).
	recheck chan struct{}

	// storeMu keeps reads of the store from racing its close.
	storeMu   sync.RWMutex
	closeOnce sync.Once
	closeErr  error
}

// Open opens the store in cfg.Dir and rebuilds the in-memory view and index
// from it, so the edge answers from local state before it reaches JetStream.
// Call Run to follow cue_docs, or Close if Run is never called.
func Open(cfg Config) (*Materialiser, error) {
	cfg.setDefaults()
	m, err := open(cfg)
	if errors.Is(err, localdb.ErrDamaged) && cfg.Dir != "" {
		// The store is derived from cue_docs: move the damaged one aside
		// and replay the bucket into a new one. Damage shows either in a
		// table, checked before the store opens, or in a document that
		// cannot be read back (a value log cut short or garbled) while
		// every document is loaded.
		aside, rerr := localdb.MoveAside(cfg.Dir)
		if rerr != nil {
			return nil, fmt.Errorf("%w (moving it aside failed: %v; remove %s to rebuild it from JetStream)", err, rerr, cfg.Dir)
		}
		cfg.Logger.Error("the edge's store is damaged; moved it aside, rebuilding it from cue_docs", "err", err, "moved_to", aside)
		m, err = open(cfg)
	}
	return m, err
}

// open is Open of the store as it is found.
func open(cfg Config) (*Materialiser, error) {
	store, err := OpenStore(cfg.Dir, cfg.Logger)
	if err != nil {
		return nil, err
	}
	srcIDs := map[string]string{}
	if cfg.Sources != nil {
		discarded, err := store.reconcileSources(cfg.Sources)
		if err != nil {
			store.Close()
			return nil, err
		}
		for _, why := range discarded {
			cfg.Logger.Warn("the edge's store no longer matches its source: discarded it, replaying from the start", "found", why)
		}
		for b, st := range cfg.Sources {
			srcIDs[b] = st.ID()
		}
	}
	store.history = cfg.History
	m := &Materialiser{
		cfg:     cfg,
		logger:  cfg.Logger,
		store:   store,
		index:   search.NewIndex(),
		docs:    make(map[string]*doc),
		byPath:  make(map[string][]string),
		repos:   make(map[string]int),
		changed: make(chan struct{}),
		ready:   make(chan struct{}),
		vecs:    make(map[string]*vecState),
		srcIDs:  srcIDs,
		recheck: make(chan struct{}, 1),
	}
	dims := 0
	if e := cfg.Embedder; e != nil {
		m.model = e.ModelID()
		dims = e.Dimensions()
		m.vindex = vector.New(dims)
	}
	m.mems = newMemState(dims)
	m.readyLeft.Store(1)
	m.progress = []*feedProgress{{bucket: events.DocsBucket, keys: ">", gatesReady: true, rev: m.Revision}}
	if cfg.Memories != nil {
		m.readyLeft.Add(1)
		m.progress = append(m.progress, &feedProgress{bucket: events.MemoriesBucket, keys: ">", gatesReady: true, rev: m.MemoryRevision})
	}
	if m.vindex != nil && cfg.Vectors != nil {
		m.progress = append(m.progress, &feedProgress{bucket: events.VectorsBucket, keys: events.VectorKeyPrefix(m.model), rev: m.VectorRevision})
	}
	if err := m.rebuild(); err != nil {
		store.Close()
		return nil, err
	}
	return m, nil
}

// rebuild loads every stored document into memory and the index. Indexing
// (tokenizing and stemming) dominates, so it runs on every CPU while this
// goroutine reads the store.
func (m *Materialiser) rebuild() error {
	rev, err := m.store.LastRevision()
	if err != nil {
		return err
	}
	start := time.Now()
	// A clean stop left the keyword index beside the store: if it is of
	// the store's revision and holds exactly its documents, nothing needs
	// analysing again. It loads while the documents are read.
	snapshot := make(chan bool, 1)
	go func() { snapshot <- m.loadSnapshot(rev) }()
	var indexedKeys []string
	m.loading("reading the stored documents", 0)
	err = forEachPrepared(m.store, m.memDoc, func(d *doc) error {
		if n := len(m.docs); n%1000 == 0 && n > 0 {
			m.loading("reading the stored documents", n)
		}
		if d.rec.Skip == nil {
			indexedKeys = append(indexedKeys, d.key)
		}
		m.putLocked(d.key, d)
		return nil
	})
	fromSnapshot := <-snapshot
	if err != nil {
		return err
	}
	// The paths' keys in the order of the store, as a sequential read
	// left them.
	for _, keys := range m.byPath {
		if len(keys) > 1 {
			slices.Sort(keys)
		}
	}
	indexed, missing := len(indexedKeys), 0
	if fromSnapshot {
		for _, key := range indexedKeys {
			if !m.index.Has(key) {
				missing++
			}
		}
	}
	if fromSnapshot && (missing > 0 || m.index.Len() != indexed) {
		m.logger.Warn("the saved keyword index does not match the store; rebuilding it", "store_docs", indexed, "index_docs", m.index.Len(), "missing", missing)
		m.index, fromSnapshot = search.NewIndex(), false
	}
	if !fromSnapshot {
		if err := m.reindex(); err != nil {
			return err
		}
	}
	m.rev, m.settled = rev, rev
	m.logger.Info("rebuilt the doc index from the store", "docs", len(m.docs), "revision", rev, "saved_keyword_index", fromSnapshot, "took", time.Since(start))
	return nil
}

// reindex analyses every indexed document of the store into the keyword
// index, on every CPU while this goroutine reads the store.
func (m *Materialiser) reindex() error {
	type job struct {
		key    string
		fields search.Fields
	}
	m.loading("indexing the stored documents for keyword search", 0)
	done := 0
	jobs := make(chan job, 64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				m.index.Upsert(j.key, j.fields)
			}
		})
	}
	err := m.store.ForEach(func(d Doc) error {
		if d.Record.Skip == nil {
			jobs <- job{d.Key, fieldsOf(&d.Record)}
		}
		if done++; done%1000 == 0 {
			m.loading("indexing the stored documents for keyword search", done)
		}
		return nil
	})
	close(jobs)
	wg.Wait()
	return err
}

func (m *Materialiser) loading(what string, done int) {
	if m.cfg.Loading != nil {
		m.cfg.Loading(what, done)
	}
}

// snapshotName is the keyword index saved beside the store at a clean
// stop, zstd-compressed: to half its size, where S2 took it to two
// thirds (18.1 MB of the first 5,000 files of Go's src: 9.3 MB, S2 12.5;
// 56 ms to read back, S2 33), a tenth of the cache on disk. Badger
// ignores files it does not know.
const snapshotName = "keyword-index.zst"

// oldSnapshotName is where releases before kept it, S2-compressed: a
// start reads it no more, and removes it.
const oldSnapshotName = "keyword-index.s2"

// loadSnapshot takes the saved keyword index if it was saved at the
// store's revision rev, and removes the file: from the next change on it
// would no longer match, and a crash must not find it.
func (m *Materialiser) loadSnapshot(rev uint64) bool {
	if m.cfg.Dir == "" {
		return false
	}
	if err := os.Remove(filepath.Join(m.cfg.Dir, oldSnapshotName)); err == nil {
		m.logger.Info("removed the keyword index an older release saved; rebuilding it")
	}
	path := filepath.Join(m.cfg.Dir, snapshotName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		m.logger.Warn("cannot read the saved keyword index; rebuilding it", "err", err)
		return false
	}
	ix, stamp, err := readSnapshot(f)
	f.Close()
	if rerr := os.Remove(path); rerr != nil {
		m.logger.Warn("cannot remove the saved keyword index", "path", path, "err", rerr)
	}
	switch {
	case err != nil:
		m.logger.Warn("the saved keyword index is damaged; rebuilding it", "err", err)
		return false
	case stamp != rev:
		m.logger.Info("the saved keyword index is of another revision; rebuilding it", "saved", stamp, "store", rev)
		return false
	}
	m.index = ix
	return true
}

// readSnapshot reads a keyword index saveSnapshot wrote.
func readSnapshot(r io.Reader) (*search.Index, uint64, error) {
	z, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, 0, err
	}
	defer z.Close()
	return search.ReadSnapshot(z)
}

// saveSnapshot writes the keyword index beside the store, stamped with
// the store's revision, once nothing writes to either.
func (m *Materialiser) saveSnapshot() {
	if m.cfg.Dir == "" {
		return
	}
	rev, err := m.store.LastRevision()
	if err != nil || rev != m.Revision() {
		return // the index and the store disagree: a rebuild is right
	}
	start := time.Now()
	path := filepath.Join(m.cfg.Dir, snapshotName)
	tmp := path + ".tmp"
	err = func() error {
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		z, err := zstd.NewWriter(f)
		if err != nil {
			f.Close()
			return err
		}
		if err := m.index.WriteSnapshot(z, rev); err != nil {
			z.Close()
			f.Close()
			return err
		}
		if err := z.Close(); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, path)
	}()
	if err != nil {
		os.Remove(tmp)
		m.logger.Warn("cannot save the keyword index; the next start rebuilds it", "err", err)
		return
	}
	m.logger.Info("saved the keyword index", "revision", rev, "took", time.Since(start).Round(time.Millisecond))
}

// Run follows cue_docs until ctx is cancelled: from the start when the store
// is fresh, otherwise from the revision after its last one. A broken watch is
// re-established from where it stopped. Run returns nil when cancelled, after
// syncing and closing the store; it returns early only if the store fails.
func (m *Materialiser) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return ErrStopped
	}
	if m.running {
		m.mu.Unlock()
		return ErrRunning
	}
	m.running = true
	m.mu.Unlock()
	if m.cfg.Docs == nil {
		m.stop()
		return errors.Join(errors.New("edge: Config.Docs is nil: pass the cue_docs KeyValue"), m.Close())
	}

	runErr := m.followAll(ctx)
	m.stop()
	// Order: the watch has stopped (follow returned), so nothing writes to
	// the store; sync and close it.
	if err := m.Close(); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// feed is one bucket the materialiser follows.
type feed struct {
	bucket string
	open   func(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error)
	rev    func() uint64
	apply  func(ctx context.Context, entries []jetstream.KeyValueEntry) error
	ready  func()
	// source is the bucket, when it can say which incarnation of its
	// stream it is (a jetstream.KeyValue can).
	source any
	// progress records applied batches and the replay's end, for Feeds.
	progress *feedProgress
	// after, if set, is closed when the feed may start.
	after <-chan struct{}
	// replaced hands the follower a divergence the periodic check found
	// (checkSourcesEvery).
	replaced chan *replaced
}

// followAll follows cue_docs, cue_memories and, with an embedder,
// cue_vectors, and embeds memories, until ctx ends or the store fails; a
// store failure of one stops all.
func (m *Materialiser) followAll(ctx context.Context) error {
	feeds := []feed{{bucket: events.DocsBucket, open: m.cfg.Docs.WatchAll, rev: m.Revision, apply: m.apply, ready: m.markReady, source: m.cfg.Docs}}
	if m.cfg.Memories != nil {
		feeds = append(feeds, feed{
			bucket: events.MemoriesBucket, open: m.cfg.Memories.WatchAll, rev: m.MemoryRevision, apply: m.applyMemories, source: m.cfg.Memories,
			ready: func() {
				m.memsReady.Do(func() {
					n, _, _ := m.memoryCounts()
					m.logger.Info("cue_memories replay done", "memories", n, "revision", m.MemoryRevision())
					m.partReady()
				})
			},
		})
	}
	if m.vindex != nil && m.cfg.Vectors != nil {
		feeds = append(feeds, feed{
			bucket: events.VectorsBucket,
			open: func(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
				return m.cfg.Vectors.Watch(ctx, events.VectorKeyPrefix(m.model), opts...)
			},
			rev:    m.VectorRevision,
			apply:  m.applyVectors,
			source: m.cfg.Vectors,
			after:  m.cfg.VectorsAfter,
			ready: func() {
				m.logger.Info("cue_vectors replay done", "model", m.model, "docs", m.Status().VectorDocs, "revision", m.VectorRevision())
			},
		})
	}
	for i := range feeds {
		feeds[i].progress = m.progressOf(feeds[i].bucket)
		feeds[i].replaced = make(chan *replaced, 1)
	}
	m.mu.Lock()
	m.docsRebuild = feeds[0].replaced
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.docsRebuild = nil
		m.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(feeds))
	for i, f := range feeds {
		wg.Go(func() {
			errs[i] = m.follow(ctx, f)
			cancel()
		})
	}
	if m.cfg.Memories != nil && m.mems.vindex != nil {
		wg.Go(func() { m.embedMemories(ctx, m.cfg.Embedder) })
	}
	wg.Go(func() { m.checkSourcesEvery(ctx, feeds) })
	wg.Wait()
	return errors.Join(errs...)
}

// follow watches f until ctx ends or the store fails.
func (m *Materialiser) follow(ctx context.Context, f feed) error {
	if f.after != nil {
		select {
		case <-f.after:
		case <-ctx.Done():
			return nil
		}
	}
	delay := 100 * time.Millisecond
	for first := true; ; first = false {
		if !first {
			// A watch re-created after an outage may find another
			// incarnation of the bucket behind it.
			if r, _ := m.checkSource(ctx, f); r != nil {
				if err := m.startOver(f, r); err != nil {
					return err
				}
			}
		}
		progressed, err := m.watch(ctx, f)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errStore) {
			return err
		}
		if r, ok := errors.AsType[*replaced](err); ok {
			if err := m.startOver(f, r); err != nil {
				return err
			}
			continue
		}
		if progressed {
			delay = 100 * time.Millisecond
		}
		if errors.Is(err, errRewatch) {
			m.logger.Info("watch re-created after the connection came back", "bucket", f.bucket, "revision", f.rev())
			continue
		}
		m.logger.Warn("watch interrupted; retrying", "bucket", f.bucket, "err", err, "revision", f.rev(), "retry_in", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		delay = min(delay*2, 5*time.Second)
	}
}

// errRewatch ends a watch that Rewatch asked to re-create.
var errRewatch = errors.New("re-created after the connection came back")

// Rewatch re-creates every watch from the revision it reached. Call it when
// the connection to the server came back: a watch whose server restarted
// would otherwise wait for missed heartbeats to notice (seconds).
func (m *Materialiser) Rewatch() {
	m.rewatchMu.Lock()
	defer m.rewatchMu.Unlock()
	if m.rewatch != nil {
		close(m.rewatch)
	}
	m.rewatch = make(chan struct{})
}

func (m *Materialiser) rewatchSignal() <-chan struct{} {
	m.rewatchMu.Lock()
	defer m.rewatchMu.Unlock()
	if m.rewatch == nil {
		m.rewatch = make(chan struct{})
	}
	return m.rewatch
}

// errStore marks failures of the local store, which stop Run: continuing
// would let memory and disk disagree.
var errStore = errors.New("edge: store failed")

// maxBatch bounds how many entries share one store transaction.
const maxBatch = 256

// watch runs one KV watcher of f. progressed reports whether anything was
// applied.
func (m *Materialiser) watch(ctx context.Context, f feed) (progressed bool, err error) {
	var opts []jetstream.WatchOpt
	if rev := f.rev(); rev > 0 {
		opts = append(opts, jetstream.ResumeFromRevision(rev+1))
	}
	w, err := f.open(ctx, opts...)
	if err != nil {
		return false, fmt.Errorf("watch %s: %w", f.bucket, err)
	}
	defer stopWatcher(w)
	updates := w.Updates()
	rewatch := m.rewatchSignal()
	batch := make([]jetstream.KeyValueEntry, 0, maxBatch)
	for {
		var first jetstream.KeyValueEntry
		select {
		case <-ctx.Done():
			return progressed, ctx.Err()
		case <-rewatch:
			return progressed, errRewatch
		case r := <-f.replaced:
			return progressed, r
		case e, ok := <-updates:
			if !ok {
				return progressed, errors.New("watcher closed")
			}
			if e == nil {
				f.progress.replayDone()
				f.ready()
				continue
			}
			first = e
		}
		// Take what is already waiting, so a replay commits in batches.
		batch = append(batch[:0], first)
		initDone, closed := false, false
	drain:
		for len(batch) < maxBatch {
			select {
			case e, ok := <-updates:
				switch {
				case !ok:
					closed = true
					break drain
				case e == nil:
					initDone = true
					break drain
				}
				batch = append(batch, e)
			default:
				break drain
			}
		}
		if hook := m.cfg.BeforeApply; hook != nil {
			hook(ctx, f.bucket, len(batch))
		}
		// Vectors are the embedder's own output: applying them is not
		// work the embedder should wait for.
		end := func() {}
		if f.bucket != events.VectorsBucket {
			end = m.cfg.Gate.Begin()
		}
		err := f.apply(ctx, batch)
		end()
		if err != nil {
			return progressed, err
		}
		f.progress.appliedAt.Store(time.Now().UnixNano())
		progressed = true
		if initDone {
			f.progress.replayDone()
			f.ready()
		}
		if closed {
			return progressed, errors.New("watcher closed")
		}
	}
}

// stopWatcher stops w and drains its channel, so the subscription's
// delivery goroutine, which may be blocked sending to it, can finish.
func stopWatcher(w jetstream.KeyWatcher) {
	_ = w.Stop()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case _, ok := <-w.Updates():
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

func (m *Materialiser) markReady() {
	m.docsReady.Do(func() {
		m.logger.Info("cue_docs replay done", "docs", m.Status().Docs, "revision", m.Revision())
		m.partReady()
	})
}

// partReady counts one replay done and closes ready after the last.
func (m *Materialiser) partReady() {
	if m.readyLeft.Add(-1) == 0 {
		close(m.ready)
	}
}

// apply turns entries into changes, writes them to the store and then to
// memory. Entries at or below the applied revision are skipped: a resumed
// or re-established watch may repeat a few.
func (m *Materialiser) apply(ctx context.Context, entries []jetstream.KeyValueEntry) error {
	last := m.Revision()
	changes := make([]Change, 0, len(entries))
	undecodable := 0
	for _, e := range entries {
		if e.Revision() <= last {
			continue
		}
		c, bad, err := m.change(ctx, e)
		if err != nil {
			return err
		}
		if bad {
			undecodable++
		}
		changes = append(changes, c)
		last = e.Revision()
	}
	if len(changes) == 0 {
		return nil
	}
	if err := m.store.Apply(changes); err != nil {
		return fmt.Errorf("%w: %w", errStore, err)
	}
	m.publish(changes, undecodable)
	return nil
}

// change decodes one entry. An entry that does not decode removes its key's
// document (bad is true): the bucket keeps one value per key, so a fresh
// edge replaying it would not have the older value either, and the two must
// agree. err is non-nil only when ctx ends while fetching a blob.
func (m *Materialiser) change(ctx context.Context, e jetstream.KeyValueEntry) (c Change, bad bool, err error) {
	c = Change{Key: e.Key(), Rev: e.Revision()}
	repo, path, perr := events.ParseDocKey(e.Key())
	if e.Operation() == jetstream.KeyValueDelete || e.Operation() == jetstream.KeyValuePurge {
		return c, false, nil
	}
	log := m.logger.With("key", e.Key(), "repo", repo, "path", path, "revision", e.Revision())
	if perr != nil {
		log.Warn("cue_docs entry has a key that is not a DocKey; ignoring it", "err", perr)
		return c, true, nil
	}
	rec, derr := events.DecodeDocRecord(e.Value())
	if derr == nil && (rec.Repo != repo || rec.Path != path) {
		derr = fmt.Errorf("record names %s/%s", rec.Repo, rec.Path)
	}
	if derr != nil {
		log.Warn("undecodable doc record; dropping the document until the indexer rewrites it", "err", derr)
		return c, true, nil
	}
	if rec.Deleted {
		return c, false, nil
	}
	if rec.Skip == nil && rec.Blob != "" && rec.Content == "" {
		content, skip, err := m.fetchBlob(ctx, log, rec.Blob)
		if err != nil {
			return c, false, err
		}
		rec.Content, rec.Skip = content, skip
	}
	if rec.Skip != nil {
		rec.Content = ""
	}
	c.Doc = &Doc{Key: e.Key(), Rev: e.Revision(), Record: rec}
	return c, false, nil
}

// fetchBlob reads a blob, retrying transient failures until ctx ends. A
// missing or corrupt blob makes the document skipped, with the reason, so
// read_doc can say why it cannot be read.
func (m *Materialiser) fetchBlob(ctx context.Context, log *slog.Logger, sha string) (string, *events.Skip, error) {
	if m.cfg.Blobs == nil {
		log.Warn("doc record names a blob but this edge has no blob store", "blob", sha)
		return "", &events.Skip{Reason: events.SkipUnreadable, Detail: "blob " + sha + " cannot be fetched: this edge was started without " + events.BlobsBucket}, nil
	}
	delay := 100 * time.Millisecond
	for {
		b, err := m.cfg.Blobs.GetBytes(ctx, sha)
		switch {
		case err == nil && events.SHA256Hex(b) == sha:
			s := string(b)
			if !utf8.ValidString(s) {
				s = strings.ToValidUTF8(s, "\uFFFD")
			}
			return s, nil, nil
		case err == nil:
			log.Warn("blob content does not match its name", "blob", sha)
			return "", &events.Skip{Reason: events.SkipUnreadable, Detail: "blob " + sha + " in " + events.BlobsBucket + " is corrupt; re-save the file to re-ingest it"}, nil
		case errors.Is(err, jetstream.ErrObjectNotFound):
			log.Warn("blob named by a doc record is missing", "blob", sha)
			return "", &events.Skip{Reason: events.SkipUnreadable, Detail: "blob " + sha + " is missing from " + events.BlobsBucket + "; re-save the file to re-ingest it"}, nil
		}
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		log.Warn("fetching blob failed; retrying", "blob", sha, "err", err, "retry_in", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", nil, ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, 5*time.Second)
	}
}

// publish brings the index and the view in step with changes already in
// the store. Only Run's goroutine calls it, so index updates keep order.
func (m *Materialiser) publish(changes []Change, undecodable int) {
	mem := make([]*doc, len(changes))
	for i, c := range changes {
		if c.Doc == nil || c.Doc.Record.Skip != nil {
			m.index.Remove(c.Key)
		} else {
			m.index.Upsert(c.Key, fieldsOf(&c.Doc.Record))
		}
		if c.Doc != nil {
			mem[i] = m.memDoc(*c.Doc)
		}
	}
	m.mu.Lock()
	for i, c := range changes {
		m.putLocked(c.Key, mem[i])
		m.syncVectorsLocked(c.Key)
	}
	m.rev = changes[len(changes)-1].Rev
	m.applied += uint64(len(changes))
	m.undecodable += uint64(undecodable)
	hooks := m.appliedHooks
	m.mu.Unlock()
	if len(hooks) > 0 {
		keys := make([]string, len(changes))
		for i, c := range changes {
			keys[i] = c.Key
		}
		for _, h := range hooks {
			h(keys)
		}
	}
	// Waiters wake after the hooks: whoever waited for this revision finds
	// the answers of the documents it changed already dropped.
	m.mu.Lock()
	m.settled = max(m.settled, changes[len(changes)-1].Rev)
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
}

// onApplied has fn called with the keys of each batch of cue_docs changes
// once it is applied (reads see it), on the goroutine applying it.
func (m *Materialiser) onApplied(fn func(keys []string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.appliedHooks = append(m.appliedHooks, fn)
}

// memDoc is the in-memory form of d; large contents stay in the store only.
func (m *Materialiser) memDoc(d Doc) *doc {
	md := &doc{key: d.Key, rev: d.Rev, rec: d.Record}
	md.rec.Headings = plainHeadings(md.rec.Headings)
	md.anchors = docAnchors(&md.rec)
	md.origin = docOrigin(&md.rec)
	if len(d.Record.Links) > 0 {
		md.targets = make([][]string, len(d.Record.Links))
		for i, l := range d.Record.Links {
			md.targets[i] = linkTargets(d.Record.Path, l)
		}
	}
	if d.Record.Path == "go.mod" {
		md.module = goModule(d.Record.Content)
	}
	md.inMemory = len(d.Record.Content) <= m.cfg.MaxContentInMemory
	if !md.inMemory {
		md.rec.Content = ""
	} else if len(d.Record.Content) > plainContent {
		md.packed = packContent(d.Record.Content)
		md.rec.Content = ""
	}
	return md
}

// putLocked sets key's document to d, or removes it when d is nil.
func (m *Materialiser) putLocked(key string, d *doc) {
	if old, ok := m.docs[key]; ok {
		if old.rec.Skip != nil {
			m.skipped--
		}
		if d == nil {
			delete(m.docs, key)
			m.dropPathLocked(old.rec.Repo, old.rec.Path, key)
		} else {
			m.docs[key] = d
		}
	} else if d != nil {
		m.docs[key] = d
		m.byPath[d.rec.Path] = append(m.byPath[d.rec.Path], key)
		m.repos[d.rec.Repo]++
		m.pathsGen++
	}
	if d != nil && d.rec.Skip != nil {
		m.skipped++
	}
}

func (m *Materialiser) dropPathLocked(repo, path, key string) {
	keys := slices.DeleteFunc(m.byPath[path], func(k string) bool { return k == key })
	if len(keys) == 0 {
		delete(m.byPath, path)
	} else {
		m.byPath[path] = keys
	}
	if m.repos[repo]--; m.repos[repo] <= 0 {
		delete(m.repos, repo)
	}
	m.pathsGen++
}

// fieldsOf is what the keyword index scores of a record.
func fieldsOf(rec *events.DocRecord) search.Fields {
	hs := make([]string, len(rec.Headings))
	for i, h := range rec.Headings {
		hs[i] = h.Text
	}
	if rec.Kind == events.DocCode {
		hs = append(hs, codeSymbols(rec.Chunks)...)
	}
	return search.Fields{Path: rec.Path, Title: rec.Title, Headings: hs, Body: rec.Content}
}

// codeSymbols are the names of a code file's declarations, as its chunks
// are labelled ("func (*Index).Search", "type Config"), each once.
func codeSymbols(chunks []events.Chunk) []string {
	var out []string
	for _, c := range chunks {
		if len(c.HeadingPath) == 0 {
			continue
		}
		name := c.HeadingPath[len(c.HeadingPath)-1]
		if strings.HasPrefix(name, "package ") {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != name {
			out = append(out, name)
		}
	}
	return out
}

// topAnchors returns the texts of the n most prominent headings: the
// highest level first, in document order within a level.
func topAnchors(hs []events.Heading, n int) []string {
	if len(hs) == 0 {
		return nil
	}
	sorted := slices.Clone(hs)
	slices.SortStableFunc(sorted, func(a, b events.Heading) int { return cmp.Compare(a.Level, b.Level) })
	out := make([]string, 0, min(n, len(sorted)))
	for _, h := range sorted[:min(n, len(sorted))] {
		out = append(out, h.Text)
	}
	return out
}

// Ready is closed once the initial replays of cue_docs and (when
// configured) cue_memories are applied: the edge then answers read_context
// and search_memories as of the moment it started. Vectors trail it.
func (m *Materialiser) Ready() <-chan struct{} { return m.ready }

// Revision is the last applied cue_docs revision.
func (m *Materialiser) Revision() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.rev
}

// Status reports readiness and counts.
func (m *Materialiser) Status() Status {
	ready := false
	select {
	case <-m.ready:
		ready = true
	default:
	}
	memories, memVectors, memBad := m.memoryCounts()
	m.mu.RLock()
	defer m.mu.RUnlock()
	st := Status{Memories: memories, MemoryVectors: memVectors, MemoryRevision: m.mrev, MemoriesUndecodable: memBad, Ready: ready, Docs: len(m.docs), Skipped: m.skipped, Revision: m.rev, Applied: m.applied, Undecodable: m.undecodable, Model: m.model, VectorRevision: m.vrev, StoreDamaged: m.storeDamaged.Load()}
	if m.vindex != nil {
		st.VectorDocs = m.vindex.Len()
		st.VectorBytes = m.vindex.Bytes()
	}
	return st
}

// DocSets is what the materialiser can serve of cue_docs: the revision
// applied and, per repo, the documents it holds indexed (not skipped),
// for `cue status` and `cue doctor` to compare with the bucket.
func (m *Materialiser) DocSets() events.EdgeDocs {
	type held struct{ repo, key, sha string }
	m.mu.RLock()
	rev := m.rev
	docs := make([]held, 0, len(m.docs))
	for key, d := range m.docs {
		if d.rec.Skip == nil {
			docs = append(docs, held{d.rec.Repo, key, d.rec.SHA256})
		}
	}
	m.mu.RUnlock()
	// Hashed outside the lock: applying batches need not wait for it.
	sets := map[string]*events.DocSet{}
	for _, d := range docs {
		s := sets[d.repo]
		if s == nil {
			s = &events.DocSet{}
			sets[d.repo] = s
		}
		s.Add(d.key, d.sha)
	}
	out := events.EdgeDocs{Revision: rev, Repos: make(map[string]events.DocSet, len(sets))}
	for repo, s := range sets {
		out.Repos[repo] = *s
	}
	return out
}

// progressOf is bucket's entry of m.progress; Open lists every bucket Run
// follows.
func (m *Materialiser) progressOf(bucket string) *feedProgress {
	for _, p := range m.progress {
		if p.bucket == bucket {
			return p
		}
	}
	panic("edge: no progress entry for followed bucket " + bucket)
}

// Feeds reports the progress of each bucket the materialiser follows:
// cue_docs, then cue_memories and cue_vectors when configured.
func (m *Materialiser) Feeds() []FeedStatus {
	out := make([]FeedStatus, len(m.progress))
	for i, p := range m.progress {
		out[i] = FeedStatus{Bucket: p.bucket, Keys: p.keys, Revision: p.rev(), Replayed: p.replayed.Load(), GatesReady: p.gatesReady}
		if at := p.appliedAt.Load(); at != 0 {
			out[i].LastApplied = time.Unix(0, at)
		}
	}
	return out
}

// WaitRevision blocks until the cue_docs revision rev (for example one a
// kv.Put returned) has been applied, ctx ends (its error is returned) or
// the materialiser stops (ErrStopped).
func (m *Materialiser) WaitRevision(ctx context.Context, rev uint64) error {
	return m.waitFor(ctx, "revision", rev, func() uint64 { return m.settled })
}

// waitFor blocks until current() (read under m.mu) reaches rev, ctx ends
// or the materialiser stops; what names the revision in errors.
func (m *Materialiser) waitFor(ctx context.Context, what string, rev uint64, current func() uint64) error {
	for {
		m.mu.RLock()
		cur, changed, stopped := current(), m.changed, m.stopped
		m.mu.RUnlock()
		if cur >= rev {
			return nil
		}
		if stopped {
			return fmt.Errorf("%w at %s %d, before %d", ErrStopped, what, cur, rev)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (m *Materialiser) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.stopped {
		m.stopped = true
		close(m.changed)
		m.changed = make(chan struct{})
	}
}

// Close syncs and closes the store. Run calls it on return; call it
// yourself only if Run was never called. The in-memory view stays readable,
// but documents kept only in the store then fail with ErrStopped.
func (m *Materialiser) Close() error {
	m.closeOnce.Do(func() {
		m.stop()
		m.storeMu.Lock()
		defer m.storeMu.Unlock()
		m.saveSnapshot()
		m.closeErr = m.store.Close()
	})
	return m.closeErr
}

// plainContent is the largest content kept in memory as it is: larger
// content is kept S2-compressed, a third of its size for source code, and
// decompressed at a few GB/s when read.
const plainContent = 4 << 10

// packScratch holds the encoder's output buffers between documents: one
// sized for incompressible input per document was 0.2 GB of garbage for
// 5,000 Go files, collected at the cost of the indexing it competes with.
var packScratch sync.Pool

// packContent returns content S2-compressed, in a slice of its own size.
// S2's default level: its "better" level packs Go files to 1/3.1 of their
// size rather than 1/2.8, but its hash tables (up to 576 KiB a call, from
// a pool its two larger sizes share) were another 0.2 GB of garbage.
func packContent(content string) []byte {
	need := s2.MaxEncodedLen(len(content))
	buf, _ := packScratch.Get().(*[]byte)
	if buf == nil || cap(*buf) < need {
		b := make([]byte, need)
		buf = &b
	}
	// The encoder reads src only; a view of the string spares a copy.
	packed := slices.Clone(s2.Encode((*buf)[:need], unsafe.Slice(unsafe.StringData(content), len(content))))
	packScratch.Put(buf)
	return packed
}

// content returns d's content: from memory (cached is true) or the store.
func (m *Materialiser) content(d *doc) (content string, cached bool, err error) {
	if d.packed != nil {
		b, err := s2.Decode(nil, d.packed)
		if err != nil {
			return "", false, fmt.Errorf("edge: decompress %s: %w", d.key, err)
		}
		return string(b), true, nil
	}
	if d.inMemory {
		return d.rec.Content, true, nil
	}
	m.storeMu.RLock()
	defer m.storeMu.RUnlock()
	m.mu.RLock()
	stopped := m.stopped
	m.mu.RUnlock()
	if stopped {
		return "", false, ErrStopped
	}
	content, rev, ok, err := m.store.Content(d.key)
	if errors.Is(err, localdb.ErrDamaged) {
		if m.storeDamaged.CompareAndSwap(false, true) {
			m.logger.Error("the edge's store is damaged; emptying it and replaying cue_docs into it, answering from cue_docs meanwhile", "key", d.key, "err", err)
			m.rebuildDamagedStore(err)
		}
		return m.contentFromSource(d, err)
	}
	if err != nil {
		return "", false, err
	}
	if !ok {
		// Removed since the caller looked it up, or the store is being
		// rebuilt (rebuildDamagedStore) and has not had it again yet.
		return m.contentFromSource(d, errChangedUnderfoot)
	}
	if rev != d.rev {
		// Replaced since the caller looked it up.
		return "", false, errChangedUnderfoot
	}
	return content, false, nil
}

// docGetter is the part of the cue_docs bucket that answers for one key; a
// jetstream.KeyValue is one.
type docGetter interface {
	Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error)
}

// sourceReadWait bounds a read of a document from cue_docs in place of a
// damaged store.
const sourceReadWait = 5 * time.Second

// contentFromSource answers d's content from cue_docs, the store's source,
// when the store cannot: it failed its checksum reading it (the store is
// then emptied and rebuilt from cue_docs while the edge runs,
// rebuildDamagedStore), or it does not hold it yet again while that
// rebuild replays. The document is served as its source has it at the
// revision the edge holds, rather than refused. Without a bucket that can
// answer, or one at another revision, failed is the answer.
func (m *Materialiser) contentFromSource(d *doc, failed error) (string, bool, error) {
	kv, ok := m.cfg.Docs.(docGetter)
	if !ok {
		return "", false, failed
	}
	ctx, cancel := context.WithTimeout(context.Background(), sourceReadWait)
	defer cancel()
	e, err := kv.Get(ctx, d.key)
	if err != nil {
		return "", false, fmt.Errorf("%w; reading it from %s instead: %v", failed, events.DocsBucket, err)
	}
	if e.Revision() != d.rev {
		return "", false, errChangedUnderfoot
	}
	c, bad, err := m.change(ctx, e)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("%w; reading it from %s instead: %v", failed, events.DocsBucket, err)
	case bad || c.Doc == nil || c.Doc.Record.Skip != nil:
		return "", false, failed
	}
	return c.Doc.Record.Content, false, nil
}

var errChangedUnderfoot = errors.New("edge: document changed while being read; retry")

// OpenOn opens a Materialiser in dir that follows the cue_docs bucket and
// reads blobs from the cue_blobs object store of js; both must exist (the
// topology is provisioned). It has no embedder: see OpenOnWith.
func OpenOn(ctx context.Context, js jetstream.JetStream, dir string, logger *slog.Logger) (*Materialiser, error) {
	return OpenOnWith(ctx, js, dir, Options{Logger: logger})
}

// Options are the optional parts of an edge.
type Options struct {
	// Logger receives the edge's logs; nil discards.
	Logger *slog.Logger
	// Embedder enables semantic search (see Config.Embedder); nil keeps
	// the edge keyword-only.
	Embedder embed.Embedder
	// BeforeApply is Config.BeforeApply.
	BeforeApply func(ctx context.Context, bucket string, entries int)
	// Gate is Config.Gate.
	Gate *priority.Gate
	// Loading is Config.Loading.
	Loading func(what string, done int)
	// VectorsAfter is Config.VectorsAfter.
	VectorsAfter <-chan struct{}
}

// OpenOnWith is OpenOn with options: the materialiser also follows the
// cue_memories bucket and, with an Embedder, that model's records in the
// cue_vectors bucket, which must then exist too.
func OpenOnWith(ctx context.Context, js jetstream.JetStream, dir string, opts Options) (*Materialiser, error) {
	cfg := Config{Dir: dir, Logger: opts.Logger, Embedder: opts.Embedder, BeforeApply: opts.BeforeApply, Gate: opts.Gate, Loading: opts.Loading, VectorsAfter: opts.VectorsAfter}
	mems, err := js.KeyValue(ctx, events.MemoriesBucket)
	if err != nil {
		return nil, fmt.Errorf("edge: bucket %s: %w (run `cue up` or the provisioning of this release to create it)", events.MemoriesBucket, err)
	}
	cfg.Memories = mems
	if opts.Embedder != nil {
		vecs, err := js.KeyValue(ctx, events.VectorsBucket)
		if err != nil {
			return nil, fmt.Errorf("edge: bucket %s: %w", events.VectorsBucket, err)
		}
		cfg.Vectors = vecs
	}
	docs, err := js.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		return nil, fmt.Errorf("edge: bucket %s: %w", events.DocsBucket, err)
	}
	blobs, err := js.ObjectStore(ctx, events.BlobsBucket)
	if err != nil {
		return nil, fmt.Errorf("edge: object store %s: %w", events.BlobsBucket, err)
	}
	cfg.Docs, cfg.Blobs = docs, blobs
	buckets := []string{events.DocsBucket, events.MemoriesBucket}
	if cfg.Vectors != nil {
		buckets = append(buckets, events.VectorsBucket)
	}
	if cfg.Sources, err = ReadSources(ctx, js, buckets...); err != nil {
		return nil, err
	}
	// The bucket's keys are read while the store opens: both take a
	// read of every document, the server's and ours.
	type reading struct {
		entries map[string]latest
		err     error
	}
	bucket := make(chan reading, 1)
	go func() {
		entries, err := bucketEntries(ctx, docs)
		bucket <- reading{entries, err}
	}()
	m, err := Open(cfg)
	if err != nil {
		<-bucket
		return nil, err
	}
	// The store's checks find damaged files, not a store that is sound
	// but holds other documents than the bucket (lost writes, a restored
	// copy): compare before serving anything.
	read := <-bucket
	sample, n, err := m.disagreement(ctx, docs, read.entries, read.err)
	switch {
	case err != nil:
		m.logger.Warn("the edge's store could not be compared with cue_docs; serving it as it is", "err", err)
	case n > 0:
		if err := m.store.Close(); err != nil {
			return nil, err
		}
		aside, err := localdb.MoveAside(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("edge: the store holds %d documents otherwise than cue_docs, and moving it aside failed: %w (remove %s to rebuild it from JetStream)", n, err, cfg.Dir)
		}
		m.logger.Error("the edge's store holds documents otherwise than cue_docs; moved it aside, rebuilding it from cue_docs", "documents", n, "first", sample, "moved_to", aside)
		return Open(cfg)
	}
	return m, nil
}
