package edge

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// MemoriesWatcher is the part of the cue_memories KeyValue bucket the
// materialiser uses; a jetstream.KeyValue is one.
type MemoriesWatcher interface {
	WatchAll(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error)
}

// Memories are kept in memory only, never in the edge's Badger: an edge
// replays cue_memories from its first revision at every start. The bucket
// keeps one small record per memory, so the replay is cheap, and a lost
// disk cannot make this edge differ from a fresh one because there is no
// disk state to lose. Their vectors, too, are recomputed at start, off
// the watch loop, and trail the records the way document vectors trail
// indexing.

// memEntry is one materialised memory.
type memEntry struct {
	key string
	rev uint64
	rec events.MemoryRecord
	// text is what the memory's vector embeds: its content and rationale.
	text string
	// subject is what memory.AutoSupersedesWith reads of its words.
	subject memory.Subject
	// stamp is the memory's in both indexes (memoryStamp).
	stamp uint64
}

// memState is the in-memory view of cue_memories: the records, their
// lookups by repo, kind, session and touched file, a keyword index over
// content, rationale and files, and, with an embedder, one vector per
// memory.
type memState struct {
	mu    sync.RWMutex
	byKey map[string]*memEntry
	// The filters' indexes hold each memory's entry, so a filter checks
	// the memories of its smallest set without looking each up again.
	byRepo    map[string]map[string]*memEntry
	byKind    map[string]map[string]*memEntry
	bySession map[string]map[string]*memEntry
	// byBase indexes touched files by their last path element, so a
	// path-suffix filter looks at a few memories, not all.
	byBase map[string]map[string]*memEntry
	// supersededBy maps a memory's key to the keys of the live memories
	// that supersede it: a key with any is history, not current.
	supersededBy map[string]map[string]struct{}
	// autoBy and autoOlds are the supersessions memory.AutoSupersedes
	// finds between live memories sharing a file (a reversed or restated
	// decision): old key to newer keys, and newer key to old keys.
	autoBy, autoOlds map[string]map[string]struct{}
	// byChoice indexes decisions and experiences by repo, kind and the
	// last element of each file they touch: the memories one of them is
	// compared with.
	byChoice    map[string]map[string]struct{}
	undecodable uint64
	applied     uint64

	index *search.Index
	// repos numbers repos for the stamps the keyword index keeps.
	repos repoStamps
	// vindex holds a vector per memory whose current text it embeds (nil
	// without an embedder); vecText says which text that was.
	vindex  *vector.Index
	vecText map[string]string
	// pending are the keys whose text has no vector yet; wake tells the
	// embedding loop there are some.
	pending map[string]struct{}
	// order is a sorted snapshot of pending that takePending hands out
	// from the front; keys that left pending since are skipped, and keys
	// added since wait for the next snapshot.
	order []string
	wake  chan struct{}
}

func newMemState(dims int) *memState {
	s := &memState{
		byKey:     make(map[string]*memEntry),
		byRepo:    make(map[string]map[string]*memEntry),
		byKind:    make(map[string]map[string]*memEntry),
		bySession: make(map[string]map[string]*memEntry),
		byBase:    make(map[string]map[string]*memEntry),
		index:     search.NewIndex(),

		supersededBy: make(map[string]map[string]struct{}),
		autoBy:       make(map[string]map[string]struct{}),
		autoOlds:     make(map[string]map[string]struct{}),
		byChoice:     make(map[string]map[string]struct{}),
		vecText:      make(map[string]string),
		pending:      make(map[string]struct{}),
		wake:         make(chan struct{}, 1),
	}
	if dims > 0 {
		s.vindex = vector.New(dims)
	}
	return s
}

// memoryFields is what the keyword index scores of a memory: the content
// weighs like a title, the touched files like headings (a query naming a
// file finds what was decided about it), the rationale like body text.
func memoryFields(rec *events.MemoryRecord, stamp uint64) search.Fields {
	return search.Fields{Title: rec.Content, Headings: rec.FilesTouched, Body: rec.Rationale, Stamp: stamp}
}

// A memory's stamp, the number the keyword index keeps beside it for
// search.SearchStamped, packs what search_memories' filters ask most: the
// kind's place in memoryKinds (0 for any other) in bits 0-7, the repo's
// number in repoStamps (0 past the last) in bits 8-23, and the memory's
// last update in whole seconds since 1970 (0 when out of range) above.
const (
	stampKindBits = 8
	stampRepoBits = 16
	stampTimeBits = 64 - stampKindBits - stampRepoBits
)

func memoryStamp(kind memory.Kind, repo uint64, updated time.Time) uint64 {
	secs := updated.Unix()
	if secs < 1 || secs >= 1<<stampTimeBits {
		secs = 0
	}
	return uint64(kindCode(kind)) | repo<<stampKindBits | uint64(secs)<<(stampKindBits+stampRepoBits)
}

func stampKind(stamp uint64) int      { return int(stamp & (1<<stampKindBits - 1)) }
func stampRepo(stamp uint64) uint64   { return stamp >> stampKindBits & (1<<stampRepoBits - 1) }
func stampSeconds(stamp uint64) int64 { return int64(stamp >> (stampKindBits + stampRepoBits)) }

// repoStamps numbers the repos memories name, from 1, for their stamps.
// Numbers are never taken back: a repo's memories keep theirs.
type repoStamps struct {
	mu    sync.RWMutex
	ids   map[string]uint64
	names []string // names[id-1]
}

// id returns repo's number, giving it one if it has none; 0 once every
// number is taken.
func (r *repoStamps) id(repo string) uint64 {
	r.mu.RLock()
	id, ok := r.ids[repo]
	r.mu.RUnlock()
	if ok {
		return id
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.ids[repo]; ok {
		return id
	}
	if len(r.names) == 1<<stampRepoBits-1 {
		return 0
	}
	if r.ids == nil {
		r.ids = make(map[string]uint64)
	}
	r.names = append(r.names, repo)
	id = uint64(len(r.names))
	r.ids[repo] = id
	return id
}

// lookup returns repo's number, 0 when it has none.
func (r *repoStamps) lookup(repo string) uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.ids[repo]
}

// readable returns, by number, whether id may read each numbered repo.
func (r *repoStamps) readable(id access.Identity) []bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]bool, len(r.names)+1)
	for i, name := range r.names {
		out[i+1] = id.MayRead(name)
	}
	return out
}

var memoryKinds = []memory.Kind{memory.KindDecision, memory.KindRationale, memory.KindFact, memory.KindPreference, memory.KindOpenQuestion, memory.KindExperience}

func kindCode(k memory.Kind) int {
	return slices.Index(memoryKinds, k) + 1
}

// embedText is what a memory's vector embeds.
func embedText(rec *events.MemoryRecord) string {
	if rec.Rationale == "" {
		return rec.Content
	}
	return rec.Content + "\n" + rec.Rationale
}

// decodeMemoryRecord reads a cue_memories value and checks that the
// edge can serve it.
func decodeMemoryRecord(b []byte) (events.MemoryRecord, error) {
	rec, err := events.DecodeMemoryRecord(b)
	if err != nil {
		return rec, err
	}
	return rec, rec.Validate()
}

// applyMemories applies a batch of cue_memories entries. Entries at or
// below the applied revision are skipped (a re-established watch repeats
// a few). A delete, a purge or a tombstone (a forgotten memory) removes
// the memory; so does a value that does
// not decode or whose key does not name it, because a fresh edge replaying
// the bucket would not see the older value either.
func (m *Materialiser) applyMemories(_ context.Context, entries []jetstream.KeyValueEntry) error {
	last := m.MemoryRevision()
	s := m.mems
	type change struct {
		key string
		e   *memEntry // nil: remove
	}
	changes := make([]change, 0, len(entries))
	bad := 0
	for _, kv := range entries {
		if kv.Revision() <= last {
			continue
		}
		last = kv.Revision()
		c := change{key: kv.Key()}
		if op := kv.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
			changes = append(changes, c)
			continue
		}
		repo, hash, err := events.ParseMemoryKey(kv.Key())
		rec, derr := decodeMemoryRecord(kv.Value())
		if err == nil {
			err = derr
		}
		if err == nil && (rec.Repo != repo || rec.Hash != hash) {
			err = fmt.Errorf("record names %s", events.MemoryKey(rec.Repo, rec.Hash))
		}
		if err != nil {
			bad++
			m.logger.Warn("undecodable memory record; dropping the memory until an extractor rewrites it",
				"key", kv.Key(), "revision", kv.Revision(), "err", err)
			changes = append(changes, c)
			continue
		}
		if !rec.Forgotten.IsZero() {
			changes = append(changes, c) // forgotten: served nowhere
			continue
		}
		c.e = &memEntry{key: kv.Key(), rev: kv.Revision(), rec: rec, text: embedText(&rec)}
		if choice(&rec) {
			c.e.subject = memory.SubjectOf(rec.Memory)
		}
		changes = append(changes, c)
	}
	if len(changes) == 0 {
		return nil
	}
	// The keyword index first, then the view: a search between the two
	// finds an id the view lacks, or misses one it has, and output skips
	// ids the view lacks.
	for _, c := range changes {
		if c.e == nil {
			s.index.Remove(c.key)
		} else {
			c.e.stamp = memoryStamp(c.e.rec.Kind, s.repos.id(c.e.rec.Repo), c.e.rec.UpdatedAt)
			s.index.Upsert(c.key, memoryFields(&c.e.rec, c.e.stamp))
		}
	}
	s.mu.Lock()
	for _, c := range changes {
		s.putLocked(c.key, c.e)
	}
	s.applied += uint64(len(changes))
	s.undecodable += uint64(bad)
	embed := len(s.pending) > 0
	s.mu.Unlock()
	if embed {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	m.mu.Lock()
	m.mrev = last
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
	return nil
}

// putLocked sets key's memory to e, or removes it when e is nil.
func (s *memState) putLocked(key string, e *memEntry) {
	if old, ok := s.byKey[key]; ok {
		s.unlinkLocked(old)
		delete(s.byKey, key)
	}
	s.unlinkAutoLocked(key)
	if e == nil {
		if s.vindex != nil {
			s.vindex.Delete(key)
		}
		delete(s.vecText, key)
		delete(s.pending, key)
		return
	}
	s.byKey[key] = e
	linkTo(s.byRepo, e.rec.Repo, key, e)
	linkTo(s.byKind, string(e.rec.Kind), key, e)
	linkTo(s.bySession, e.rec.Session, key, e)
	for _, f := range e.rec.FilesTouched {
		linkTo(s.byBase, fileBase(f), key, e)
	}
	for _, h := range e.rec.Supersedes {
		link(s.supersededBy, events.MemoryKey(e.rec.Repo, h), key)
	}
	s.linkAutoLocked(e)
	if choice(&e.rec) {
		for _, ck := range choiceKeys(&e.rec) {
			link(s.byChoice, ck, key)
		}
	}
	if s.vindex == nil {
		return
	}
	if s.vecText[key] == e.text {
		// A new confidence or count leaves the vector as it is; its stamp
		// follows the record (an update time, a kind).
		s.vindex.SetStamp(key, e.stamp)
		return
	}
	// The vector embeds other text: drop it rather than rank by words the
	// memory no longer holds, and embed the new text.
	s.vindex.Delete(key)
	delete(s.vecText, key)
	s.pending[key] = struct{}{}
}

func (s *memState) unlinkLocked(e *memEntry) {
	unlink(s.byRepo, e.rec.Repo, e.key)
	unlink(s.byKind, string(e.rec.Kind), e.key)
	unlink(s.bySession, e.rec.Session, e.key)
	for _, f := range e.rec.FilesTouched {
		unlink(s.byBase, fileBase(f), e.key)
	}
	for _, h := range e.rec.Supersedes {
		unlink(s.supersededBy, events.MemoryKey(e.rec.Repo, h), e.key)
	}
	if choice(&e.rec) {
		for _, ck := range choiceKeys(&e.rec) {
			unlink(s.byChoice, ck, e.key)
		}
	}
}

// choice reports whether rec is a decision or an experience: the kinds
// memory.AutoSupersedes compares.
func choice(rec *events.MemoryRecord) bool {
	return rec.Kind == memory.KindDecision || rec.Kind == memory.KindExperience
}

// choiceKeys are the byChoice keys of rec: its repo and kind with each
// touched file's name, and with each of its tags, lowercased.
func choiceKeys(rec *events.MemoryRecord) []string {
	prefix := rec.Repo + "\x00" + string(rec.Kind) + "\x00"
	keys := make([]string, 0, len(rec.FilesTouched)+len(rec.Tags))
	for _, f := range rec.FilesTouched {
		keys = append(keys, prefix+"file\x00"+fileBase(f))
	}
	for _, t := range rec.Tags {
		keys = append(keys, prefix+"tag\x00"+strings.ToLower(t))
	}
	return keys
}

// maxAutoCandidates bounds the memories one file name or tag brings to
// compare with a new one, so applying a memory stays cheap in a large
// bucket.
const maxAutoCandidates = 2000

// linkAutoLocked records the supersessions between e and the live
// memories of its repo and kind that share a file name or a tag with it,
// either way (AutoSupersedesWith then checks the whole paths).
func (s *memState) linkAutoLocked(e *memEntry) {
	if !choice(&e.rec) {
		return
	}
	keys := choiceKeys(&e.rec)
	var seen map[string]bool // only when a second key may repeat candidates
	if len(keys) > 1 {
		seen = map[string]bool{}
	}
	for _, ck := range keys {
		near := s.byChoice[ck]
		if len(near) > maxAutoCandidates {
			continue // a name as common as main.go says little about the subject
		}
		for k := range near {
			if k == e.key || seen[k] {
				continue
			}
			if seen != nil {
				seen[k] = true
			}
			other := s.byKey[k]
			if other == nil {
				continue
			}
			switch {
			case memory.AutoSupersedesWith(e.rec.Memory, e.subject, other.rec.Memory, other.subject):
				link(s.autoBy, k, e.key)
				link(s.autoOlds, e.key, k)
			case memory.AutoSupersedesWith(other.rec.Memory, other.subject, e.rec.Memory, e.subject):
				link(s.autoBy, e.key, k)
				link(s.autoOlds, k, e.key)
			}
		}
	}
}

// unlinkAutoLocked forgets the automatic supersessions involving key.
func (s *memState) unlinkAutoLocked(key string) {
	for old := range s.autoOlds[key] {
		unlink(s.autoBy, old, key)
	}
	delete(s.autoOlds, key)
	for newer := range s.autoBy[key] {
		unlink(s.autoOlds, newer, key)
	}
	delete(s.autoBy, key)
}

// supersededLocked reports whether a live memory supersedes key.
func (s *memState) supersededLocked(key string) bool {
	return len(s.supersededBy[key]) > 0 || len(s.autoBy[key]) > 0
}

// supersedersLocked are the hashes of the live memories superseding key,
// by hash or by memory.AutoSupersedes, sorted.
func (s *memState) supersedersLocked(key string) []string {
	var out []string
	for _, by := range []map[string]struct{}{s.supersededBy[key], s.autoBy[key]} {
		for k := range by {
			if me := s.byKey[k]; me != nil && !slices.Contains(out, me.rec.Hash) {
				out = append(out, me.rec.Hash)
			}
		}
	}
	slices.Sort(out)
	return out
}

func link(ix map[string]map[string]struct{}, v, key string) {
	linkTo(ix, v, key, struct{}{})
}

// linkTo files key with its value under v.
func linkTo[V any](ix map[string]map[string]V, v, key string, val V) {
	set := ix[v]
	if set == nil {
		set = make(map[string]V)
		ix[v] = set
	}
	set[key] = val
}

func unlink[V any](ix map[string]map[string]V, v, key string) {
	if set := ix[v]; set != nil {
		delete(set, key)
		if len(set) == 0 {
			delete(ix, v)
		}
	}
}

// fileBase is the last element of a file path, '/' or '\' separated.
func fileBase(p string) string {
	p = strings.ReplaceAll(strings.TrimRight(p, `/\`), `\`, "/")
	return path.Base(p)
}

// samePath reports whether a touched file and a path asked about name the
// same file: one ends with the other at a path boundary, so a memory's
// absolute path matches a repo-relative one and the other way round.
func samePath(a, b string) bool { return pathHasSuffix(a, b) || pathHasSuffix(b, a) }

// pathHasSuffix reports whether p ends with suffix at a path boundary:
// "src/auth/token.go" has the suffixes "token.go", "auth/token.go" and
// itself, not "en.go". Leading "./" and '\' separators are ignored.
func pathHasSuffix(p, suffix string) bool {
	p = strings.ReplaceAll(p, `\`, "/")
	suffix = strings.TrimPrefix(strings.ReplaceAll(suffix, `\`, "/"), "./")
	if suffix == "" || !strings.HasSuffix(p, suffix) {
		return false
	}
	rest := p[:len(p)-len(suffix)]
	return rest == "" || strings.HasSuffix(rest, "/") || strings.HasPrefix(suffix, "/")
}

// memoryEmbedBatch is how many memories one Embed call takes: large enough
// to keep the model's batching busy, small enough that a query embedding
// waiting for the model is not held up long.
const memoryEmbedBatch = 64

// embedMemories embeds the memories whose text has no vector yet, in
// batches, until ctx ends. It runs beside the watch loops, so a slow or
// unavailable model delays semantic search of new memories but never
// their keyword search or the edge's readiness. A failed batch is retried
// with backoff; a memory changed or removed while its batch was embedded
// is embedded again or dropped.
func (m *Materialiser) embedMemories(ctx context.Context, emb embed.Embedder) {
	s := m.mems
	delay := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for {
			keys, texts := s.takePending(memoryEmbedBatch)
			if len(keys) == 0 {
				break
			}
			// Memories are prose.
			vecs, err := embed.EmbedDocs(ctx, emb, texts, true)
			if ctx.Err() != nil {
				return
			}
			if err == nil && len(vecs) != len(texts) {
				err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
			}
			if err != nil {
				s.requeue(keys, texts)
				level := m.logger.Warn
				if errors.Is(err, embed.ErrUnavailable) {
					level = m.logger.Info
				}
				level("embedding memories failed; retrying", "model", m.model, "memories", len(keys), "err", err, "retry_in", delay)
				t := time.NewTimer(delay)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				delay = min(delay*2, 30*time.Second)
				continue
			}
			delay = 100 * time.Millisecond
			s.storeVectors(m, keys, texts, vecs)
		}
	}
}

// takePending removes up to n keys from pending, in key order so batches
// are reproducible, with the texts to embed. The keys are sorted once per
// pass over what is pending, not once per batch: with 100,000 memories to
// embed after a start, sorting them all for each batch of 64 held the
// lock that searches take for ten milliseconds at a time.
func (s *memState) takePending(n int) (keys, texts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		s.order = nil
		return nil, nil
	}
	for len(keys) < n {
		if len(s.order) == 0 {
			if len(keys) > 0 {
				break // the next snapshot starts the next batch
			}
			s.order = make([]string, 0, len(s.pending))
			for k := range s.pending {
				s.order = append(s.order, k)
			}
			slices.Sort(s.order)
		}
		k := s.order[0]
		s.order = s.order[1:]
		if _, ok := s.pending[k]; !ok {
			continue
		}
		delete(s.pending, k)
		keys = append(keys, k)
		texts = append(texts, s.byKey[k].text)
	}
	return keys, texts
}

// requeue puts back the keys of a failed batch whose text is unchanged.
func (s *memState) requeue(keys, texts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		if e := s.byKey[k]; e != nil && e.text == texts[i] && s.vecText[k] != e.text {
			s.pending[k] = struct{}{}
		}
	}
}

// storeVectors indexes the vectors of a batch whose memories still hold
// the texts embedded.
func (s *memState) storeVectors(m *Materialiser, keys, texts []string, vecs [][]float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		e := s.byKey[k]
		if e == nil || e.text != texts[i] {
			continue // removed, or changed and queued again
		}
		if err := s.vindex.UpsertStamped(k, []vector.Chunk{{Vector: vecs[i]}}, e.stamp); err != nil {
			m.logger.Warn("memory vector does not fit the index; the memory stays keyword-only", "key", k, "model", m.model, "err", err)
			continue
		}
		s.vecText[k] = texts[i]
	}
}

// MemoryRevision is the last applied cue_memories revision.
func (m *Materialiser) MemoryRevision() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mrev
}

// WaitMemoryRevision blocks until the cue_memories revision rev has been
// applied, ctx ends (its error is returned) or the materialiser stops
// (ErrStopped).
func (m *Materialiser) WaitMemoryRevision(ctx context.Context, rev uint64) error {
	return m.waitFor(ctx, "memory revision", rev, func() uint64 { return m.mrev })
}

// memoryCounts are the memory figures of Status.
func (m *Materialiser) memoryCounts() (memories, vectors int, undecodable uint64) {
	s := m.mems
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.vindex != nil {
		vectors = s.vindex.Len()
	}
	return len(s.byKey), vectors, s.undecodable
}
