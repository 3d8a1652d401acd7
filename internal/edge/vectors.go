package edge

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/core/vector"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// vecState is what the materialiser knows of a document's vectors under
// its model. Vectors embed one version of the content (sha); they are in
// the vector index only while the document's current content has that
// SHA-256, so a semantic hit never names a line range of other content.
// Vectors that wait for their content (the vector record arrived before
// the DocRecord) or whose document moved on keep their chunks here until
// the embed workers replace them.
type vecState struct {
	sha     string
	indexed bool
	chunks  []vector.Chunk // vectors not in the index; nil while indexed
}

// syncVectorsLocked puts key's vectors in the index when they embed the
// document's current content and takes them out when they do not.
func (m *Materialiser) syncVectorsLocked(key string) {
	vs := m.vecs[key]
	if vs == nil || m.vindex == nil {
		return
	}
	d := m.docs[key]
	current := d != nil && d.rec.Skip == nil && d.rec.SHA256 == vs.sha
	switch {
	case current && !vs.indexed && vs.chunks != nil:
		if err := m.vindex.Upsert(key, vs.chunks); err != nil {
			// Dimensions were checked when the record was applied.
			m.logger.Warn("vectors do not fit the index; ignoring them", "key", key, "err", err)
			delete(m.vecs, key)
			return
		}
		vs.indexed, vs.chunks = true, nil
	case !current && vs.indexed:
		vs.chunks, _ = m.vindex.Get(key)
		m.vindex.Delete(key)
		vs.indexed = false
	}
}

// VectorRevision is the last applied cue_vectors revision.
func (m *Materialiser) VectorRevision() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.vrev
}

// WaitVectorRevision blocks until the cue_vectors revision rev has been
// applied, ctx ends (its error is returned) or the materialiser stops
// (ErrStopped). Entries of other models advance the revision too once a
// later entry of the edge's model is applied; an edge without an embedder
// never advances it.
func (m *Materialiser) WaitVectorRevision(ctx context.Context, rev uint64) error {
	return m.waitFor(ctx, "vector revision", rev, func() uint64 { return m.vrev })
}

// applyVectors brings the vector index in step with a batch of
// cue_vectors entries. Vectors are kept in memory only: the bucket is
// their copy on disk, replayed at each start (a copy in the store too was
// a fifth of the workspace's cache with every file embedded).
func (m *Materialiser) applyVectors(_ context.Context, entries []jetstream.KeyValueEntry) error {
	last := m.VectorRevision()
	changes := make([]VectorChange, 0, len(entries))
	for _, e := range entries {
		if e.Revision() <= last {
			continue
		}
		last = e.Revision()
		if c, ok := m.vectorChange(e); ok {
			changes = append(changes, c)
		}
	}
	m.advanceVectors(changes, last)
	return nil
}

// vectorChange decodes one entry. Entries of another model, or of
// another number of dimensions, are not this edge's: ok is false. An
// entry that does not decode removes the document's vectors.
func (m *Materialiser) vectorChange(e jetstream.KeyValueEntry) (c VectorChange, ok bool) {
	model, repo, path, err := events.ParseVectorKey(e.Key())
	log := m.logger.With("key", e.Key(), "revision", e.Revision())
	if err != nil {
		log.Warn("cue_vectors entry has a key that is not a VectorKey; ignoring it", "err", err)
		return c, false
	}
	if model != m.model {
		return c, false
	}
	c = VectorChange{Key: events.DocKey(repo, path), Rev: e.Revision()}
	if e.Operation() == jetstream.KeyValueDelete || e.Operation() == jetstream.KeyValuePurge {
		return c, true
	}
	rec, err := events.DecodeVectorRecord(e.Value())
	if err == nil && (rec.Repo != repo || rec.Path != path || rec.Model != model) {
		err = fmt.Errorf("record names %s/%s under %q", rec.Repo, rec.Path, rec.Model)
	}
	if err == nil && rec.Dimensions != m.vindex.Dimensions() {
		err = fmt.Errorf("record has %d dimensions, the model %d", rec.Dimensions, m.vindex.Dimensions())
	}
	v := &Vectors{Key: c.Key, SHA256: rec.SHA256, Chunks: make([]vector.Chunk, len(rec.Chunks))}
	// int8 codes go to the index as they are, all of a record's in one
	// buffer; a record of float32s (events 1.0) is decoded to them.
	codes := make([]byte, 0, len(rec.Chunks)*(4+rec.Dimensions))
	for i := 0; err == nil && i < len(rec.Chunks); i++ {
		ch := rec.Chunks[i]
		c := vector.Chunk{StartLine: ch.StartLine, EndLine: ch.EndLine}
		start, ok := len(codes), false
		if codes, ok, err = events.AppendVectorCodes(codes, ch.Vector); ok {
			c.Codes = codes[start:len(codes):len(codes)]
		} else {
			c.Vector, err = events.DecodeVector(ch.Vector)
		}
		if n := c.Dims(); err == nil && n != rec.Dimensions {
			err = fmt.Errorf("chunk %d has %d dimensions", i, n)
		}
		v.Chunks[i] = c
	}
	if err != nil {
		log.Warn("undecodable vector record; dropping the document's vectors until the embedder rewrites them", "err", err)
		return c, true
	}
	if len(v.Chunks) > 0 {
		c.Vectors = v
	}
	return c, true
}

// advanceVectors applies stored changes to memory and moves the revision.
func (m *Materialiser) advanceVectors(changes []VectorChange, rev uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range changes {
		if old := m.vecs[c.Key]; old != nil && old.indexed {
			m.vindex.Delete(c.Key)
		}
		if c.Vectors == nil {
			delete(m.vecs, c.Key)
			continue
		}
		m.vecs[c.Key] = &vecState{sha: c.Vectors.SHA256, chunks: c.Vectors.Chunks}
		m.syncVectorsLocked(c.Key)
	}
	if rev > m.vrev {
		m.vrev = rev
		close(m.changed)
		m.changed = make(chan struct{})
	}
}
