package edge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// topics is an Embedder whose dimensions are topics: a text's vector
// counts the words of each topic it holds, so tests know which chunk a
// query is closest to without a model.
type topics struct {
	model string
	fail  atomic.Bool
}

var topicWords = [][]string{
	{"sign", "login", "credentials", "session"},  // 0: signing in
	{"release", "production", "ship", "rollout"}, // 1: deploying
	{"failure", "error", "codes", "status"},      // 2: errors
	{"refresh", "rotate", "renew"},               // 3: refreshing
	{"provider", "oauth", "secret"},              // 4: oauth
	{"unrelated"},                                // 5
}

func (e *topics) ModelID() string { return e.model }
func (e *topics) Dimensions() int { return len(topicWords) }

func (e *topics) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.fail.Load() {
		return nil, fmt.Errorf("%w: model server down", embed.ErrUnavailable)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = topicVector(strings.Fields(strings.ToLower(t))...)
	}
	return out, nil
}

// topicVector is the normalised topic count of words; with none known it
// points at the "unrelated" topic.
func topicVector(words ...string) []float32 {
	v := make([]float32, len(topicWords))
	for _, w := range words {
		for d, ws := range topicWords {
			if slices.Contains(ws, w) {
				v[d]++
			}
		}
	}
	var n float32
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		v[5], n = 1, 1
	}
	inv := 1 / float32(math.Sqrt(float64(n)))
	for i := range v {
		v[i] *= inv
	}
	return v
}

type chunkSpec struct {
	start, end int
	words      string
}

// putVectors writes a VectorRecord of rec's content under model, as an
// embed worker would, and returns its cue_vectors revision.
func (h *harness) putVectors(model string, rec events.DocRecord, chunks ...chunkSpec) uint64 {
	h.t.Helper()
	vr := events.VectorRecord{Repo: rec.Repo, Path: rec.Path, Model: model, Dimensions: len(topicWords), SHA256: rec.SHA256, SourceSeq: rec.SourceSeq}
	for _, c := range chunks {
		vr.Chunks = append(vr.Chunks, events.ChunkVector{StartLine: c.start, EndLine: c.end, Vector: events.EncodeVector(topicVector(strings.Fields(c.words)...))})
	}
	b, err := events.Encode(vr)
	if err != nil {
		h.t.Fatal(err)
	}
	rev, err := h.vkv.Put(context.Background(), events.VectorKey(model, rec.Repo, rec.Path), b)
	if err != nil {
		h.t.Fatal(err)
	}
	return rev
}

func (r *running) waitVectors(rev uint64) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.m.WaitVectorRevision(ctx, rev); err != nil {
		r.t.Fatalf("waiting for vector revision %d (at %d): %v", rev, r.m.VectorRevision(), err)
	}
}

const testModel = "test:topics"

// semanticFixture is fixtureDocs with vectors for the three markdown docs;
// src/auth.go has none yet.
func semanticFixture(t *testing.T, dir string) (*harness, *running, *topics) {
	h := newHarness(t)
	emb := &topics{model: testModel}
	h.emb = emb
	docs := fixtureDocs()
	r := h.start(dir)
	r.wait(h.putAll(docs))
	h.putVectors(testModel, docs[0],
		chunkSpec{1, 4, "sign unrelated"},
		chunkSpec{5, 9, "login credentials session"},
		chunkSpec{10, 13, "refresh rotate"},
		chunkSpec{14, 16, "oauth provider secret"})
	h.putVectors(testModel, docs[1], chunkSpec{1, 4, "ship production"}, chunkSpec{5, 7, "rollout"})
	r.waitVectors(h.putVectors(testModel, docs[2], chunkSpec{1, 5, "error codes"}, chunkSpec{7, 9, "login error"}))
	return h, r, emb
}

func modesOf(h tools.ContextHit) string { return strings.Join(h.Modes, "+") }

func TestReadContextModes(t *testing.T) {
	_, r, _ := semanticFixture(t, "")
	if st := r.m.Status(); st.Model != testModel || st.VectorDocs != 3 {
		t.Fatalf("status %+v", st)
	}

	// Semantic: "production" is in no document, but its topic is deploy's.
	hits := r.search(map[string]any{"query": "production release", "mode": "semantic"})
	if len(hits) == 0 || hits[0].Path != "docs/deploy.md" || modesOf(hits[0]) != "semantic" || hits[0].Fallback != "" {
		t.Fatalf("semantic: %+v", hits)
	}
	if s := hits[0].Section; s == nil || s.LineRange != (tools.LineRange{Start: 1, End: 4}) || s.Heading != "Deploying" {
		t.Fatalf("semantic section %+v", hits[0].Section)
	}
	if got := r.search(map[string]any{"query": "production release", "mode": "keyword"}); len(got) != 0 {
		t.Fatalf("keyword found %v for words in no document", paths(got))
	}

	// The best chunk names the section: the login flow, lines 5-9.
	hits = r.search(map[string]any{"query": "session login", "mode": "semantic"})
	if len(hits) == 0 || hits[0].Path != "docs/auth.md" {
		t.Fatalf("semantic login: %v", paths(hits))
	}
	if s := hits[0].Section; s == nil || s.LineRange != (tools.LineRange{Start: 5, End: 9}) || s.Heading != "Login Flow" {
		t.Fatalf("section %+v", hits[0].Section)
	}
	hits = r.search(map[string]any{"query": "how do we renew", "mode": "semantic"})
	if s := hits[0].Section; hits[0].Path != "docs/auth.md" || s == nil || s.LineRange.Start != 10 || s.Heading != "Refresh" {
		t.Fatalf("refresh: %+v", hits[0])
	}

	// Hybrid (the default) and rrf fuse both: auth.md is found by both
	// rankings for "login session", src/auth.go (no vectors) by keyword.
	for _, mode := range []string{"", "hybrid", "rrf"} {
		args := map[string]any{"query": "login session token"}
		if mode != "" {
			args["mode"] = mode
		}
		hits := r.search(args)
		if len(hits) == 0 || hits[0].Path != "docs/auth.md" || modesOf(hits[0]) != "keyword+semantic" {
			t.Fatalf("%q: %+v", mode, hits)
		}
		var goHit *tools.ContextHit
		for i := range hits {
			if hits[i].Path == "src/auth.go" {
				goHit = &hits[i]
			}
			if hits[i].Fallback != "" {
				t.Fatalf("%q: fallback %q", mode, hits[i].Fallback)
			}
		}
		if goHit == nil || modesOf(*goHit) != "keyword" {
			t.Fatalf("%q: src/auth.go missing or mislabelled: %+v", mode, hits)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Fatalf("%q: scores out of order: %+v", mode, hits)
			}
		}
	}

	// Keyword names the section with the most query words.
	hits = r.search(map[string]any{"query": "oauth secret", "mode": "keyword"})
	if len(hits) == 0 || hits[0].Section == nil || hits[0].Section.Heading != "OAuth Configuration" || modesOf(hits[0]) != "keyword" {
		t.Fatalf("keyword section: %+v", hits)
	}
}

func TestSemanticFiltersApplyBeforeRanking(t *testing.T) {
	_, r, _ := semanticFixture(t, "")
	// auth.md is the closest to "login", but only deploy.md is tagged ops:
	// with limit 1 the filter must still leave a hit.
	for _, mode := range []string{"semantic", "hybrid", "rrf"} {
		hits := r.search(map[string]any{"query": "login session", "mode": mode, "limit": 1, "filters": map[string]any{"tags": []string{"ops"}}})
		if len(hits) != 1 || hits[0].Path != "docs/deploy.md" {
			t.Fatalf("%s: %v", mode, paths(hits))
		}
	}
	hits := r.search(map[string]any{"query": "login session", "mode": "semantic", "filters": map[string]any{"assignee": "BOB"}})
	if len(hits) != 1 || hits[0].Path != "docs/api.md" || hits[0].Section == nil || hits[0].Section.LineRange.Start != 7 {
		t.Fatalf("assignee: %+v", hits)
	}
}

func TestSemanticFallsBackToKeyword(t *testing.T) {
	t.Run("embedder unavailable", func(t *testing.T) {
		_, r, emb := semanticFixture(t, "")
		emb.fail.Store(true)
		for _, mode := range []string{"semantic", "hybrid", "rrf"} {
			hits := r.search(map[string]any{"query": "login flow", "mode": mode})
			if len(hits) == 0 || hits[0].Path != "docs/auth.md" || modesOf(hits[0]) != "keyword" || !strings.Contains(hits[0].Fallback, "unavailable") {
				t.Fatalf("%s: %+v", mode, hits)
			}
		}
		emb.fail.Store(false)
		if hits := r.search(map[string]any{"query": "login flow", "mode": "semantic"}); hits[0].Fallback != "" {
			t.Fatalf("recovered embedder still falls back: %+v", hits[0])
		}
	})
	t.Run("no vectors yet", func(t *testing.T) {
		h := newHarness(t)
		h.emb = &topics{model: testModel}
		r := h.start("")
		r.wait(h.putAll(fixtureDocs()))
		hits := r.search(map[string]any{"query": "login flow"})
		if len(hits) == 0 || modesOf(hits[0]) != "keyword" || !strings.Contains(hits[0].Fallback, "no vectors") {
			t.Fatalf("%+v", hits)
		}
	})
	t.Run("no embedder", func(t *testing.T) {
		h := newHarness(t)
		r := h.start("")
		rev := h.putAll(fixtureDocs())
		h.putVectors(testModel, fixtureDocs()[0], chunkSpec{1, 4, "sign"})
		r.wait(rev)
		hits := r.search(map[string]any{"query": "login flow", "mode": "semantic"})
		if len(hits) == 0 || modesOf(hits[0]) != "keyword" || !strings.Contains(hits[0].Fallback, "no embedding model") {
			t.Fatalf("%+v", hits)
		}
	})
}

func TestVectorsOfAnotherModelAreIgnored(t *testing.T) {
	h, r, _ := semanticFixture(t, "")
	docs := fixtureDocs()
	// Another model says the Go file is all about releases; and a record
	// of another size under a third model.
	h.putVectors("other:model", docs[3], chunkSpec{1, 4, "production release ship"})
	rev := h.putVectors(testModel, docs[1], chunkSpec{1, 4, "ship production"}, chunkSpec{5, 7, "rollout"})
	r.waitVectors(rev)
	hits := r.search(map[string]any{"query": "production release", "mode": "semantic"})
	if slices.Contains(paths(hits), "src/auth.go") {
		t.Fatalf("vectors of another model used: %v", paths(hits))
	}
	if st := r.m.Status(); st.VectorDocs != 3 {
		t.Fatalf("status %+v", st)
	}
}

func TestDeletedDocsVectorsAreGone(t *testing.T) {
	h, r, _ := semanticFixture(t, "")
	docs := fixtureDocs()
	rev := h.put(tombstone("app", "docs/deploy.md"))
	if err := h.vkv.Delete(context.Background(), events.VectorKey(testModel, "app", "docs/deploy.md")); err != nil {
		t.Fatal(err)
	}
	last, err := h.vkv.Get(context.Background(), events.VectorKey(testModel, "app", "docs/api.md"))
	if err != nil {
		t.Fatal(err)
	}
	r.wait(rev)
	// The delete marker follows api.md's record in the stream.
	r.waitVectors(last.Revision() + 1)
	hits := r.search(map[string]any{"query": "production release", "mode": "semantic"})
	if slices.Contains(paths(hits), "docs/deploy.md") {
		t.Fatalf("deleted doc found: %v", paths(hits))
	}
	if st := r.m.Status(); st.VectorDocs != 2 {
		t.Fatalf("status %+v", st)
	}

	// A doc whose content changed keeps no line ranges of the old content:
	// it leaves semantic results until its new vectors arrive.
	changed := mdRecord("app", "docs/auth.md", "# Authentication\n\nUsers sign in with passkeys now.\n", nil)
	r.wait(h.put(changed))
	for _, hit := range r.search(map[string]any{"query": "session login", "mode": "semantic"}) {
		if hit.Path == "docs/auth.md" {
			t.Fatalf("stale vectors used: %+v", hit)
		}
	}
	// Back to the embedded content: its vectors apply again.
	r.wait(h.put(docs[0]))
	hits = r.search(map[string]any{"query": "session login", "mode": "semantic"})
	if hits[0].Path != "docs/auth.md" || hits[0].Section.LineRange != (tools.LineRange{Start: 5, End: 9}) {
		t.Fatalf("reverted: %+v", hits[0])
	}
	r.wait(h.put(changed))
	r.waitVectors(h.putVectors(testModel, changed, chunkSpec{1, 3, "sign login"}))
	hits = r.search(map[string]any{"query": "session login", "mode": "semantic"})
	if hits[0].Path != "docs/auth.md" || hits[0].Section.LineRange != (tools.LineRange{Start: 1, End: 3}) {
		t.Fatalf("new vectors: %+v", hits[0])
	}
}

func TestVectorsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	h, r, _ := semanticFixture(t, dir)
	vrev := r.m.VectorRevision()
	r.stop()
	// The store keeps no copy of the vectors: cue_vectors is replayed,
	// once VectorsAfter lets it (a daemon first finishes its start).
	after := make(chan struct{})
	h.vectorsAfter = after
	r = h.open(dir)
	if st := r.m.Status(); st.VectorDocs != 0 || st.VectorRevision != 0 {
		t.Fatalf("opened, not yet following cue_vectors: %+v, want no vectors", st)
	}
	r.run()
	select {
	case <-r.m.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready while the vectors are held back")
	}
	if hits := r.search(map[string]any{"query": "rollback", "mode": "keyword"}); len(hits) == 0 || hits[0].Path != "docs/deploy.md" {
		t.Fatal("no keyword answer while the vectors are held back")
	}
	if st := r.m.Status(); st.VectorDocs != 0 {
		t.Fatalf("%d documents with vectors before VectorsAfter was closed", st.VectorDocs)
	}
	close(after)
	r.waitVectors(vrev)
	if st := r.m.Status(); st.VectorDocs != 3 || st.VectorBytes <= 0 {
		t.Fatalf("after the replay: %+v, want 3 docs at revision %d", st, vrev)
	}
	hits := r.search(map[string]any{"query": "production", "mode": "semantic"})
	if len(hits) == 0 || hits[0].Path != "docs/deploy.md" {
		t.Fatalf("after reopen: %v", paths(hits))
	}
	// The watch goes on: a new record is applied.
	r.waitVectors(h.putVectors(testModel, fixtureDocs()[3], chunkSpec{1, 4, "production failure"}))
	hits = r.search(map[string]any{"query": "production failure", "mode": "semantic"})
	if len(hits) == 0 || hits[0].Path != "src/auth.go" || r.m.Status().VectorDocs != 4 {
		t.Fatalf("after resume: %v", paths(hits))
	}
}

// A store an earlier release kept vectors in loses them at open and keeps
// its documents: they would only take disk.
func TestOpenDropsVectorsAnEarlierReleaseStored(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	doc := &Doc{Key: "app.docs/a.md", Rev: 1, Record: mdRecord("app", "docs/a.md", "# A\n", nil)}
	if err := s.Apply([]Change{{Key: doc.Key, Rev: 1, Doc: doc}}); err != nil {
		t.Fatal(err)
	}
	err = s.db.Update(func(txn *badger.Txn) error {
		return errors.Join(txn.Set([]byte("v/test/app.docs/a.md"), []byte("old vectors")), txn.Set([]byte("m/vrev/test"), make([]byte, 8)))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenStore(dir, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	left := 0
	err = s.db.View(func(txn *badger.Txn) error {
		for _, prefix := range [][]byte{vecPrefix, vecRevPrefix} {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
			for it.Rewind(); it.Valid(); it.Next() {
				left++
			}
			it.Close()
		}
		return nil
	})
	if err != nil || left != 0 {
		t.Fatalf("%d stored vector keys left after open (%v)", left, err)
	}
	if rev, err := s.LastRevision(); err != nil || rev != 1 {
		t.Fatalf("documents' revision after open: %d, %v; want 1", rev, err)
	}
}

func codeRecord(repo, path, content string) events.DocRecord {
	rec := docparse.Build(repo, path, content)
	rec.SHA256, rec.Size, rec.SourceSeq, rec.Content = events.SHA256Hex([]byte(content)), int64(len(content)), 1, content
	rec.ModTime, rec.IndexedAt = testTime, testTime
	return rec
}

func TestStructuralQueriesUseTheGraph(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	recs := []events.DocRecord{
		codeRecord("app", "internal/auth/auth.go", "// Package auth checks sessions.\npackage auth\n\nimport \"crypto/subtle\"\n\nfunc Check() bool { return subtle.ConstantTimeByteEq(1, 1) == 1 }\n"),
		codeRecord("app", "internal/auth/doc_test.go", "package auth\n"),
		codeRecord("app", "cmd/app/main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/app/internal/auth\"\n)\n\nfunc main() { fmt.Println(auth.Check()) }\n"),
		codeRecord("app", "cmd/tool/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"auth\") }\n"),
		codeRecord("app", "docs/guide.md", "# Guide\n\n## Auth\n\nSee [the auth package](../internal/auth/auth.go).\n"),
	}
	r.wait(h.putAll(recs))

	hits := r.search(map[string]any{"query": "who imports internal/auth?"})
	if got := paths(hits); !slices.Equal(got, []string{"cmd/app/main.go", "docs/guide.md"}) {
		t.Fatalf("who imports: %v", got)
	}
	if modesOf(hits[0]) != "graph" || hits[0].Relation != "imports example.com/app/internal/auth" || hits[0].Section.LineRange.Start != 6 {
		t.Fatalf("graph hit %+v", hits[0])
	}
	if hits[1].Section == nil || hits[1].Section.Heading != "Auth" {
		t.Fatalf("link hit section %+v", hits[1].Section)
	}
	// A file name works as well as a path.
	if got := paths(r.search(map[string]any{"query": "What calls auth.go"})); !slices.Equal(got, []string{"docs/guide.md"}) {
		t.Fatalf("what calls auth.go: %v", got)
	}
	hits = r.search(map[string]any{"query": "dependencies of cmd/app/main.go"})
	if got := paths(hits); !slices.Equal(got, []string{"internal/auth/auth.go"}) || modesOf(hits[0]) != "graph" {
		t.Fatalf("dependencies: %+v", hits)
	}
	// Nothing in the graph: the normal ranking answers.
	hits = r.search(map[string]any{"query": "who imports Check", "mode": "keyword"})
	if len(hits) == 0 || modesOf(hits[0]) != "keyword" {
		t.Fatalf("fallback from the graph: %+v", hits)
	}
}
