package edge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// srcPrefix keys, per bucket, the incarnation (bus.StreamState.ID) of the
// bucket's stream the store was built from.
var srcPrefix = []byte("m/src/")

// Sources are the states of the buckets the store is built from, keyed by
// bucket name, as Open compares them with what the store recorded.
type Sources map[string]bus.StreamState

// ReadSources reads the streams behind buckets.
func ReadSources(ctx context.Context, js jetstream.JetStream, buckets ...string) (Sources, error) {
	out := Sources{}
	for _, b := range buckets {
		st, err := bus.ReadStream(ctx, js, "KV_"+b)
		if err != nil {
			return nil, fmt.Errorf("edge: %w", err)
		}
		out[b] = st
	}
	return out, nil
}

// sourceID is the incarnation of bucket recorded in the store, "" when
// none is (a store written before they were).
func (s *Store) sourceID(bucket string) (string, error) {
	var id string
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(append(srcPrefix[:len(srcPrefix):len(srcPrefix)], bucket...))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		id = string(v)
		return err
	})
	return id, err
}

// reconcileSources compares the store with the bucket it was built from
// and discards every document when cue_docs is another incarnation or is
// behind the store (vectors are not stored: every start replays them). It
// then records the incarnations, and returns one line per discard saying
// what was found; the materialiser then replays the bucket from its start.
func (s *Store) reconcileSources(src Sources) (discarded []string, err error) {
	check := func(bucket string, pos uint64) (string, error) {
		st, ok := src[bucket]
		if !ok {
			return "", nil
		}
		id, err := s.sourceID(bucket)
		if err != nil {
			return "", fmt.Errorf("edge: read the source of %s: %w", bucket, err)
		}
		return st.Diverged(id, pos), nil
	}
	rev, err := s.LastRevision()
	if err != nil {
		return nil, err
	}
	why, err := check(events.DocsBucket, rev)
	if err != nil {
		return nil, err
	}
	if why != "" {
		// The vectors name documents of the lost incarnation too.
		if err := s.discardAll(); err != nil {
			return nil, err
		}
		discarded = append(discarded, why)
	}
	err = s.db.Update(func(txn *badger.Txn) error {
		for bucket, st := range src {
			if err := txn.Set(append(srcPrefix[:len(srcPrefix):len(srcPrefix)], bucket...), []byte(st.ID())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("edge: record the sources: %w", err)
	}
	return discarded, nil
}

// startOver records that the store, its documents already removed, is
// built from incarnation id of bucket from its start: revision 0.
func (s *Store) startOver(bucket, id string) error {
	var rev [8]byte
	err := s.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(keyRevision, rev[:]); err != nil {
			return err
		}
		return txn.Set(append(srcPrefix[:len(srcPrefix):len(srcPrefix)], bucket...), []byte(id))
	})
	if err != nil {
		return fmt.Errorf("edge: record the replaced %s: %w", bucket, err)
	}
	return nil
}

// replaced is a bucket found to be another incarnation than the one the
// materialiser follows, or behind what it applied: why says what was
// found, id names the incarnation now behind the bucket.
type replaced struct {
	bucket, why, id string
	// storeDamaged says the bucket is sound but the store built from it
	// is not: the store is emptied before the bucket is replayed into it.
	storeDamaged bool
}

func (r *replaced) Error() string {
	return fmt.Sprintf("edge: %s was replaced under the running edge: %s", r.bucket, r.why)
}

// bucketStatus is the part of a jetstream.KeyValue that names the
// incarnation of its stream.
type bucketStatus interface {
	Status(ctx context.Context) (jetstream.KeyValueStatus, error)
}

// checkSource compares f's bucket with the incarnation the materialiser
// follows and the revision it reached, and returns what it found when
// they diverge, nil otherwise. A bucket that cannot be read now passes
// (the watch that follows reports the outage); unreadable says so.
func (m *Materialiser) checkSource(ctx context.Context, f feed) (r *replaced, unreadable bool) {
	b, ok := f.source.(bucketStatus)
	if !ok {
		return nil, false
	}
	// In a cluster one answer can be stale (a stream's state read from a
	// replica that stepped down, while the watch already delivered later
	// entries): only a divergence every read confirms counts.
	var id string
	why := bus.ConfirmDiverged(ctx, func() string {
		var why string
		why, id, unreadable = m.divergence(ctx, f, b)
		return why
	})
	if why == "" {
		return nil, unreadable
	}
	return &replaced{bucket: f.bucket, why: why, id: id}, false
}

// divergence is why f's bucket, as b reports it now, cannot be what the
// materialiser follows, or "" when it can or cannot be read now
// (unreadable); id is the incarnation b reports.
func (m *Materialiser) divergence(ctx context.Context, f feed, b bucketStatus) (why, id string, unreadable bool) {
	// The position first: read after the bucket's state, it may include
	// entries applied since, past the end that state reports.
	pos := f.rev()
	st, err := b.Status(ctx)
	if err != nil {
		return "", "", true
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok || bs.StreamInfo() == nil {
		return "", "", true
	}
	now := bus.StateOf(bs.StreamInfo())
	m.srcMu.Lock()
	held, known := m.srcIDs[f.bucket]
	if !known {
		m.srcIDs[f.bucket] = now.ID()
	}
	m.srcMu.Unlock()
	return now.Diverged(held, pos), now.ID(), false
}

// Recheck has the materialiser compare its buckets with the incarnations
// it follows now, rather than at its next SourceCheck: call it when the
// server announces one of their streams created, deleted or restored
// (bus.OnStreamReplaced).
func (m *Materialiser) Recheck() {
	select {
	case m.recheck <- struct{}{}:
	default:
	}
}

// checkSourcesEvery runs checkSource on every feed each SourceCheck and
// whenever Recheck asks (bus.CheckEveryAndWhenAnnounced), until ctx
// ends, and hands each divergence to the feed's follower (f.replaced),
// which discards what came from the bucket and replays it.
func (m *Materialiser) checkSourcesEvery(ctx context.Context, feeds []feed) {
	bus.CheckEveryAndWhenAnnounced(ctx, m.cfg.SourceCheck, m.recheck, func() (stop, anyUnreadable bool) {
		for _, f := range feeds {
			r, unreadable := m.checkSource(ctx, f)
			anyUnreadable = anyUnreadable || unreadable
			if r != nil {
				select {
				case f.replaced <- r:
				default: // one is already waiting
				}
			}
		}
		return false, anyUnreadable
	})
}

// bucketAgreementWait bounds disagreement's read of the bucket's
// keys: a bucket that cannot be read in time is not compared (the watch
// that follows reports the outage).
const bucketAgreementWait = 30 * time.Second

// disagreement finds the documents the store holds otherwise than the
// bucket: every document it holds must be the bucket's latest entry of
// its key, unless the bucket changed the key since the store's revision
// (the watch brings that); every document the bucket held at that
// revision must be held, unless its record is one the edge leaves out
// (deleted, undecodable, not a document's key). It returns up to a few
// of their keys and how many there are; a bucket that cannot be read
// gives 0 and the error.
// latest is a key's last entry in the bucket.
type latest struct {
	rev     uint64
	removed bool
}

// bucketEntries reads the last entry of every key of kv (their metadata
// only), within bucketAgreementWait.
func bucketEntries(ctx context.Context, kv jetstream.KeyValue) (map[string]latest, error) {
	ctx, cancel := context.WithTimeout(ctx, bucketAgreementWait)
	defer cancel()
	w, err := kv.WatchAll(ctx, jetstream.MetaOnly())
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	entries := map[string]latest{}
	for e := range w.Updates() {
		if e == nil {
			break // the initial values are all in
		}
		entries[e.Key()] = latest{e.Revision(), e.Operation() != jetstream.KeyValuePut}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return entries, nil
}

// disagreement compares the store with bucketEntries' reading of kv
// (entries, or the error it met).
func (m *Materialiser) disagreement(ctx context.Context, kv jetstream.KeyValue, latest map[string]latest, err error) (sample []string, n int, _ error) {
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, bucketAgreementWait)
	defer cancel()
	m.mu.RLock()
	upTo := m.rev
	held := make(map[string]uint64, len(m.docs))
	for key, d := range m.docs {
		held[key] = d.rev
	}
	m.mu.RUnlock()
	note := func(key string) {
		if n++; len(sample) < 5 {
			sample = append(sample, key)
		}
	}
	for key, rev := range held {
		if now := latest[key]; now.rev <= upTo && (now.removed || now.rev != rev) {
			note(key)
		}
	}
	for key, now := range latest {
		if _, ok := held[key]; ok || now.removed || now.rev > upTo {
			continue
		}
		repo, path, err := events.ParseDocKey(key)
		if err != nil {
			continue
		}
		e, err := kv.Get(ctx, key)
		if err != nil || e.Revision() != now.rev {
			continue // changed since: the watch brings it
		}
		if rec, err := events.DecodeDocRecord(e.Value()); err == nil && !rec.Deleted && rec.Repo == repo && rec.Path == path {
			note(key)
		}
	}
	return sample, n, nil
}
