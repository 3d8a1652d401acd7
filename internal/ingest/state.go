package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cuedeck/cuedeck/internal/localdb"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// fileState is what ingest last published for a file, so that a scan sends
// only what changed. It is written after the publish was acknowledged.
type fileState struct {
	SHA256 string            `json:"sha,omitempty"`
	Size   int64             `json:"size"`
	Mod    int64             `json:"mod"` // mtime, Unix nanoseconds
	Skip   events.SkipReason `json:"skip,omitempty"`
	// Checked is when the content was last read (Unix nanoseconds). A file
	// modified shortly before that may have changed again within the same
	// mtime tick, so it is re-read rather than trusted (git's "racy clean").
	Checked int64 `json:"checked"`
	// Seq is the CUE_INGEST sequence of the publish, 0 when unknown:
	// reconcile asks whether it is still queued for the indexer.
	Seq uint64 `json:"seq,omitempty"`
	// Stale marks a file reconcile found missing or different in
	// cue_docs: it is published again, under a new message id, whatever
	// its size and mtime say.
	Stale bool `json:"stale,omitempty"`
}

func (s fileState) modTime() time.Time { return time.Unix(0, s.Mod) }

// racyWindow is how close to its last read a file's mtime may be before
// size and mtime alone no longer prove the content unchanged. Two seconds
// cover the coarsest common timestamp granularity (FAT).
const racyWindow = 2 * time.Second

// sameAs reports whether a file with size and mod is, by its metadata, the
// version recorded in s.
func (s fileState) sameAs(size int64, mod time.Time) bool {
	return !s.Stale && s.Size == size && s.Mod == mod.UnixNano() && mod.UnixNano() < s.Checked-int64(racyWindow)
}

// stateStore keeps fileStates in Badger under "f\x00<repo>\x00<path>".
type stateStore struct {
	db *badger.DB
}

func openState(dir string, logger *slog.Logger) (*stateStore, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The state is a few hundred bytes per file: the small defaults fit.
	opts := localdb.Options(dir, logger)
	// It is a record of what cue_docs holds, which the comparison at start
	// rebuilds: a damaged one is moved aside rather than read.
	if err := localdb.CheckTables(dir, opts); errors.Is(err, localdb.ErrDamaged) {
		aside, merr := localdb.MoveAside(dir)
		if merr != nil {
			return nil, fmt.Errorf("ingest: state in %s: %w (moving it aside failed: %v; remove the directory: the state is rebuilt from cue_docs)", dir, err, merr)
		}
		logger.Error("ingest: the state is damaged; moved it aside, rebuilding it from cue_docs", "err", err, "moved_to", aside)
	}
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("ingest: open state in %s: %w (is another ingest running with this StateDir? stop it or use a different directory)", dir, err)
	}
	return &stateStore{db: db}, nil
}

func (s *stateStore) close() error { return localdb.Close(s.db) }

func stateKey(repo, path string) []byte {
	return []byte("f\x00" + repo + "\x00" + path)
}

func (s *stateStore) get(repo, path string) (fileState, bool, error) {
	var st fileState
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(stateKey(repo, path))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { return json.Unmarshal(v, &st) })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return fileState{}, false, nil
	}
	if err != nil {
		return fileState{}, false, fmt.Errorf("ingest: read state of %s/%s: %w", repo, path, err)
	}
	return st, true, nil
}

func (s *stateStore) put(repo, path string, st fileState) error {
	v, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(stateKey(repo, path), v) }); err != nil {
		return fmt.Errorf("ingest: write state of %s/%s: %w", repo, path, err)
	}
	return nil
}

func (s *stateStore) delete(repo, path string) error {
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(stateKey(repo, path)) }); err != nil {
		return fmt.Errorf("ingest: delete state of %s/%s: %w", repo, path, err)
	}
	return nil
}

// paths lists the recorded paths of repo that are dir or lie under it ("" is
// the whole repo).
func (s *stateStore) paths(repo, dir string) ([]string, error) {
	repoPrefix := stateKey(repo, "")
	seek := stateKey(repo, dir)
	var out []string
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: seek})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			p := string(it.Item().Key()[len(repoPrefix):])
			if dir == "" || p == dir || strings.HasPrefix(p, dir+"/") {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ingest: list state of %s/%s: %w", repo, dir, err)
	}
	return out, nil
}

// taskPosKey holds the last CUE_TASKS sequence whose events for repo were
// written back into card files.
func taskPosKey(repo string) []byte { return []byte("t\x00" + repo) }

func (s *stateStore) taskPos(repo string) (uint64, error) {
	var pos uint64
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(taskPosKey(repo))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { return json.Unmarshal(v, &pos) })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("ingest: read task log position of %s: %w", repo, err)
	}
	return pos, nil
}

func (s *stateStore) putTaskPos(positions map[string]uint64) error {
	err := s.db.Update(func(txn *badger.Txn) error {
		for repo, pos := range positions {
			v, _ := json.Marshal(pos)
			if err := txn.Set(taskPosKey(repo), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ingest: write task log position: %w", err)
	}
	return nil
}

// each calls fn with every recorded file of repo, in path order.
func (s *stateStore) each(repo string, fn func(path string, st fileState) error) error {
	prefix := stateKey(repo, "")
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 256, Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var st fileState
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &st) }); err != nil {
				return err
			}
			if err := fn(string(it.Item().Key()[len(prefix):]), st); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ingest: read state of %s: %w", repo, err)
	}
	return nil
}

// markStale marks the recorded files paths of repo stale.
func (s *stateStore) markStale(repo string, paths []string) error {
	return s.rewrite(repo, paths, func(path string, st fileState, _ bool) fileState {
		st.Stale = true
		return st
	})
}

// adoptOrphans records the documents of paths, which cue_docs holds and
// the state does not, as published with an unknown size and mtime: the
// scan reads each file again, deleting the document if the file is gone
// and publishing it if its content differs.
func (s *stateStore) adoptOrphans(repo string, paths []string, docs map[string]events.DocSummary) error {
	return s.rewrite(repo, paths, func(path string, _ fileState, _ bool) fileState {
		doc := docs[events.DocKey(repo, path)]
		return fileState{SHA256: doc.SHA256, Skip: doc.Skip, Size: -1, Seq: doc.SourceSeq}
	})
}

// rewrite replaces the states of paths of repo with what change makes of
// them, in batches.
func (s *stateStore) rewrite(repo string, paths []string, change func(path string, st fileState, had bool) fileState) error {
	const batch = 1000
	for len(paths) > 0 {
		n := min(batch, len(paths))
		err := s.db.Update(func(txn *badger.Txn) error {
			for _, p := range paths[:n] {
				var st fileState
				item, err := txn.Get(stateKey(repo, p))
				had := err == nil
				switch {
				case had:
					if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &st) }); err != nil {
						return err
					}
				case !errors.Is(err, badger.ErrKeyNotFound):
					return err
				}
				v, err := json.Marshal(change(p, st, had))
				if err != nil {
					return err
				}
				if err := txn.Set(stateKey(repo, p), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("ingest: write state of %s: %w", repo, err)
		}
		paths = paths[n:]
	}
	return nil
}

// Metadata of the state, beside the files and task positions.
const (
	// metaIngestStream is the incarnation (bus.StreamState.ID) of
	// CUE_INGEST the files' Seq refer to.
	metaIngestStream = "ingest-stream"
	// metaTasksStream is the incarnation of CUE_TASKS the task log
	// positions refer to.
	metaTasksStream = "tasks-stream"
	// metaCardsLog is the incarnation of CUE_TASKS the last comparison
	// held the cards against: a comparison that finds another publishes
	// every card again. Card write-back keeps its own record
	// (metaTasksStream), so whichever of the two notices a replaced log
	// first, the other still acts on it.
	metaCardsLog = "cards-log"
)

func metaKey(name string) []byte { return []byte("m\x00" + name) }

func (s *stateStore) meta(name string) (string, error) {
	var v string
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(metaKey(name))
		if err != nil {
			return err
		}
		b, err := item.ValueCopy(nil)
		v = string(b)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("ingest: read state %s: %w", name, err)
	}
	return v, nil
}

func (s *stateStore) setMeta(name, v string) error {
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(metaKey(name), []byte(v)) }); err != nil {
		return fmt.Errorf("ingest: write state %s: %w", name, err)
	}
	return nil
}
