package edge

import (
	"github.com/dgraph-io/badger/v4"

	"github.com/cuedeck/cuedeck/pkg/core/vector"
)

// Earlier releases kept each model's vectors in the store, under
// vecPrefix, with the last applied revision under vecRevPrefix. The store
// keeps none now; OpenStore drops what an earlier release left.
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

// dropStoredVectors removes the vectors an earlier release kept in the
// store: the edge now replays them from cue_vectors at each start.
func (s *Store) dropStoredVectors() error {
	found := false
	err := s.db.View(func(txn *badger.Txn) error {
		for _, prefix := range [][]byte{vecPrefix, vecRevPrefix} {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
			it.Rewind()
			found = found || it.Valid()
			it.Close()
		}
		return nil
	})
	if err != nil || !found {
		return err
	}
	s.logger.Info("dropping the vectors an earlier release kept in the store; they are replayed from cue_vectors")
	return s.db.DropPrefix(vecPrefix, vecRevPrefix)
}
