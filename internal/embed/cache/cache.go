// Package cache keeps embedding vectors on disk, in Badger, as int8 codes
// with a scale (what the edges' index keeps), keyed by the model and the
// sha256 of the text, so that unchanged content is never
// embedded twice: not after a restart, not when a file is re-saved, not when
// two files share a section. The embed workers look up and store whole
// chunks (internal/embedworker); Wrap puts it in front of any
// embed.Embedder, text by text, for `cue eval`.
package cache

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/localdb"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
)

// Cache is a vector cache in a Badger directory. It is safe for concurrent
// use.
type Cache struct {
	db     *badger.DB
	hits   atomic.Uint64
	misses atomic.Uint64
}

// Stats counts lookups since Open.
type Stats struct {
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
}

// Open opens (or creates) the cache in dir. Only one process may hold dir;
// opening it twice returns Badger's lock error.
func Open(dir string, logger *slog.Logger) (*Cache, error) {
	// A 512-d vector is 2 KiB: larger memtables and caches than state.
	opts := localdb.WithLargerData(localdb.Options(dir, logger))
	if err := localdb.CheckTables(dir, opts); err != nil {
		// A cache only saves embedding again: start an empty one.
		aside, rerr := localdb.MoveAside(dir)
		if rerr != nil {
			return nil, fmt.Errorf("embed cache: %s: %w (moving it aside failed: %v; remove it to start an empty cache)", dir, err, rerr)
		}
		if logger != nil {
			logger.Error("the vector cache is damaged; moved it aside, starting an empty one", "err", err, "moved_to", aside)
		}
	}
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("embed cache: open %s: %w (is another process using this directory?)", dir, err)
	}
	c := &Cache{db: db}
	if err := c.checkFormat(logger); err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

// cacheFormat names how vectors are stored; a cache of another format is
// emptied: it only saves embedding again. int8-2: the embed workers keep
// one vector per chunk, under its windows, rather than one per window.
const cacheFormat = "int8-2"

var formatKey = []byte("\x00format")

func (c *Cache) checkFormat(logger *slog.Logger) error {
	var have string
	err := c.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(formatKey)
		if err == badger.ErrKeyNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		have = string(v)
		return err
	})
	if err != nil {
		return fmt.Errorf("embed cache: read format: %w", err)
	}
	if have == cacheFormat {
		return nil
	}
	if logger != nil {
		logger.Info("embed cache of an older format emptied; texts are embedded again as they come", "had", have, "format", cacheFormat)
	}
	if err := c.db.DropAll(); err != nil {
		return fmt.Errorf("embed cache: empty the cache of format %q: %w", have, err)
	}
	return c.db.Update(func(txn *badger.Txn) error { return txn.Set(formatKey, []byte(cacheFormat)) })
}

// Close syncs and closes the cache.
func (c *Cache) Close() error { return localdb.Close(c.db) }

// Stats returns the hit and miss counts.
func (c *Cache) Stats() Stats { return Stats{Hits: c.hits.Load(), Misses: c.misses.Load()} }

// key is the model id, a zero byte and the text's sha256: the model is
// part of the key, so vectors of different models never mix.
func key(model, text string) []byte {
	sum := sha256.Sum256([]byte(text))
	k := make([]byte, 0, len(model)+1+len(sum))
	k = append(k, model...)
	k = append(k, 0)
	return append(k, sum[:]...)
}

// Lookup returns the cached vector of each text under model, nil where it
// is not cached, and counts hits and misses.
func (c *Cache) Lookup(model string, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	err := c.db.View(func(txn *badger.Txn) error {
		for i, t := range texts {
			item, err := txn.Get(key(model, t))
			if err == badger.ErrKeyNotFound {
				continue
			}
			if err != nil {
				return err
			}
			if err := item.Value(func(v []byte) error {
				out[i] = decode(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("embed cache: lookup: %w", err)
	}
	for _, v := range out {
		if v != nil {
			c.hits.Add(1)
		} else {
			c.misses.Add(1)
		}
	}
	return out, nil
}

// Store caches vecs[i] as the vector of texts[i] under model.
func (c *Cache) Store(model string, texts []string, vecs [][]float32) error {
	if len(texts) != len(vecs) {
		return fmt.Errorf("embed cache: store %d vectors for %d texts", len(vecs), len(texts))
	}
	wb := c.db.NewWriteBatch()
	defer wb.Cancel()
	for i, t := range texts {
		if err := wb.Set(key(model, t), encode(vecs[i])); err != nil {
			return fmt.Errorf("embed cache: store: %w", err)
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("embed cache: store: %w", err)
	}
	return nil
}

// A cached vector is its float32 scale and int8 codes (vector.AppendCodes),
// a quarter of its float32s; the edges keep no more of it.
func encode(v []float32) []byte { return vector.AppendCodes(make([]byte, 0, 4+len(v)), v) }

func decode(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	v := make([]float32, len(b)-4)
	vector.DecodeCodes(v, b)
	return v
}

// asStored is v as the cache returns it once stored.
func asStored(v []float32) []float32 { return decode(encode(v)) }

// Embedder is an embed.Embedder that answers from a Cache and embeds only
// what it misses.
type Embedder struct {
	next  embed.Embedder
	cache *Cache

	mu   sync.Mutex
	dims int // learnt from cached vectors while next does not know yet
}

var _ embed.Embedder = (*Embedder)(nil)

// Wrap returns e behind c: Embed looks every text up under e.ModelID(),
// sends the misses to e in one call (each distinct text once), and stores
// what e returns before answering.
func Wrap(e embed.Embedder, c *Cache) *Embedder { return &Embedder{next: e, cache: c} }

// Unwrap returns the wrapped embedder, e.g. to read an adapter's breaker.
func (e *Embedder) Unwrap() embed.Embedder { return e.next }

// ModelID implements embed.Embedder.
func (e *Embedder) ModelID() string { return e.next.ModelID() }

// Dimensions implements embed.Embedder. An adapter that learns its
// dimensions from its first answer (Ollama) may not have made one when
// every text was a hit; the cached vectors' length answers then.
func (e *Embedder) Dimensions() int {
	if n := e.next.Dimensions(); n > 0 {
		return n
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dims
}

// Embed implements embed.Embedder. Errors of the wrapped embedder are
// returned as they are (embed.ErrUnavailable stays recognisable); a cache
// that cannot be read or written is an error too, rather than a silent
// re-embedding of everything.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, ctx.Err()
	}
	model := e.next.ModelID()
	out, err := e.cache.Lookup(model, texts)
	if err != nil {
		return nil, err
	}
	var missing []string
	at := map[string][]int{}
	for i, v := range out {
		if v != nil {
			continue
		}
		if _, seen := at[texts[i]]; !seen {
			missing = append(missing, texts[i])
		}
		at[texts[i]] = append(at[texts[i]], i)
	}
	if len(missing) > 0 {
		vecs, err := e.next.Embed(ctx, missing)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(missing) {
			return nil, fmt.Errorf("embed cache: %s returned %d vectors for %d texts", model, len(vecs), len(missing))
		}
		if err := e.cache.Store(model, missing, vecs); err != nil {
			return nil, err
		}
		for j, t := range missing {
			// As a later hit will: a text embeds the same whether or not
			// it was cached.
			v := asStored(vecs[j])
			for _, i := range at[t] {
				out[i] = v
			}
		}
	}
	if n := len(out[0]); n > 0 {
		e.mu.Lock()
		e.dims = n
		e.mu.Unlock()
	}
	return out, nil
}
