package edge

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"
)

// Version history for read_doc's since_hash (delta diffing, seed 000 §5).
//
// cue_docs keeps one value per key (History 1), and only contents too
// large to travel inline are in cue_blobs, so the bus cannot say what most
// files were two saves ago; raising History would keep every record whole
// (headings, links, content) on every server, for every edge's sake. The
// edge can keep just the content: it sees the versions it applies, and
// its Badger is already written in that transaction. So
// when a document is replaced, the store copies the replaced version's
// content to h/<DocKey>\x00<revision> in the same transaction, and prunes
// the key's history to HistoryLimits there and then, from the list of
// kept versions at hm/<DocKey>. It costs one read of the replaced document
// per update and nothing on a replay into
// a fresh store (nothing is replaced); it survives restarts with the store;
// and a store rebuilt from JetStream simply starts with no history, which
// read_doc answers with 1006 Stale Cache, as it must for any version it no
// longer knows. So does a version replaced before this edge applied it:
// the bucket had already dropped it.

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
		return s.pruneHistory(txn, c.Key, 0, 0, 0)
	}
	item, err := txn.Get(append(docPrefix[:len(docPrefix):len(docPrefix)], c.Key...))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	// Only what history needs of the replaced Doc: decoding less of it
	// makes the read cheaper.
	var old struct {
		Rev    uint64 `json:"rev"`
		Record struct {
			SHA256  string          `json:"sha256"`
			Content string          `json:"content"`
			Skip    json.RawMessage `json:"skip"`
		} `json:"record"`
	}
	if err := item.Value(func(v []byte) error { return decodeDoc(v, &old) }); err != nil {
		return fmt.Errorf("decode stored %s: %w", c.Key, err)
	}
	rec := old.Record
	if len(rec.Skip) > 0 && string(rec.Skip) != "null" {
		return nil
	}
	if old.Rev >= c.Rev || rec.Content == c.Doc.Record.Content || versionHeader+len(rec.Content) > s.history.Bytes {
		return nil
	}
	v := encodeVersion(rec.SHA256, rec.Content)
	if err := txn.Set(histKey(c.Key, old.Rev), v); err != nil {
		return err
	}
	return s.pruneHistory(txn, c.Key, s.history.Versions, old.Rev, len(v))
}

// The list of a key's kept versions, hm/<DocKey>: 12 bytes per version,
// its revision and its stored size, oldest first. Keeping the list spares
// every write an iteration over the key's history, which in Badger also
// walks the deleted versions until compaction drops them.
var histListPrefix = []byte("hm/")

type keptVersion struct {
	rev  uint64
	size int
}

func histListKey(key string) []byte {
	return append(append([]byte(nil), histListPrefix...), key...)
}

func readHistList(txn *badger.Txn, key string) ([]keptVersion, error) {
	item, err := txn.Get(histListKey(key))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []keptVersion
	err = item.Value(func(b []byte) error {
		if len(b)%12 != 0 {
			return fmt.Errorf("history list of %d bytes", len(b))
		}
		for ; len(b) > 0; b = b[12:] {
			out = append(out, keptVersion{rev: binary.BigEndian.Uint64(b), size: int(binary.BigEndian.Uint32(b[8:]))})
		}
		return nil
	})
	return out, err
}

// pruneHistory records a version of key at rev taking size bytes (rev 0:
// none) and deletes all but the newest keep versions that fit in the byte
// limit together.
func (s *Store) pruneHistory(txn *badger.Txn, key string, keep int, rev uint64, size int) error {
	kept, err := readHistList(txn, key)
	if err != nil {
		return err
	}
	// A change retried after its transaction filled up records its
	// version again: once is enough.
	if rev > 0 && !slices.ContainsFunc(kept, func(v keptVersion) bool { return v.rev == rev }) {
		kept = append(kept, keptVersion{rev, size})
	}
	n, total := 0, 0
	for i := len(kept) - 1; i >= 0; i-- {
		if n < keep && total+kept[i].size <= s.history.Bytes {
			n++
			total += kept[i].size
			continue
		}
		for _, old := range kept[:i+1] {
			if err := txn.Delete(histKey(key, old.rev)); err != nil {
				return err
			}
		}
		kept = kept[i+1:]
		break
	}
	if len(kept) == 0 {
		return txn.Delete(histListKey(key))
	}
	b := make([]byte, 0, 12*len(kept))
	for _, v := range kept {
		b = binary.BigEndian.AppendUint64(b, v.rev)
		b = binary.BigEndian.AppendUint32(b, uint32(v.size))
	}
	return txn.Set(histListKey(key), b)
}

// History returns the kept earlier versions of key, newest first.
func (s *Store) History(key string) ([]Version, error) {
	var out []Version
	err := s.db.View(func(txn *badger.Txn) error {
		kept, err := readHistList(txn, key)
		if err != nil {
			return err
		}
		for i := len(kept) - 1; i >= 0; i-- {
			item, err := txn.Get(histKey(key, kept[i].rev))
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue // listed but gone: that version is simply unknown
			}
			if err != nil {
				return fmt.Errorf("version %d: %w", kept[i].rev, err)
			}
			err = item.Value(func(b []byte) error {
				v, err := decodeVersion(kept[i].rev, b)
				out = append(out, v)
				return err
			})
			if err != nil {
				return fmt.Errorf("decode version %d: %w", kept[i].rev, err)
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
