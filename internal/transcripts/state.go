package transcripts

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/dgraph-io/badger/v4"

	"github.com/cuedeck/cuedeck/internal/localdb"
)

// record is what the tailer knows of one transcript across restarts.
type record struct {
	// Repo, Session and Agent are decided once, from the first lines, so
	// that every batch of a transcript has the same stream key.
	Repo    string `json:"repo,omitempty"`
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	// Ignored is set when the transcript's cwd is in no configured repo.
	Ignored bool `json:"ignored,omitempty"`
	// Offset is the end of the last acknowledged batch.
	Offset int64 `json:"offset"`
	// PendingEnd, when above Offset, is the end of a batch being
	// published: written before the publish, so that after a crash the
	// same byte range is published again under the same message id and
	// deduplicated, instead of a longer batch whose new lines the
	// deduplication would drop.
	PendingEnd int64 `json:"pending_end,omitempty"`
	// Epoch counts the times the transcript was read again from the start
	// (it shrank or was replaced). From the first, it is part of the
	// batches' message ids: the new batches reuse offsets the old ones
	// had, and JetStream would otherwise drop them as duplicates.
	Epoch int `json:"epoch,omitempty"`
	// Dev and Ino identify the file, to see it replaced.
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

func (r record) mapped() bool { return r.Repo != "" || r.Ignored }

// stateStore keeps records in Badger under "t\x00<path>".
type stateStore struct {
	db *badger.DB
}

func openState(dir string, logger *slog.Logger) (*stateStore, error) {
	db, err := badger.Open(localdb.Options(dir, logger))
	if err != nil {
		return nil, fmt.Errorf("transcripts: open state in %s: %w (is another tailer running with this StateDir? stop it or use a different directory)", dir, err)
	}
	return &stateStore{db: db}, nil
}

func (s *stateStore) close() error { return localdb.Close(s.db) }

func stateKey(path string) []byte { return []byte("t\x00" + path) }

func (s *stateStore) get(path string) (record, bool, error) {
	var r record
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(stateKey(path))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { return json.Unmarshal(v, &r) })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, fmt.Errorf("transcripts: read state of %s: %w", path, err)
	}
	return r, true, nil
}

func (s *stateStore) put(path string, r record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(stateKey(path), v) }); err != nil {
		return fmt.Errorf("transcripts: write state of %s: %w", path, err)
	}
	return nil
}
