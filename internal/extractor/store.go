package extractor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Store writes MemoryRecords into MemoriesBucket with seed 003 §9's
// duplicate decision, by compare-and-set, so two workers extracting the
// same memory store it once.
type Store struct {
	kv  jetstream.KeyValue
	clk clock.Clock

	inserted, updated, skippedEqual, skippedLower, seenAgain, sameBatch, conflicts atomic.Uint64
}

// StoreStats counts what Put did.
type StoreStats struct {
	// Inserted, Updated: records created, and updated because the new
	// confidence was strictly greater (confidence_improved).
	Inserted, Updated uint64
	// SkippedEqual and SkippedLower are the duplicates not improving on
	// the stored confidence (equal_confidence, lower_confidence).
	SkippedEqual, SkippedLower uint64
	// SeenAgain counts the skips from another batch than the one that
	// last wrote the memory: its Extractions was incremented.
	SeenAgain uint64
	// SameBatch counts puts from the batch that last wrote the record (a
	// redelivery): nothing was changed.
	SameBatch uint64
	// Conflicts counts writes lost to another writer and decided again.
	Conflicts uint64
}

// ReasonSameBatch is the skip reason of a put from the batch that last
// wrote the record.
const ReasonSameBatch memory.Reason = "same_batch"

// NewStore returns a store over kv (MemoriesBucket).
func NewStore(kv jetstream.KeyValue, clk clock.Clock) *Store {
	if clk == nil {
		clk = clock.System{}
	}
	return &Store{kv: kv, clk: clk}
}

// Stats returns the counters.
func (s *Store) Stats() StoreStats {
	return StoreStats{
		Inserted: s.inserted.Load(), Updated: s.updated.Load(),
		SkippedEqual: s.skippedEqual.Load(), SkippedLower: s.skippedLower.Load(),
		SeenAgain: s.seenAgain.Load(), SameBatch: s.sameBatch.Load(), Conflicts: s.conflicts.Load(),
	}
}

// Put stores rec under MemoryKey(rec.Repo, rec.Hash). A new key is
// created (insert). On an existing one the stored record decides:
//
//   - written last by rec.Batch: a redelivered batch; nothing changes
//     (skip, ReasonSameBatch), so Put is idempotent;
//   - rec's confidence strictly greater: update (Decision.Updated, the
//     merged confidence, Extractions+1, CreatedAt kept);
//   - otherwise: skip (equal or lower confidence), but the memory was
//     said again by another batch, so Extractions+1 and Batch move on.
//
// A write that loses to another writer reads again and decides again.
// rec.Extractions is ignored (a new record starts at 1). If rec is not
// valid, the error wraps events.ErrMalformed; other errors are the
// bucket's.
func (s *Store) Put(ctx context.Context, rec events.MemoryRecord) (memory.Decision, error) {
	r := rec
	r.Hash = memory.Hash(r.Content)
	r.Extractions = 1
	if err := r.Validate(); err != nil {
		return memory.Decision{}, err
	}
	key := events.MemoryKey(r.Repo, r.Hash)
	for range maxCASAttempts {
		data, err := events.Encode(r)
		if err != nil {
			return memory.Decision{}, err
		}
		if _, err := s.kv.Create(ctx, key, data); err == nil {
			s.inserted.Add(1)
			return memory.Decision{Action: memory.ActionInsert, Reason: memory.ReasonUniqueHash, Hash: r.Hash, Match: -1}, nil
		} else if !isConflict(err) {
			return memory.Decision{}, fmt.Errorf("extractor: create memory %s: %w", key, err)
		}
		e, err := s.kv.Get(ctx, key)
		if isNotFound(err) {
			continue // deleted between the two: create again
		}
		if err != nil {
			return memory.Decision{}, fmt.Errorf("extractor: get memory %s: %w", key, err)
		}
		cur, err := events.DecodeMemoryRecord(e.Value())
		if err != nil {
			if errors.Is(err, events.ErrUnsupportedVersion) {
				return memory.Decision{}, fmt.Errorf("extractor: memory %s was written by a newer release: upgrade this extractor: %w", key, err)
			}
			// An unreadable record is replaced by this one.
			next := r
			if err := s.write(ctx, key, next, e.Revision()); err != nil {
				if isConflict(err) {
					s.conflicts.Add(1)
					continue
				}
				return memory.Decision{}, err
			}
			s.inserted.Add(1)
			return memory.Decision{Action: memory.ActionInsert, Reason: memory.ReasonUniqueHash, Hash: r.Hash, Match: -1}, nil
		}
		d := memory.DecideDuplicate(r.Memory, []memory.Memory{cur.Memory})
		if cur.Batch == r.Batch {
			s.sameBatch.Add(1)
			return memory.Decision{Action: memory.ActionSkip, Reason: ReasonSameBatch, Hash: r.Hash, Match: 0,
				ExistingConfidence: cur.Confidence, NewConfidence: r.Confidence}, nil
		}
		next := cur
		next.Extractions++
		next.Batch = r.Batch
		if len(r.ErrorFiles) > 0 {
			next.ErrorFiles = mergeErrorFiles(r.ErrorFiles, cur.ErrorFiles)
			next.ErrorSeen = r.ErrorSeen
		}
		if d.Action == memory.ActionUpdate {
			next.Memory = d.Updated(cur.Memory, r.Memory, s.clk.Now())
			next.Agent = r.Agent
			if r.Outcome != "" {
				next.Outcome = r.Outcome
			}
		}
		if err := s.write(ctx, key, next, e.Revision()); err != nil {
			if isConflict(err) {
				s.conflicts.Add(1)
				continue
			}
			return memory.Decision{}, err
		}
		switch {
		case d.Action == memory.ActionUpdate:
			s.updated.Add(1)
		case d.Reason == memory.ReasonEqualConfidence:
			s.skippedEqual.Add(1)
			s.seenAgain.Add(1)
		default:
			s.skippedLower.Add(1)
			s.seenAgain.Add(1)
		}
		return d, nil
	}
	return memory.Decision{}, fmt.Errorf("%w: memory %s", errCASExhausted, key)
}

func (s *Store) write(ctx context.Context, key string, r events.MemoryRecord, rev uint64) error {
	data, err := events.Encode(r)
	if err != nil {
		return err
	}
	if _, err := s.kv.Update(ctx, key, data, rev); err != nil {
		if isConflict(err) {
			return err
		}
		return fmt.Errorf("extractor: update memory %s: %w", key, err)
	}
	return nil
}

// Get returns the stored record of repo and hash; found is false when
// there is none.
func (s *Store) Get(ctx context.Context, repo, hash string) (rec events.MemoryRecord, found bool, err error) {
	e, err := s.kv.Get(ctx, events.MemoryKey(repo, hash))
	if isNotFound(err) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, fmt.Errorf("extractor: get memory: %w", err)
	}
	rec, err = events.DecodeMemoryRecord(e.Value())
	return rec, err == nil, err
}

// mergeErrorFiles is newer's files, then older's not among them, at most
// events.MaxErrorFiles.
func mergeErrorFiles(newer, older []string) []string {
	out := slices.Clone(newer)
	for _, f := range older {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out[:min(len(out), events.MaxErrorFiles)]
}
