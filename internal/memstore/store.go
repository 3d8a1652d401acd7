// Package memstore writes memories into the cue_memories bucket for
// every writer: the extractor workers (memories found in transcripts) and
// the edges (memories agents save or forget through the MCP tools). Each
// write is a compare-and-set under seed 003 §9's duplicate decision, so
// two writers never store one memory twice, and a forgotten memory keeps
// a tombstone that no later extraction of the same words brings back.
package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

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
	// durable, if set, runs after each write (SetDurable).
	durable func(context.Context) error

	inserted, updated, skippedEqual, skippedLower, seenAgain, sameBatch, conflicts, forgotten atomic.Uint64
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
	// Forgotten counts puts of forgotten memories, refused.
	Forgotten uint64
}

// ReasonSameBatch is the skip reason of a put from the batch that last
// wrote the record.
const ReasonSameBatch memory.Reason = "same_batch"

// ReasonForgotten is the skip reason of a put of a memory that was
// forgotten: it stays forgotten.
const ReasonForgotten memory.Reason = "forgotten"

// maxCASAttempts bounds a compare-and-set loop. Every round some writer
// wins, so a writer loses at most as many rounds as there are writers
// racing it; the bound only stops a loop against a bucket that keeps
// failing in some other way.
const maxCASAttempts = 1000

// ErrContended is returned when a key stayed contended past
// maxCASAttempts; the caller retries later.
var ErrContended = errors.New("memstore: key too contended; try again")

// ErrNotFound is Forget's error for a memory the bucket does not hold.
var ErrNotFound = errors.New("memstore: no such memory")

// NewStore returns a store over kv (MemoriesBucket).
func NewStore(kv jetstream.KeyValue, clk clock.Clock) *Store {
	if clk == nil {
		clk = clock.System{}
	}
	return &Store{kv: kv, clk: clk}
}

// Open returns a store over js's MemoriesBucket, which must be
// provisioned.
func Open(ctx context.Context, js jetstream.JetStream, clk clock.Clock) (*Store, error) {
	kv, err := js.KeyValue(ctx, events.MemoriesBucket)
	if err != nil {
		return nil, fmt.Errorf("memstore: bucket %s: %w", events.MemoriesBucket, err)
	}
	return NewStore(kv, clk), nil
}

// Stats returns the counters.
func (s *Store) Stats() StoreStats {
	return StoreStats{
		Inserted: s.inserted.Load(), Updated: s.updated.Load(),
		SkippedEqual: s.skippedEqual.Load(), SkippedLower: s.skippedLower.Load(),
		SeenAgain: s.seenAgain.Load(), SameBatch: s.sameBatch.Load(), Conflicts: s.conflicts.Load(),
		Forgotten: s.forgotten.Load(),
	}
}

// Put stores rec under MemoryKey(rec.Repo, rec.Hash). A new key is
// created (insert). On an existing one the stored record decides:
//
//   - forgotten: nothing changes (skip, ReasonForgotten), so a memory
//     forgotten stays forgotten however often a transcript says it again;
//   - written last by rec.Batch: a redelivered batch; nothing changes
//     (skip, ReasonSameBatch), so Put is idempotent;
//   - rec's confidence strictly greater: update (Decision.Updated, the
//     merged confidence, Extractions+1, CreatedAt kept);
//   - otherwise: skip (equal or lower confidence), but the memory was
//     said again by another batch, so Extractions+1 and Batch move on.
//
// Either way the memories rec supersedes join those the stored one does.
//
// A write that loses to another writer reads again and decides again.
// rec.Extractions is ignored (a new record starts at 1). If rec is not
// valid, the error wraps events.ErrMalformed; other errors are the
// bucket's.
func (s *Store) Put(ctx context.Context, rec events.MemoryRecord) (memory.Decision, error) {
	d, _, err := s.PutRevision(ctx, rec)
	return d, err
}

// PutRevision is Put, also returning the bucket revision that holds the
// decision: the one written, or the one read when nothing was written. A
// reader waiting for it sees the memory as Put left it.
func (s *Store) PutRevision(ctx context.Context, rec events.MemoryRecord) (memory.Decision, uint64, error) {
	d, rev, err := s.putRevision(ctx, rec)
	if err == nil {
		err = s.settle(ctx)
	}
	return d, rev, err
}

// SetDurable has every write wait for durable before it returns
// (bus.Conn.Durable): a caller answered has its memory on disk. The
// extractor's store has none: its worker waits once before it acks.
func (s *Store) SetDurable(durable func(context.Context) error) { s.durable = durable }

func (s *Store) settle(ctx context.Context) error {
	if s.durable == nil {
		return nil
	}
	if err := s.durable(ctx); err != nil {
		return fmt.Errorf("memstore: make the write durable: %w", err)
	}
	return nil
}

func (s *Store) putRevision(ctx context.Context, rec events.MemoryRecord) (memory.Decision, uint64, error) {
	r := rec
	r.Hash = memory.Hash(r.Content)
	r.Extractions = 1
	if err := r.Validate(); err != nil {
		return memory.Decision{}, 0, err
	}
	key := events.MemoryKey(r.Repo, r.Hash)
	for range maxCASAttempts {
		data, err := events.Encode(r)
		if err != nil {
			return memory.Decision{}, 0, err
		}
		if rev, err := s.kv.Create(ctx, key, data); err == nil {
			s.inserted.Add(1)
			return memory.Decision{Action: memory.ActionInsert, Reason: memory.ReasonUniqueHash, Hash: r.Hash, Match: -1}, rev, nil
		} else if !isConflict(err) {
			return memory.Decision{}, 0, fmt.Errorf("memstore: create memory %s: %w", key, err)
		}
		e, err := s.kv.Get(ctx, key)
		if isNotFound(err) {
			continue // deleted between the two: create again
		}
		if err != nil {
			return memory.Decision{}, 0, fmt.Errorf("memstore: get memory %s: %w", key, err)
		}
		cur, err := events.DecodeMemoryRecord(e.Value())
		if err != nil {
			if errors.Is(err, events.ErrUnsupportedVersion) {
				return memory.Decision{}, 0, fmt.Errorf("memstore: memory %s was written by a newer release: upgrade this process: %w", key, err)
			}
			// An unreadable record is replaced by this one.
			next := r
			rev, err := s.write(ctx, key, next, e.Revision())
			if err != nil {
				if isConflict(err) {
					s.conflicts.Add(1)
					continue
				}
				return memory.Decision{}, 0, err
			}
			s.inserted.Add(1)
			return memory.Decision{Action: memory.ActionInsert, Reason: memory.ReasonUniqueHash, Hash: r.Hash, Match: -1}, rev, nil
		}
		if !cur.Forgotten.IsZero() {
			s.forgotten.Add(1)
			return memory.Decision{Action: memory.ActionSkip, Reason: ReasonForgotten, Hash: r.Hash, Match: 0,
				ExistingConfidence: cur.Confidence, NewConfidence: r.Confidence}, e.Revision(), nil
		}
		d := memory.DecideDuplicate(r.Memory, []memory.Memory{cur.Memory})
		if cur.Batch == r.Batch {
			s.sameBatch.Add(1)
			return memory.Decision{Action: memory.ActionSkip, Reason: ReasonSameBatch, Hash: r.Hash, Match: 0,
				ExistingConfidence: cur.Confidence, NewConfidence: r.Confidence}, e.Revision(), nil
		}
		next := cur
		next.Extractions++
		next.Batch = r.Batch
		next.Supersedes = union(cur.Supersedes, r.Supersedes, events.MaxSupersedes)
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
		// The same words saved with other tags gather them all.
		next.Tags = union(cur.Tags, r.Tags, events.MaxTags)
		rev, err := s.write(ctx, key, next, e.Revision())
		if err != nil {
			if isConflict(err) {
				s.conflicts.Add(1)
				continue
			}
			return memory.Decision{}, 0, err
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
		return d, rev, nil
	}
	return memory.Decision{}, 0, fmt.Errorf("%w: memory %s", ErrContended, key)
}

// Forget replaces the memory of repo and hash with its tombstone: the
// kind, repo and times stay, the words, rationale and files go, and
// Forgotten is set to at. Every edge drops it from search, scenes and
// hook context; Put never writes it again. Forgetting a forgotten memory
// changes nothing and returns its tombstone. The revision returned holds
// the tombstone. A memory the bucket does not hold is ErrNotFound.
func (s *Store) Forget(ctx context.Context, repo, hash string, at time.Time) (events.MemoryRecord, uint64, error) {
	tomb, rev, err := s.forget(ctx, repo, hash, at)
	if err == nil {
		err = s.settle(ctx)
	}
	return tomb, rev, err
}

func (s *Store) forget(ctx context.Context, repo, hash string, at time.Time) (events.MemoryRecord, uint64, error) {
	key := events.MemoryKey(repo, hash)
	for range maxCASAttempts {
		e, err := s.kv.Get(ctx, key)
		if isNotFound(err) {
			return events.MemoryRecord{}, 0, fmt.Errorf("%w: %s", ErrNotFound, key)
		}
		if err != nil {
			return events.MemoryRecord{}, 0, fmt.Errorf("memstore: get memory %s: %w", key, err)
		}
		cur, err := events.DecodeMemoryRecord(e.Value())
		if err != nil && errors.Is(err, events.ErrUnsupportedVersion) {
			return events.MemoryRecord{}, 0, fmt.Errorf("memstore: memory %s was written by a newer release: upgrade this process: %w", key, err)
		}
		if err == nil && !cur.Forgotten.IsZero() {
			return cur, e.Revision(), nil
		}
		tomb := events.MemoryRecord{Hash: hash, Forgotten: at.UTC()}
		tomb.Repo, tomb.Kind, tomb.CreatedAt, tomb.UpdatedAt = repo, cur.Kind, cur.CreatedAt, at.UTC()
		if !tomb.Kind.Valid() {
			tomb.Kind = memory.KindFact // an unreadable record: its kind is lost with it
		}
		rev, err := s.write(ctx, key, tomb, e.Revision())
		if err != nil {
			if isConflict(err) {
				s.conflicts.Add(1)
				continue
			}
			return events.MemoryRecord{}, 0, err
		}
		return tomb, rev, nil
	}
	return events.MemoryRecord{}, 0, fmt.Errorf("%w: memory %s", ErrContended, key)
}

func (s *Store) write(ctx context.Context, key string, r events.MemoryRecord, rev uint64) (uint64, error) {
	data, err := events.Encode(r)
	if err != nil {
		return 0, err
	}
	next, err := s.kv.Update(ctx, key, data, rev)
	if err != nil {
		if isConflict(err) {
			return 0, err
		}
		return 0, fmt.Errorf("memstore: update memory %s: %w", key, err)
	}
	return next, nil
}

// Get returns the stored record of repo and hash; found is false when
// there is none.
func (s *Store) Get(ctx context.Context, repo, hash string) (rec events.MemoryRecord, found bool, err error) {
	e, err := s.kv.Get(ctx, events.MemoryKey(repo, hash))
	if isNotFound(err) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, fmt.Errorf("memstore: get memory: %w", err)
	}
	rec, err = events.DecodeMemoryRecord(e.Value())
	return rec, err == nil, err
}

// mergeErrorFiles is newer's files, then older's not among them, at most
// events.MaxErrorFiles.
func mergeErrorFiles(newer, older []string) []string {
	return union(newer, older, events.MaxErrorFiles)
}

// union is a, then b's items not among them, at most limit.
func union(a, b []string, limit int) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out[:min(len(out), limit)]
}

// isConflict reports a compare-and-set that lost to another writer.
func isConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}

func isNotFound(err error) bool {
	return errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
}
