package edge

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/cuedeck/cuedeck/internal/localdb"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Doc is a materialised document: the DocRecord the indexer wrote, with
// Record.Content holding the file's text even when the record named a blob,
// and the cue_docs revision it came from.
type Doc struct {
	Key    string           `json:"key"`
	Rev    uint64           `json:"rev"`
	Record events.DocRecord `json:"record"`
}

// Change is one cue_docs entry to apply to a Store: Doc is the new state of
// Key, or nil when the key's document is gone.
type Change struct {
	Key string
	Rev uint64
	Doc *Doc
}

// Badger key layout. The format version lets a later release change the
// layout: a store of another format is dropped and replayed from JetStream,
// which is always possible because Badger is only a cache of the bucket.
var (
	keyFormat   = []byte("m/format")
	keyRevision = []byte("m/rev")
	docPrefix   = []byte("d/")
)

const storeFormat = "1"

// ErrStoreTooBig is returned by Apply when a single document is larger than
// what one Badger transaction can hold.
var ErrStoreTooBig = errors.New("edge: document too large for one store transaction")

// Store is an edge's local, rebuildable copy of cue_docs in Badger: the
// documents keyed by DocKey and the last applied KV revision. The revision
// is written in the same transaction as the document change it follows, so
// after a crash it never runs ahead of the data; replaying from it applies
// at most a few entries twice, which is harmless.
type Store struct {
	db     *badger.DB
	logger *slog.Logger
	// history bounds the replaced versions kept per document (history.go).
	history HistoryLimits
}

// OpenStore opens (or creates) the store in dir; an empty dir keeps it in
// memory, for tests. The Badger is tuned small because several share a
// laptop process. A store written by another format is emptied, so the
// edge replays cue_docs from the start.
func OpenStore(dir string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := localdb.WithLargerData(localdb.Options(dir, logger)).
		WithInMemory(dir == "").
		WithValueThreshold(64 << 10).
		WithMetricsEnabled(false)
	if dir != "" {
		if err := localdb.CheckTables(dir, opts); err != nil {
			return nil, fmt.Errorf("edge: store in %s: %w", dir, err)
		}
	}
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("edge: open store in %q (is another edge using it? remove the directory to rebuild from JetStream): %w", dir, err)
	}
	s := &Store{db: db, logger: logger, history: HistoryLimits{Versions: DefaultHistoryVersions, Bytes: DefaultHistoryBytes}}
	if err := s.checkFormat(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.dropStoredVectors(); err != nil {
		db.Close()
		return nil, fmt.Errorf("edge: drop the vectors stored by an earlier release in %s: %w", dir, err)
	}
	return s, nil
}

func (s *Store) checkFormat() error {
	var format string
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(keyFormat)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		format = string(v)
		return err
	})
	if err != nil {
		return fmt.Errorf("edge: read store format: %w", err)
	}
	if format == storeFormat {
		return nil
	}
	if format != "" {
		s.logger.Warn("store format changed; dropping it to replay cue_docs", "have", format, "want", storeFormat)
		if err := s.db.DropAll(); err != nil {
			return fmt.Errorf("edge: drop store of format %q: %w", format, err)
		}
	}
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyFormat, []byte(storeFormat)) })
}

// discardAll empties the store (Badger deletes every table and value
// log, damaged ones too) and leaves it a fresh store of this format.
func (s *Store) discardAll() error {
	if err := s.db.DropAll(); err != nil {
		return fmt.Errorf("edge: discard the store: %w", err)
	}
	return s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyFormat, []byte(storeFormat)) })
}

// LastRevision is the cue_docs revision of the last applied entry, 0 for a
// fresh store.
func (s *Store) LastRevision() (uint64, error) {
	var rev uint64
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(keyRevision)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("revision value has %d bytes, want 8", len(v))
			}
			rev = binary.BigEndian.Uint64(v)
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("edge: read last revision: %w", err)
	}
	return rev, nil
}

// Apply writes changes in order, each with its revision. Changes share
// transactions as far as Badger allows; every transaction carries the
// revision of its last change. A document too big for a transaction of its
// own fails with ErrStoreTooBig.
func (s *Store) Apply(changes []Change) error {
	return s.applyInBatches(len(changes), func(txn *badger.Txn, i int) error {
		if err := s.keepReplaced(txn, changes[i]); err != nil {
			return err
		}
		return setChange(txn, changes[i])
	},
		func(i int) string { return fmt.Sprintf("%s at revision %d", changes[i].Key, changes[i].Rev) })
}

// applyInBatches writes n changes in order with set, sharing transactions
// as far as Badger allows and starting the next one when a change does not
// fit; name(i) describes change i in errors. A change too big for a
// transaction of its own fails with ErrStoreTooBig.
func (s *Store) applyInBatches(n int, set func(txn *badger.Txn, i int) error, name func(i int) string) error {
	txn := s.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	pending := 0
	for i := 0; i < n; {
		err := set(txn, i)
		if errors.Is(err, badger.ErrTxnTooBig) {
			if pending == 0 {
				return fmt.Errorf("%w: %s", ErrStoreTooBig, name(i))
			}
			// The transaction holds changes up to i-1 and at least their
			// revision; a half-written change i is harmless because its
			// revision is not yet in it, so it is replayed after a crash.
			if err := txn.Commit(); err != nil {
				return fmt.Errorf("edge: store commit: %w", err)
			}
			txn = s.db.NewTransaction(true)
			pending = 0
			continue
		}
		if err != nil {
			return fmt.Errorf("edge: store %s: %w", name(i), err)
		}
		pending++
		i++
	}
	if err := txn.Commit(); err != nil {
		return fmt.Errorf("edge: store commit: %w", err)
	}
	return nil
}

func setChange(txn *badger.Txn, c Change) error {
	key := append(docPrefix[:len(docPrefix):len(docPrefix)], c.Key...)
	if c.Doc == nil {
		if err := txn.Delete(key); err != nil {
			return err
		}
	} else {
		v, err := encodeDoc(c.Doc)
		if err != nil {
			return err
		}
		if err := txn.Set(key, v); err != nil {
			return err
		}
	}
	var rev [8]byte
	binary.BigEndian.PutUint64(rev[:], c.Rev)
	return txn.Set(keyRevision, rev[:])
}

// A stored document is its JSON, zstd-compressed when that is worth it:
// the store holds every file's text, the most of the cache on disk. The
// compressed forms start with a byte JSON never starts with. zstd stores
// the first 5,000 files of Go's src in 12.9 MB where S2 took 18.5 (of
// 48.8 MB of JSON), for 0.19 s more CPU to write them all and 0.07 s
// more to read them all back; stores written before hold S2.
const (
	s2Doc   = 0x00
	zstdDoc = 0x01
)

// minCompressedDoc is the smallest encoded document worth compressing.
const minCompressedDoc = 512

// docCodec is one encoder and one decoder for every document: both are
// safe for concurrent EncodeAll and DecodeAll, and each holds buffers.
// The encoder's history is its window and more, held for the daemon's
// life: at the default 8 MiB window it was 16 MiB of the heap, for
// documents nearly all far smaller than the 1 MiB window used instead.
var docCodec = sync.OnceValues(func() (*zstd.Encoder, *zstd.Decoder) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err) // only for invalid options
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	if err != nil {
		panic(err)
	}
	return enc, dec
})

func encodeDoc(d *Doc) ([]byte, error) {
	v, err := json.Marshal(d)
	if err != nil || len(v) < minCompressedDoc {
		return v, err
	}
	enc, _ := docCodec()
	buf := enc.EncodeAll(v, append(make([]byte, 0, 1+len(v)/2), zstdDoc))
	if len(buf) >= len(v) {
		return v, nil
	}
	return buf, nil
}

// decodeDoc decodes what encodeDoc wrote, S2 (stores written before
// zstd), or plain JSON (stores written before compression).
func decodeDoc(v []byte, d any) error {
	if len(v) > 0 && v[0] == s2Doc {
		plain, err := s2.Decode(nil, v[1:])
		if err != nil {
			return fmt.Errorf("decompress: %w", err)
		}
		v = plain
	} else if len(v) > 0 && v[0] == zstdDoc {
		_, dec := docCodec()
		plain, err := dec.DecodeAll(v[1:], nil)
		if err != nil {
			return fmt.Errorf("decompress: %w", err)
		}
		v = plain
	}
	// The store holds only what encodeDoc wrote, and callers decode a
	// part of it (Content).
	return events.UnmarshalFields(v, d)
}

// Get returns the stored document of key; ok is false when there is none.
func (s *Store) Get(key string) (doc Doc, ok bool, err error) {
	if ok, err = s.decodeStored(key, &doc); err != nil || !ok {
		return Doc{}, false, err
	}
	return doc, true, nil
}

// decodeStored decodes key's stored document into into (a Doc, or a
// struct of the fields wanted); ok is false when there is none.
func (s *Store) decodeStored(key string, into any) (ok bool, err error) {
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(append(docPrefix[:len(docPrefix):len(docPrefix)], key...))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		if err := item.Value(func(v []byte) error { return decodeDoc(v, into) }); err != nil {
			return storedDamage(item.Key(), err)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("edge: read %s from store: %w", key, err)
	}
	return ok, nil
}

// storedDamage is the error of a stored document that cannot be read
// back or decoded: Badger checks what it reads against its checksums, so
// the store is damaged (a value log cut short or garbled). The edge's
// start reads every document and rebuilds a damaged store (Open).
func storedDamage(key []byte, err error) error {
	return fmt.Errorf("edge: stored %s: %w: %v (restart the edge to rebuild its store from cue_docs)", key, localdb.ErrDamaged, err)
}

// Content returns the content and revision of key's stored document; ok
// is false when there is none. It decodes nothing else of the record,
// which for a file of many chunks costs far more than its content.
func (s *Store) Content(key string) (content string, rev uint64, ok bool, err error) {
	var d struct {
		Rev    uint64 `json:"rev"`
		Record struct {
			Content string `json:"content"`
		} `json:"record"`
	}
	ok, err = s.decodeStored(key, &d)
	return d.Record.Content, d.Rev, ok, err
}

// ForEach calls fn with every stored document in key order and stops at
// the first error, which it returns.
func (s *Store) ForEach(fn func(Doc) error) error {
	return s.eachStored(func(item *badger.Item) error {
		var doc Doc
		if err := item.Value(func(v []byte) error { return decodeDoc(v, &doc) }); err != nil {
			return storedDamage(item.Key(), err)
		}
		return fn(doc)
	})
}

// eachStored calls fn with every stored document's item in key order
// and stops at the first error, which it returns.
func (s *Store) eachStored(fn func(*badger.Item) error) error {
	return s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = docPrefix
		opts.PrefetchSize = 256
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := fn(it.Item()); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close syncs the store to disk and closes it.
func (s *Store) Close() error {
	syncErr := s.db.Sync()
	if err := localdb.Close(s.db); err != nil {
		return fmt.Errorf("edge: close store: %w", err)
	}
	if syncErr != nil && !s.db.Opts().InMemory {
		return fmt.Errorf("edge: sync store: %w", syncErr)
	}
	return nil
}

// errStopped ends a read whose reader stopped listening.
var errStopped = errors.New("edge: read stopped")

// forEachPrepared is ForEach with each document decoded, and made into
// a T by prepare, on every CPU while this goroutine reads the store: a
// start reads every document, and decoding them one at a time took most
// of a restart. fn still sees one document at a time, in no set order.
// prepare must be safe to run concurrently.
func forEachPrepared[T any](s *Store, prepare func(Doc) T, fn func(T) error) error {
	type result struct {
		v   T
		err error
	}
	type stored struct{ key, value []byte }
	raw := make(chan stored, 256)
	out := make(chan result, 256)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(raw)
		readErr = s.eachStored(func(item *badger.Item) error {
			v, err := item.ValueCopy(nil)
			if err != nil {
				return storedDamage(item.Key(), err)
			}
			select {
			case raw <- stored{item.KeyCopy(nil), v}:
				return nil
			case <-stop:
				return errStopped
			}
		})
		if errors.Is(readErr, errStopped) {
			readErr = nil
		}
	}()
	var decoders sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		decoders.Go(func() {
			for r := range raw {
				var d Doc
				if err := decodeDoc(r.value, &d); err != nil {
					out <- result{err: storedDamage(r.key, err)}
					continue
				}
				out <- result{v: prepare(d)}
			}
		})
	}
	go func() {
		decoders.Wait()
		close(out)
	}()
	var firstErr error
	for r := range out {
		if firstErr != nil {
			continue // drain, so that every goroutine ends
		}
		firstErr = r.err
		if firstErr == nil {
			firstErr = fn(r.v)
		}
		if firstErr != nil {
			close(stop)
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return readErr
}
