package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// memNow is the clock of the memory tests.
var memNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// memRec is a valid record as an extractor would write it.
func memRec(repo string, kind memory.Kind, content, rationale, session, agent string, files []string, conf float64, extractions int, updated time.Time) events.MemoryRecord {
	return events.MemoryRecord{
		Memory: memory.Memory{
			Content: content, Kind: kind, Rationale: rationale, FilesTouched: files, Confidence: conf,
			Repo: repo, Session: session, Source: memory.Span{Start: 120, End: 480},
			Provider: "ollama", Model: "qwen2.5:7b", CreatedAt: updated.Add(-time.Hour), UpdatedAt: updated,
		},
		Hash: memory.Hash(content), Agent: agent, Batch: "sess@0", Extractions: extractions,
	}
}

func fixtureMemories() []events.MemoryRecord {
	return []events.MemoryRecord{
		memRec("app", memory.KindDecision, "Use JWT instead of server sessions for auth", "Stateless tokens let any edge verify a login",
			"sess-1111aaaa", "agent-abc", []string{"src/auth/token.go", "src/auth/handler.go"}, 0.9, 2, memNow.Add(-2*time.Hour)),
		memRec("app", memory.KindDecision, "Use a singleton for the database connection pool", "One pool across modules",
			"sess-2222bbbb", "", []string{"/home/dev/app/src/db/conn.go"}, 0.8, 1, memNow.Add(-26*time.Hour)),
		memRec("app", memory.KindFact, "The deploy pipeline rolls back on a failed health check", "",
			"sess-2222bbbb", "", nil, 0.7, 1, memNow.Add(-10*24*time.Hour)),
		memRec("app", memory.KindOpenQuestion, "Should refresh tokens rotate on every use?", "",
			"sess-1111aaaa", "agent-abc", []string{"src/auth/refresh.go"}, 0.5, 1, memNow.Add(-40*24*time.Hour)),
		memRec("web", memory.KindPreference, "Prefer CSS modules over global stylesheets", "Scoped styles avoid collisions",
			"sess-3333cccc", "", []string{"web/src/app.css"}, 0.6, 3, memNow.Add(-3*time.Hour)),
	}
}

// putMemory writes rec under its key, encoded as events.Encode encodes
// every record, and returns the revision.
func (h *harness) putMemory(rec events.MemoryRecord) uint64 {
	h.t.Helper()
	b, err := events.Encode(rec)
	if err != nil {
		h.t.Fatal(err)
	}
	rev, err := h.mkv.Put(context.Background(), events.MemoryKey(rec.Repo, rec.Hash), b)
	if err != nil {
		h.t.Fatal(err)
	}
	return rev
}

func (h *harness) putMemories(recs []events.MemoryRecord) uint64 {
	var rev uint64
	for _, r := range recs {
		rev = h.putMemory(r)
	}
	return rev
}

func (r *running) waitMemories(rev uint64) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.m.WaitMemoryRevision(ctx, rev); err != nil {
		r.t.Fatalf("waiting for memory revision %d (at %d): %v", rev, r.m.MemoryRevision(), err)
	}
}

// memEdge is an edge over r's materialiser with the memory tests' clock.
func (r *running) memEdge() *Edge {
	return New(r.m, testLogger(r.t), WithClock(clock.NewDeterministic(memNow)), WithDefaultRepo("app"))
}

// searchMem calls search_memories with detail unless args say otherwise:
// the tests read every field.
func searchMem(t testing.TB, e *Edge, args map[string]any) []tools.MemoryHit {
	t.Helper()
	if _, set := args["detail"]; !set {
		args["detail"] = true
	}
	b, _ := json.Marshal(args)
	out, err := e.Call(context.Background(), tools.SearchMemories, b)
	if err != nil {
		t.Fatalf("search_memories %v: %v", args, err)
	}
	var hits []tools.MemoryHit
	if err := json.Unmarshal(out, &hits); err != nil {
		t.Fatal(err)
	}
	return hits
}

func contents(hits []tools.MemoryHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Content
	}
	return out
}

func TestSearchMemoriesServesTheBucket(t *testing.T) {
	h := newHarness(t)
	mems := fixtureMemories()
	h.putMemories(mems)
	r := h.start("")
	select {
	case <-r.m.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready after the replay")
	}
	// Ready waits for the memories' replay, so they are all there.
	if st := r.m.Status(); st.Memories != len(mems) {
		t.Fatalf("ready with %d memories, want %d", st.Memories, len(mems))
	}
	e := r.memEdge()

	hits := searchMem(t, e, map[string]any{"query": "jwt auth", "mode": "keyword"})
	if len(hits) == 0 {
		t.Fatal("jwt auth: no hits")
	}
	top := hits[0]
	if top.Score <= 0 {
		t.Fatalf("score %v", top.Score)
	}
	top.Score = 0
	want := tools.MemoryHit{
		Content: "Use JWT instead of server sessions for auth", Kind: "decision",
		Rationale: "Stateless tokens let any edge verify a login", FilesTouched: []string{"src/auth/token.go", "src/auth/handler.go"},
		Confidence: 0.9, Repo: "app", Session: "sess-1111aaaa", Agent: "agent-abc", Source: tools.SourceSpan{Start: 120, End: 480},
		Provider: "ollama", Model: "qwen2.5:7b", Extractions: 2, CreatedAt: memNow.Add(-3 * time.Hour), UpdatedAt: memNow.Add(-2 * time.Hour),
		Hash: memory.Hash("Use JWT instead of server sessions for auth"), Modes: []string{"keyword"},
	}
	if !reflect.DeepEqual(top, want) {
		t.Fatalf("hit:\n got %+v\nwant %+v", top, want)
	}

	// Without an embedder every mode answers by keyword and says so.
	hybrid := searchMem(t, e, map[string]any{"query": "jwt auth"})
	if len(hybrid) == 0 || hybrid[0].Content != want.Content || hybrid[0].Fallback == "" {
		t.Fatalf("hybrid without vectors: %+v", hybrid)
	}

	// The rationale and the files are searchable too.
	if got := contents(searchMem(t, e, map[string]any{"query": "stateless", "mode": "keyword"})); !slices.Equal(got, []string{want.Content}) {
		t.Fatalf("stateless: %q", got)
	}
	if got := contents(searchMem(t, e, map[string]any{"query": "conn.go", "mode": "keyword"})); len(got) == 0 || got[0] != mems[1].Content {
		t.Fatalf("conn.go: %q", got)
	}
	if got := searchMem(t, e, map[string]any{"query": "zebra"}); got == nil || len(got) != 0 {
		t.Fatalf("no match must be an empty array, got %#v", got)
	}

	for _, c := range []struct {
		name    string
		query   string
		filters map[string]any
		want    []string
	}{
		{"repo", "use prefer", map[string]any{"repo": "web"}, []string{mems[4].Content}},
		{"kind", "auth tokens", map[string]any{"kind": "open_question"}, []string{mems[3].Content}},
		{"session", "use", map[string]any{"session": "sess-2222bbbb", "kind": "decision"}, []string{mems[1].Content}},
		{"files suffix", "use", map[string]any{"files": []string{"auth/token.go"}}, []string{mems[0].Content}},
		{"files any", "use", map[string]any{"files": []string{"nothing.go", "db/conn.go"}}, []string{mems[1].Content}},
		{"files absolute", "use", map[string]any{"files": []string{"/work/app/src/auth/handler.go"}}, []string{mems[0].Content}},
		{"files boundary", "use", map[string]any{"files": []string{"n.go"}}, []string{}},
		{"since age", "the", map[string]any{"since": "2d", "repo": "app"}, []string{}},
		{"since age hits", "use", map[string]any{"since": "2d", "repo": "app"}, []string{mems[0].Content, mems[1].Content}},
		{"since date", "rolls back health check", map[string]any{"since": "2026-11-10"}, []string{mems[2].Content}},
		{"since later date", "rolls back health check", map[string]any{"since": "2026-11-11"}, []string{}},
		{"no such repo", "use", map[string]any{"repo": "nope"}, []string{}},
	} {
		got := contents(searchMem(t, e, map[string]any{"query": c.query, "mode": "keyword", "filters": c.filters}))
		slices.Sort(got)
		w := slices.Clone(c.want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: got %q, want %q", c.name, got, w)
		}
	}
	if got := searchMem(t, e, map[string]any{"query": "use", "limit": 1}); len(got) != 1 {
		t.Errorf("limit 1: %d hits", len(got))
	}
}

func TestSearchMemoriesFollowsUpdatesAndDeletes(t *testing.T) {
	h := newHarness(t)
	mems := fixtureMemories()
	r := h.start("")
	r.waitMemories(h.putMemories(mems))
	e := r.memEdge()

	// An extractor raises a memory's confidence and rewrites its rationale.
	up := mems[0]
	up.Rationale, up.Confidence, up.Extractions = "Verification needs no shared store", 0.95, 3
	r.waitMemories(h.putMemory(up))
	hits := searchMem(t, e, map[string]any{"query": "jwt", "mode": "keyword"})
	if len(hits) != 1 || hits[0].Rationale != up.Rationale || hits[0].Confidence != 0.95 || hits[0].Extractions != 3 {
		t.Fatalf("after update: %+v", hits)
	}
	if got := searchMem(t, e, map[string]any{"query": "stateless", "mode": "keyword"}); len(got) != 0 {
		t.Fatalf("the old rationale still matches: %q", contents(got))
	}
	if st := r.m.Status(); st.Memories != len(mems) {
		t.Fatalf("an update changed the count to %d", st.Memories)
	}

	// Delete and purge remove; a later put is the barrier to wait on.
	ctx := context.Background()
	if err := h.mkv.Delete(ctx, events.MemoryKey("app", mems[1].Hash)); err != nil {
		t.Fatal(err)
	}
	if err := h.mkv.Purge(ctx, events.MemoryKey("web", mems[4].Hash)); err != nil {
		t.Fatal(err)
	}
	extra := memRec("app", memory.KindFact, "Barrier memory", "", "s", "", nil, 0.5, 1, memNow)
	r.waitMemories(h.putMemory(extra))
	for _, q := range []string{"singleton", "css modules"} {
		if got := searchMem(t, e, map[string]any{"query": q, "mode": "keyword"}); len(got) != 0 {
			t.Errorf("%s: deleted memory still found: %q", q, contents(got))
		}
	}
	if got := searchMem(t, e, map[string]any{"query": "x", "filters": map[string]any{"files": []string{"db/conn.go"}}}); len(got) != 0 {
		t.Errorf("deleted memory still in the file index: %q", contents(got))
	}

	// A value that does not decode drops the memory, as a fresh replay
	// would not see the older value either.
	rev, err := h.mkv.Put(ctx, events.MemoryKey("app", mems[2].Hash), []byte(`{"v":"1.0","kind":"memory.record","data":{"content":""}}`))
	if err != nil {
		t.Fatal(err)
	}
	r.waitMemories(rev)
	if got := searchMem(t, e, map[string]any{"query": "rolls back", "mode": "keyword"}); len(got) != 0 {
		t.Errorf("undecodable value kept the memory: %q", contents(got))
	}
	st := r.m.Status()
	if st.Memories != 3 || st.MemoriesUndecodable != 1 {
		t.Errorf("status %+v: want 3 memories, 1 undecodable", st)
	}
}

func TestMemoriesRebuildIdenticallyOnAWipedDisk(t *testing.T) {
	h := newHarness(t)
	mems := fixtureMemories()
	h.putMemories(mems)
	up := mems[1]
	up.Confidence = 0.85
	h.putMemory(up)
	if err := h.mkv.Delete(context.Background(), events.MemoryKey("app", mems[2].Hash)); err != nil {
		t.Fatal(err)
	}
	rev := h.putMemory(memRec("app", memory.KindExperience, "Went with table-driven tests for the parser", "", "s9", "", []string{"pkg/parse/parse_test.go"}, 0.5, 1, memNow.Add(-time.Hour)))

	answers := func(dir string) []byte {
		r := h.start(dir)
		r.waitMemories(rev)
		e := r.memEdge()
		var all []byte
		for _, q := range []map[string]any{
			{"query": "use", "limit": 50},
			{"query": "auth tokens", "mode": "keyword"},
			{"query": "tests", "filters": map[string]any{"kind": "experience"}},
			{"query": "pool", "filters": map[string]any{"files": []string{"conn.go"}}},
		} {
			b, _ := json.Marshal(q)
			out, err := e.Call(context.Background(), tools.SearchMemories, b)
			if err != nil {
				t.Fatal(err)
			}
			all = append(append(all, out...), '\n')
		}
		recent, _ := json.Marshal(e.RecentDecisions("app", nil, memNow, 10))
		all = append(all, recent...)
		r.stop()
		return all
	}
	dir := t.TempDir()
	first := answers(dir)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	again := answers(dir)
	fresh := answers(t.TempDir())
	if !bytes.Equal(first, again) || !bytes.Equal(first, fresh) {
		t.Fatalf("answers differ after a wiped disk:\nfirst %s\nagain %s\nfresh %s", first, again, fresh)
	}
}

func TestSearchMemoriesSemantic(t *testing.T) {
	h := newHarness(t)
	h.emb = &topics{model: "topics"}
	mems := []events.MemoryRecord{
		memRec("app", memory.KindDecision, "Keep the oauth provider secret in the vault", "", "s1", "", nil, 0.8, 1, memNow),
		memRec("app", memory.KindDecision, "Ship to production with a staged rollout", "", "s1", "", nil, 0.8, 1, memNow),
		memRec("app", memory.KindFact, "Login needs credentials and a session", "", "s2", "", nil, 0.8, 1, memNow),
	}
	r := h.start("")
	r.waitMemories(h.putMemories(mems))
	bustest.Eventually(t, 10*time.Second, "memory vectors", func() bool { return r.m.Status().MemoryVectors == len(mems) })
	e := r.memEdge()

	// No word of the query is in the memory; its meaning is.
	hits := searchMem(t, e, map[string]any{"query": "release", "mode": "semantic"})
	if len(hits) == 0 || hits[0].Content != mems[1].Content || !slices.Equal(hits[0].Modes, []string{"semantic"}) || hits[0].Fallback != "" {
		t.Fatalf("semantic release: %+v", hits)
	}
	if kw := searchMem(t, e, map[string]any{"query": "release", "mode": "keyword"}); len(kw) != 0 {
		t.Fatalf("keyword release should find nothing: %q", contents(kw))
	}
	hy := searchMem(t, e, map[string]any{"query": "oauth provider"})
	if len(hy) == 0 || hy[0].Content != mems[0].Content || !slices.Equal(hy[0].Modes, []string{"keyword", "semantic"}) {
		t.Fatalf("hybrid oauth provider: %+v", hy)
	}
	// A hybrid answer no word of the query matched says so; one a word
	// matched does not.
	for q, want := range map[string]bool{"release": true, "oauth provider": false} {
		nctx, notices := tools.WithNotices(context.Background())
		if _, err := e.Call(nctx, tools.SearchMemories, json.RawMessage(`{"query":"`+q+`","mode":"hybrid"}`)); err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(notices.Texts(), NoWordsMatched); got != want {
			t.Errorf("hybrid %q: nothing-found notice %v, want %v (%q)", q, got, want, notices.Texts())
		}
	}
	// Filters apply before ranking in semantic mode too.
	f := searchMem(t, e, map[string]any{"query": "release", "mode": "semantic", "filters": map[string]any{"kind": "fact"}})
	if len(f) != 1 || f[0].Content != mems[2].Content {
		t.Fatalf("filtered semantic: %q", contents(f))
	}

	// A rewritten rationale is embedded again.
	up := mems[2]
	up.Rationale = "rotate refresh renew"
	r.waitMemories(h.putMemory(up))
	bustest.Eventually(t, 10*time.Second, "re-embedded memory", func() bool {
		hits := searchMem(t, e, map[string]any{"query": "renew", "mode": "semantic", "limit": 1})
		return len(hits) == 1 && hits[0].Content == mems[2].Content
	})

	// An unavailable model falls back to keyword search and says so.
	h.emb.(*topics).fail.Store(true)
	fb := searchMem(t, e, map[string]any{"query": "oauth", "mode": "semantic"})
	if len(fb) != 1 || fb[0].Fallback == "" || !slices.Equal(fb[0].Modes, []string{"keyword"}) {
		t.Fatalf("fallback: %+v", fb)
	}
}

func TestSearchMemoriesInvalidParams(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	e := r.memEdge()
	for _, args := range []string{
		`{}`,
		`{"query":""}`,
		`{"query":"x","limit":0}`,
		`{"query":"x","limit":51}`,
		`{"query":"x","mode":"rrf"}`,
		`{"query":"x","filters":{"kind":"idea"}}`,
		`{"query":"x","filters":{"since":"last week"}}`,
		`{"query":"x","filters":{"tags":[""]}}`,
		`{"query":"x","filters":{"labels":["a"]}}`,
		`{"query":"x","semantic":true}`,
	} {
		_, err := e.Call(context.Background(), tools.SearchMemories, json.RawMessage(args))
		var te *tools.Error
		if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
			t.Errorf("%s: got %v, want invalid params", args, err)
		}
	}
}

func TestRecentDecisionsRanking(t *testing.T) {
	h := newHarness(t)
	at := func(d time.Duration) time.Time { return memNow.Add(-d) }
	dec := func(content string, conf float64, extr int, age time.Duration, files ...string) events.MemoryRecord {
		return memRec("app", memory.KindDecision, content, "", "sess-"+content, "", files, conf, extr, at(age))
	}
	recs := []events.MemoryRecord{
		dec("d01 today, low confidence", 0.5, 1, 1*time.Hour),
		dec("d02 today, high confidence", 0.9, 1, 5*time.Hour),
		dec("d03 today, high confidence, said more", 0.9, 4, 6*time.Hour),
		dec("d04 yesterday", 0.99, 9, 30*time.Hour),
		dec("d05 touches the focus, a week old", 0.4, 1, 7*24*time.Hour, "/abs/ws/src/auth/token.go"),
		dec("d06 two days", 0.7, 1, 50*time.Hour),
		dec("d07 three days", 0.7, 1, 74*time.Hour),
		dec("d08 four days", 0.7, 1, 98*time.Hour),
		dec("d09 five days", 0.7, 1, 122*time.Hour),
		dec("d10 six days", 0.7, 1, 146*time.Hour),
		dec("d11 eight days", 0.7, 1, 194*time.Hour),
		dec("d12 nine days, cut by the limit", 0.7, 1, 218*time.Hour),
		dec("d13 too old", 0.99, 9, 31*24*time.Hour),
		memRec("app", memory.KindExperience, "x01 experience today, same confidence as d01, later", "", "s", "agent-x", nil, 0.5, 1, at(30*time.Minute)),
		memRec("app", memory.KindFact, "f01 a fact is no decision", "", "s", "", nil, 1, 9, at(time.Minute)),
		memRec("web", memory.KindDecision, "w01 another repo", "", "s", "", nil, 1, 9, at(time.Minute)),
	}
	// Written first: focus, then whole days younger first, then
	// confidence, then extractions, then the newer update.
	want := []string{
		"d05 touches the focus, a week old",
		"d03 today, high confidence, said more",
		"d02 today, high confidence",
		"x01 experience today, same confidence as d01, later",
		"d01 today, low confidence",
		"d04 yesterday",
		"d06 two days",
		"d07 three days",
		"d08 four days",
		"d09 five days",
	}
	r := h.start("")
	r.waitMemories(h.putMemories(recs))
	e := r.memEdge()
	got := e.RecentDecisions("", []string{"src/auth/token.go", "docs/api.md"}, memNow, 10)
	names := make([]string, len(got))
	for i, d := range got {
		names[i] = d.Content
	}
	if !slices.Equal(names, want) {
		t.Fatalf("order:\n got %q\nwant %q", names, want)
	}
	if n := len(e.RecentDecisions("app", nil, memNow, 0)); n != 10 {
		t.Fatalf("default limit: %d", n)
	}
	if n := len(e.RecentDecisions("app", nil, memNow, 50)); n != 13 {
		t.Fatalf("all recent: %d, want 13 (12 decisions and the experience)", n)
	}
}

// TestSearchMemoriesBuiltinModel runs semantic search of memories with the
// model edges ship with: a query that shares no word with the memory it
// should find.
func TestSearchMemoriesBuiltinModel(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the built-in model")
	}
	h := newHarness(t)
	h.emb = builtin.New()
	mems := []events.MemoryRecord{
		memRec("app", memory.KindDecision, "Cache database query results in Redis for five minutes", "", "s1", "", nil, 0.8, 1, memNow),
		memRec("app", memory.KindDecision, "Render the settings page with server-side templates", "", "s1", "", nil, 0.8, 1, memNow),
		memRec("app", memory.KindFact, "The CI pipeline runs the linters before the unit tests", "", "s2", "", nil, 0.8, 1, memNow),
	}
	r := h.start("")
	r.waitMemories(h.putMemories(mems))
	bustest.Eventually(t, 60*time.Second, "memory vectors", func() bool { return r.m.Status().MemoryVectors == len(mems) })
	hits := searchMem(t, r.memEdge(), map[string]any{"query": "storing SQL lookups in memory", "mode": "semantic", "limit": 1})
	if len(hits) != 1 || hits[0].Content != mems[0].Content {
		t.Fatalf("semantic: %+v", hits)
	}
}

// TestPendingMemoriesAreTakenOnceInKeyOrder: memories queued for
// embedding come out in batches in key order, each exactly once, with
// those queued or changed while a pass runs taken in the next pass and
// those removed meanwhile not at all.
func TestPendingMemoriesAreTakenOnceInKeyOrder(t *testing.T) {
	s := newMemState(4)
	queue := func(key, text string) {
		s.mu.Lock()
		s.putLocked(key, &memEntry{key: key, text: text, rec: events.MemoryRecord{Memory: memory.Memory{Kind: memory.KindFact, Content: text}}})
		s.mu.Unlock()
	}
	for _, k := range []string{"k05", "k01", "k09", "k03", "k07"} {
		queue(k, "text of "+k)
	}
	keys, texts := s.takePending(2)
	if !slices.Equal(keys, []string{"k01", "k03"}) || texts[0] != "text of k01" {
		t.Fatalf("first batch %v %v, want k01 k03 with their texts", keys, texts)
	}
	queue("k02", "text of k02")   // queued during the pass: the next one
	queue("k07", "k07 rewritten") // changed before its turn: once, new text
	s.mu.Lock()
	s.putLocked("k09", nil) // removed before its turn
	s.mu.Unlock()
	var got, gotTexts []string
	for {
		keys, texts := s.takePending(2)
		if len(keys) == 0 {
			break
		}
		got, gotTexts = append(got, keys...), append(gotTexts, texts...)
	}
	if want := []string{"k05", "k07", "k02"}; !slices.Equal(got, want) {
		t.Fatalf("later batches %v, want %v", got, want)
	}
	if gotTexts[1] != "k07 rewritten" {
		t.Fatalf("k07 embedded as %q, want its new text", gotTexts[1])
	}
}
