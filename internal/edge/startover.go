package edge

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// startOver discards what the materialiser holds from r's bucket, which
// was replaced under it (deleted and created again, restored from an
// older backup, its store lost on a server), and rewinds the feed so its
// next watch replays the bucket from the start: what Open does for a
// store built from another incarnation, without stopping the edge. The
// feed reports itself replaying (Feeds, and so /readyz) until the replay
// is done.
func (m *Materialiser) startOver(f feed, r *replaced) error {
	if r.storeDamaged {
		m.logger.Warn("emptying the edge's damaged store and replaying the bucket into it from the start", "bucket", f.bucket, "found", r.why)
	} else {
		m.logger.Warn("a bucket was replaced under the running edge; discarding what came from it and replaying it from the start",
			"bucket", f.bucket, "found", r.why)
	}
	f.progress.replayed.Store(false)
	var err error
	switch f.bucket {
	case events.DocsBucket:
		if r.storeDamaged {
			// The bucket is sound, and so is what the edge holds of it
			// in memory: only the store is emptied and filled again,
			// and reads go on meanwhile.
			if err = m.discardStore(); err == nil {
				err = m.rewindDocs(r.id)
			}
		} else {
			err = m.forgetDocs(r.id)
		}
	case events.VectorsBucket:
		m.forgetVectors()
	case events.MemoriesBucket:
		m.forgetMemories()
	default:
		return fmt.Errorf("edge: no way to replay %s from the start", f.bucket)
	}
	if err != nil {
		return err
	}
	m.srcMu.Lock()
	m.srcIDs[f.bucket] = r.id
	m.srcMu.Unlock()
	m.startedOver()
	m.mu.RLock()
	hooks := m.startOverHooks
	m.mu.RUnlock()
	for _, h := range hooks {
		h(f.bucket)
	}
	return nil
}

// OnStartOver has fn called with the bucket each time the materialiser
// found it replaced and starts replaying it: a daemon has ingest compare
// the files with a replaced cue_docs then, which would otherwise stay
// empty until ingest's next periodic comparison.
func (m *Materialiser) OnStartOver(fn func(bucket string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.startOverHooks = append(m.startOverHooks, fn)
}

// forgetDocs removes every document, from memory, the indexes and the
// store, through the path a deletion takes (answers cached of them go
// too), and records the store as built from incarnation id up to
// revision 0.
func (m *Materialiser) forgetDocs(id string) error {
	m.mu.RLock()
	changes := make([]Change, 0, len(m.docs))
	for key := range m.docs {
		changes = append(changes, Change{Key: key})
	}
	m.mu.RUnlock()
	if len(changes) > 0 {
		if err := m.store.Apply(changes); err != nil {
			return fmt.Errorf("%w: %w", errStore, err)
		}
		m.publish(changes, 0)
	}
	return m.rewindDocs(id)
}

// rewindDocs records the store as built from incarnation id up to
// revision 0, so that the next watch replays cue_docs from its start.
func (m *Materialiser) rewindDocs(id string) error {
	if err := m.store.startOver(events.DocsBucket, id); err != nil {
		return fmt.Errorf("%w: %w", errStore, err)
	}
	m.mu.Lock()
	m.rev, m.settled = 0, 0
	m.mu.Unlock()
	return nil
}

// discardStore empties a store found damaged while the edge runs: its
// documents are then replayed from cue_docs into it (startOver). Reads
// of those it does not hold again yet are answered from cue_docs
// (content).
func (m *Materialiser) discardStore() error {
	m.storeMu.Lock()
	defer m.storeMu.Unlock()
	if err := m.store.discardAll(); err != nil {
		return fmt.Errorf("%w: %w", errStore, err)
	}
	m.storeDamaged.Store(false) // what is found damaged from now on is new
	return nil
}

// rebuildDamagedStore has the cue_docs follower empty the store and replay
// the bucket into it (startOver): a read found the store damaged
// (content).
func (m *Materialiser) rebuildDamagedStore(damage error) {
	m.srcMu.Lock()
	id := m.srcIDs[events.DocsBucket]
	m.srcMu.Unlock()
	m.mu.RLock()
	ch := m.docsRebuild
	m.mu.RUnlock()
	if ch == nil {
		return // not following: the next start rebuilds it
	}
	select {
	case ch <- &replaced{bucket: events.DocsBucket, why: "the edge's store is damaged: " + damage.Error(), id: id, storeDamaged: true}:
	default:
		// A replay of a replaced bucket is waiting, which would keep the
		// damaged files: the next damaged read asks again.
		m.storeDamaged.Store(false)
	}
}

// forgetVectors drops every document's vectors and rewinds cue_vectors'
// revision.
func (m *Materialiser) forgetVectors() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, vs := range m.vecs {
		if vs.indexed {
			m.vindex.Delete(key)
		}
	}
	clear(m.vecs)
	m.vrev = 0
}

// forgetMemories drops every memory and rewinds cue_memories' revision.
func (m *Materialiser) forgetMemories() {
	s := m.mems
	s.mu.RLock()
	keys := make([]string, 0, len(s.byKey))
	for key := range s.byKey {
		keys = append(keys, key)
	}
	s.mu.RUnlock()
	// The keyword index first, then the view, as applyMemories does.
	for _, key := range keys {
		s.index.Remove(key)
	}
	s.mu.Lock()
	for _, key := range keys {
		s.putLocked(key, nil)
	}
	s.mu.Unlock()
	m.mu.Lock()
	m.mrev = 0
	m.mu.Unlock()
}

// startedOver counts a replay from the start, which answers cached by
// revision must tell from the state before it (the revisions start again
// from 0), and wakes the waiters of a revision.
func (m *Materialiser) startedOver() {
	// The caches of scores over the whole index are keyed by revision.
	m.imp.mu.Lock()
	clear(m.imp.repos)
	m.imp.mu.Unlock()
	m.prior.mu.Lock()
	m.prior.set, m.prior.marked = false, nil
	m.prior.mu.Unlock()
	m.mu.Lock()
	m.startOvers++
	close(m.changed)
	m.changed = make(chan struct{})
	hooks := m.appliedHooks
	m.mu.Unlock()
	// No keys: the hooks drop every answer over the whole index.
	for _, h := range hooks {
		h(nil)
	}
}

// RecheckOnReplace has mat (and board, when not nil) compare the buckets
// and the task log they follow as soon as the server announces one of
// their streams created, deleted or restored, rather than at their next
// periodic check; also, when not nil, hears the same announcements
// (ingest's comparisons). stop ends it.
func RecheckOnReplace(nc *nats.Conn, mat *Materialiser, board *tasks.Board, also func(stream string)) (stop func(), err error) {
	followed := map[string]bool{}
	for _, b := range []string{events.DocsBucket, events.VectorsBucket, events.MemoriesBucket} {
		followed["KV_"+b] = true
	}
	streams := []string{events.TasksStream}
	for s := range followed {
		streams = append(streams, s)
	}
	return bus.OnStreamReplaced(nc, func(stream string) {
		switch {
		case followed[stream]:
			mat.Recheck()
		case stream == events.TasksStream && board != nil:
			board.Recheck()
		}
		if also != nil {
			also(stream)
		}
	}, streams...)
}
