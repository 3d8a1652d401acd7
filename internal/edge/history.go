package edge

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Version history for read_doc's since_hash (delta diffing, seed 000 §5).
//
// cue_docs keeps one value per key (History 1), and large contents live in
// cue_blobs only as long as a record names them, so the bus cannot say what
// a file was two saves ago. The edge can: it sees every version as it
// applies it, and its Badger is already written in that transaction. So
// when a document is replaced, the store moves the replaced version's
// content to h/<DocKey>\x00<revision> in the same transaction, and prunes
// the key's history to the newest HistoryLimits there and then. It costs
// one read of the replaced document per update and nothing on a replay into
// a fresh store (nothing is replaced); it survives restarts with the store;
// and a store rebuilt from JetStream simply starts with no history, which
// read_doc answers with 1006 Stale Cache, as it must for any version it no
// longer knows.

var histPrefix = []byte("h/")

// HistoryLimits bound the versions kept per document, besides the current
// one: at most Versions of them, newest first, taking no more than Bytes
// in all (a version takes its content and 32 bytes). A version larger than
// Bytes is not kept.
type HistoryLimits struct {
	Versions int
	Bytes    int
}

// Default history limits.
const (
	DefaultHistoryVersions = 8
	DefaultHistoryBytes    = 2 << 20
)

// Version is a document's content as it was at a cue_docs revision, with
// the SHA-256 (hex) of the file it was read from.
type Version struct {
	Rev     uint64
	SHA256  string
	Content string
}

// A stored version's value is the file's SHA-256, 32 bytes, then the
// content; its revision is in the key.
const versionHeader = 32

func encodeVersion(sha, content string) []byte {
	b := make([]byte, versionHeader, versionHeader+len(content))
	hex.Decode(b, []byte(sha)) // a malformed hash leaves zeros: it is only reported
	return append(b, content...)
}

func decodeVersion(rev uint64, b []byte) (Version, error) {
	if len(b) < versionHeader {
		return Version{}, fmt.Errorf("version value of %d bytes", len(b))
	}
	return Version{Rev: rev, SHA256: hex.EncodeToString(b[:versionHeader]), Content: string(b[versionHeader:])}, nil
}

// histKeyPrefix is the prefix of key's history; the NUL keeps "a/b" from
// listing "a/bc".
func histKeyPrefix(key string) []byte {
	p := make([]byte, 0, len(histPrefix)+len(key)+1)
	return append(append(append(p, histPrefix...), key...), 0)
}

func histKey(key string, rev uint64) []byte {
	return binary.BigEndian.AppendUint64(histKeyPrefix(key), rev)
}

// keepReplaced records, in txn, the version of c.Key that c replaces, and
// prunes the key's history; a removal drops the history with the document.
// It runs before c is written.
func (s *Store) keepReplaced(txn *badger.Txn, c Change) error {
	if s.history.Versions <= 0 {
		return nil
	}
	if c.Doc == nil {
		return s.pruneHistory(txn, c.Key, 0)
	}
	item, err := txn.Get(append(docPrefix[:len(docPrefix):len(docPrefix)], c.Key...))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var old Doc
	if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &old) }); err != nil {
		return fmt.Errorf("decode stored %s: %w", c.Key, err)
	}
	rec := old.Record
	if old.Rev >= c.Rev || rec.Skip != nil || rec.Content == c.Doc.Record.Content || versionHeader+len(rec.Content) > s.history.Bytes {
		return nil
	}
	if err := txn.Set(histKey(c.Key, old.Rev), encodeVersion(rec.SHA256, rec.Content)); err != nil {
		return err
	}
	return s.pruneHistory(txn, c.Key, s.history.Versions)
}

// pruneHistory deletes all but the newest keep versions of key that fit
// in the byte limit together.
func (s *Store) pruneHistory(txn *badger.Txn, key string, keep int) error {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Reverse = true
	prefix := histKeyPrefix(key)
	opts.Prefix = prefix
	it := txn.NewIterator(opts)
	var drop [][]byte
	kept, size := 0, 0
	// A reverse iteration starts at the last key not above its seek key.
	for it.Seek(append(prefix, 0xff)); it.ValidForPrefix(prefix); it.Next() {
		item := it.Item()
		n := int(item.ValueSize())
		if kept < keep && size+n <= s.history.Bytes {
			kept++
			size += n
			continue
		}
		drop = append(drop, item.KeyCopy(nil))
	}
	it.Close()
	for _, k := range drop {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// History returns the kept earlier versions of key, newest first.
func (s *Store) History(key string) ([]Version, error) {
	var out []Version
	err := s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Reverse = true
		prefix := histKeyPrefix(key)
		opts.Prefix = prefix
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(append(prefix, 0xff)); it.ValidForPrefix(prefix); it.Next() {
			k := it.Item().Key()
			rev := binary.BigEndian.Uint64(k[len(k)-8:])
			err := it.Item().Value(func(b []byte) error {
				v, err := decodeVersion(rev, b)
				out = append(out, v)
				return err
			})
			if err != nil {
				return fmt.Errorf("decode %q: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("edge: read history of %s: %w", key, err)
	}
	return out, nil
}

// history returns the kept earlier versions of key, newest first, or
// ErrStopped once the store is closed.
func (m *Materialiser) history(key string) ([]Version, error) {
	m.storeMu.RLock()
	defer m.storeMu.RUnlock()
	m.mu.RLock()
	stopped := m.stopped
	m.mu.RUnlock()
	if stopped {
		return nil, ErrStopped
	}
	return m.store.History(key)
}
