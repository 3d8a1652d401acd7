package edge

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/dgraph-io/badger/v4"

	"github.com/cuedeck/cuedeck/pkg/core/vector"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Vector keys in the store: vecPrefix, the model token, '/', the DocKey; the
// last applied cue_vectors revision of a model is under vecRevPrefix and
// the model token. Each model has its own mark, so switching models resumes
// the new one's watch from its own place.
var (
	vecPrefix    = []byte("v/")
	vecRevPrefix = []byte("m/vrev/")
)

// Vectors is a materialised VectorRecord: the chunk vectors of one document
// under one model, decoded, with the SHA-256 of the content they embed.
type Vectors struct {
	Key    string // DocKey
	SHA256 string
	Chunks []vector.Chunk
}

// VectorChange is one cue_vectors entry to apply: Vectors is the new state
// of Key's vectors, or nil when they are gone.
type VectorChange struct {
	Key     string // DocKey
	Rev     uint64
	Vectors *Vectors
}

// vecHeader is the JSON head of a stored Vectors; the vectors follow it.
type vecHeader struct {
	Key    string   `json:"key"`
	SHA256 string   `json:"sha256"`
	Dims   int      `json:"dims"`
	Lines  [][2]int `json:"lines"`
	// Int8 marks vectors stored as the index keeps them: each a float32
	// scale and Dims int8 codes, a quarter of float32s. Stores written
	// before hold float32s.
	Int8 bool `json:"int8,omitempty"`
}

func vecKey(model, key string) []byte {
	return []byte(string(vecPrefix) + events.ModelKey(model) + "/" + key)
}

func vecRevKey(model string) []byte { return []byte(string(vecRevPrefix) + events.ModelKey(model)) }

// encodeVectors is a uvarint header length, the JSON header, then each
// vector as its little-endian float32 scale and int8 codes
// (vector.Quantize): what the index keeps of it, compact and quick to load
// at start.
func encodeVectors(v *Vectors) ([]byte, error) {
	h := vecHeader{Key: v.Key, SHA256: v.SHA256, Lines: make([][2]int, len(v.Chunks)), Int8: true}
	for i, c := range v.Chunks {
		h.Lines[i] = [2]int{c.StartLine, c.EndLine}
		h.Dims = len(c.Vector)
	}
	head, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(nil, uint64(len(head)))
	out = append(out, head...)
	for _, c := range v.Chunks {
		if len(c.Vector) != h.Dims {
			return nil, fmt.Errorf("vectors of %d and %d dimensions in one record", len(c.Vector), h.Dims)
		}
		out = vector.AppendCodes(out, c.Vector)
	}
	return out, nil
}

func decodeVectors(b []byte) (Vectors, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return Vectors{}, errors.New("truncated header")
	}
	var h vecHeader
	if err := json.Unmarshal(b[k:k+int(n)], &h); err != nil {
		return Vectors{}, err
	}
	body := b[k+int(n):]
	per := 4 * h.Dims // float32s
	if h.Int8 {
		per = 4 + h.Dims // scale and codes
	}
	if len(body) != per*len(h.Lines) {
		return Vectors{}, fmt.Errorf("%d bytes of vectors for %d chunks of %d dimensions", len(body), len(h.Lines), h.Dims)
	}
	v := Vectors{Key: h.Key, SHA256: h.SHA256, Chunks: make([]vector.Chunk, len(h.Lines))}
	all := make([]float32, h.Dims*len(h.Lines))
	for i := range h.Lines {
		row, dst := body[i*per:(i+1)*per], all[i*h.Dims:(i+1)*h.Dims]
		if !h.Int8 {
			for j := range dst {
				dst[j] = math.Float32frombits(binary.LittleEndian.Uint32(row[4*j:]))
			}
			continue
		}
		vector.DecodeCodes(dst, row)
	}
	for i, l := range h.Lines {
		v.Chunks[i] = vector.Chunk{StartLine: l[0], EndLine: l[1], Vector: all[i*h.Dims : (i+1)*h.Dims : (i+1)*h.Dims]}
	}
	return v, nil
}

// LastVectorRevision is the cue_vectors revision of model's last applied
// entry, 0 when none was.
func (s *Store) LastVectorRevision(model string) (uint64, error) {
	var rev uint64
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(vecRevKey(model))
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
		return 0, fmt.Errorf("edge: read last vector revision: %w", err)
	}
	return rev, nil
}

// ApplyVectors writes model's vector changes in order, each transaction
// with the revision of its last change, as Apply does for documents.
func (s *Store) ApplyVectors(model string, changes []VectorChange) error {
	return s.applyInBatches(len(changes), func(txn *badger.Txn, i int) error { return setVectorChange(txn, model, changes[i]) },
		func(i int) string { return fmt.Sprintf("vectors of %s at revision %d", changes[i].Key, changes[i].Rev) })
}

func setVectorChange(txn *badger.Txn, model string, c VectorChange) error {
	key := vecKey(model, c.Key)
	if c.Vectors == nil {
		if err := txn.Delete(key); err != nil {
			return err
		}
	} else {
		v, err := encodeVectors(c.Vectors)
		if err != nil {
			return err
		}
		if err := txn.Set(key, v); err != nil {
			return err
		}
	}
	var rev [8]byte
	binary.BigEndian.PutUint64(rev[:], c.Rev)
	return txn.Set(vecRevKey(model), rev[:])
}

// ForEachVectors calls fn with every stored Vectors of model and stops at
// the first error, which it returns.
func (s *Store) ForEachVectors(model string, fn func(Vectors) error) error {
	prefix := []byte(string(vecPrefix) + events.ModelKey(model) + "/")
	return s.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchSize = 64
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var v Vectors
			err := it.Item().Value(func(b []byte) (err error) {
				v, err = decodeVectors(b)
				return err
			})
			if err != nil {
				return fmt.Errorf("edge: decode stored %s (remove the store directory to rebuild): %w", it.Item().Key(), err)
			}
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	})
}
