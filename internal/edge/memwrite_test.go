package edge

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/memstore"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// writerEdge is an edge over r's materialiser that writes memories into
// the harness's bucket.
func (h *harness) writerEdge(r *running) (*Edge, *memstore.Store) {
	st := memstore.NewStore(h.mkv, clock.NewDeterministic(memNow))
	return New(r.m, testLogger(h.t), WithClock(clock.NewDeterministic(memNow)), WithDefaultRepo("app"), WithMemoryStore(st)), st
}

func callJSON[T any](t *testing.T, ctx context.Context, e *Edge, tool string, args any) (T, error) {
	t.Helper()
	var out T
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := e.Call(ctx, tool, b)
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	return out, err
}

// An agent's saved memory is found by the next search on its edge,
// redacted, as one memory however often it is saved; forgotten on one
// edge it leaves search on another as soon as that one has applied the
// tombstone, and neither an extraction of the same words nor a save
// brings it back.
func TestSaveAndForgetMemory(t *testing.T) {
	h := newHarness(t)
	r1, r2 := h.start(""), h.start("")
	e1, st := h.writerEdge(r1)
	e2, _ := h.writerEdge(r2)
	ctx := context.Background()

	text := "Keep the retry budget at 3 attempts; the deploy token is ghp_Z8m2Qx7Lk4Rt9Vb3Nc6Hy1Wd5Fg0Js8Pa2Ue"
	saved, err := callJSON[tools.SaveMemoryResult](t, ctx, e1, tools.SaveMemory, map[string]any{
		"kind": "decision", "text": text, "rationale": "more attempts doubled the p99", "files": []string{"internal/retry/retry.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if saved.Action != "saved" || saved.Repo != "app" || len(saved.Hash) != 64 {
		t.Fatalf("save_memory: %+v", saved)
	}
	hits := searchMem(t, e1, map[string]any{"query": "retry budget attempts", "mode": "keyword"})
	if len(hits) != 1 || hits[0].Hash != saved.Hash || hits[0].Kind != "decision" || hits[0].Confidence != tools.SavedConfidence {
		t.Fatalf("the saved memory is not the edge's next answer: %+v", hits)
	}
	if strings.Contains(hits[0].Content, "ghp_Z8m2Qx7Lk4") || !slices.Equal(hits[0].FilesTouched, []string{"internal/retry/retry.go"}) {
		t.Errorf("saved memory as served: %+v", hits[0])
	}
	if h := hits[0]; h.Rationale != "more attempts doubled the p99" {
		t.Errorf("rationale %q", h.Rationale)
	}

	for _, again := range []map[string]any{
		{"kind": "decision", "text": text},               // a retry
		{"kind": "decision", "text": "  " + text + "\n"}, // the same words again
	} {
		res, err := callJSON[tools.SaveMemoryResult](t, ctx, e1, tools.SaveMemory, again)
		if err != nil || res.Hash != saved.Hash || res.Action != "unchanged" {
			t.Errorf("saving %v again: %+v %v, want the same memory unchanged", again, res, err)
		}
	}
	if rec, _, err := st.Get(ctx, "app", saved.Hash); err != nil || rec.Extractions != 3 {
		t.Errorf("after three saves of the same words: %+v %v, want them counted", rec, err)
	}

	var te *tools.Error
	for _, bad := range []map[string]any{
		{"kind": "decision", "text": "   "},
		{"kind": "mood", "text": "x"},
		{"kind": "fact"},
		{"kind": "fact", "text": "x", "request_id": "r-1"},
		{"kind": "fact", "text": "x", "repo": "web"}, // not readable by the caller below
	} {
		_, err := callJSON[tools.SaveMemoryResult](t, access.WithIdentity(ctx, access.Identity{Client: "c", Repos: []string{"app"}}), e1, tools.SaveMemory, bad)
		if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
			t.Errorf("save_memory %v: %v, want -32602", bad, err)
		}
	}

	forgot, err := callJSON[tools.ForgetMemoryResult](t, ctx, e1, tools.ForgetMemory, map[string]any{"hash": saved.Hash})
	if err != nil || forgot.Hash != saved.Hash || forgot.Forgotten == "" {
		t.Fatalf("forget_memory: %+v %v", forgot, err)
	}
	if hits := searchMem(t, e1, map[string]any{"query": "retry budget attempts", "mode": "keyword"}); len(hits) != 0 {
		t.Errorf("the forgetting edge still serves it: %+v", hits)
	}
	rec, _, err := st.Get(ctx, "app", saved.Hash)
	if err != nil {
		t.Fatal(err)
	}
	tomb, err := h.mkv.Get(ctx, events.MemoryKey("app", saved.Hash))
	if err != nil {
		t.Fatal(err)
	}
	r2.waitMemories(tomb.Revision())
	if hits := searchMem(t, e2, map[string]any{"query": "retry budget attempts", "mode": "keyword"}); len(hits) != 0 {
		t.Errorf("the other edge still serves it: %+v", hits)
	}
	if rec.Content != "" || rec.Rationale != "" {
		t.Errorf("the tombstone keeps the words: %+v", rec)
	}

	// The extractor meets the same words in a transcript; an agent saves
	// them again: it stays forgotten.
	redacted, _ := guard.Redact(text) // as the extractor stores what it finds
	ex := memRec("app", memory.KindDecision, redacted, "", "sess-9", "", nil, 0.95, 1, memNow)
	if d, err := st.Put(ctx, ex); err != nil || d.Reason != memstore.ReasonForgotten {
		t.Errorf("extracting forgotten words: %+v %v", d, err)
	}
	if res, err := callJSON[tools.SaveMemoryResult](t, ctx, e2, tools.SaveMemory, map[string]any{"kind": "decision", "text": text}); err != nil || res.Action != "forgotten" {
		t.Errorf("saving forgotten words: %+v %v", res, err)
	}
	if hits := searchMem(t, e2, map[string]any{"query": "retry budget attempts", "mode": "keyword"}); len(hits) != 0 {
		t.Errorf("forgotten words came back: %+v", hits)
	}

	if again, err := callJSON[tools.ForgetMemoryResult](t, ctx, e2, tools.ForgetMemory, map[string]any{"hash": saved.Hash}); err != nil || again.Forgotten != forgot.Forgotten {
		t.Errorf("forgetting twice: %+v %v, want the first time", again, err)
	}
	_, err = callJSON[tools.ForgetMemoryResult](t, ctx, e1, tools.ForgetMemory, map[string]any{"hash": memory.Hash("never said")})
	if !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Errorf("forgetting an unknown memory: %v, want 1001", err)
	}
	_, err = callJSON[tools.ForgetMemoryResult](t, ctx, e1, tools.ForgetMemory, map[string]any{"hash": "abc"})
	if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Errorf("forgetting a malformed hash: %v, want -32602", err)
	}
}

// A decision saved as superseding an earlier one leaves the earlier one
// as history: search_memories, the listing and Recent Decisions serve the
// later alone, include_superseded shows both with their links both ways,
// and forgetting the later one makes the earlier current again.
func TestSaveMemorySupersedes(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	e, _ := h.writerEdge(r)
	ctx := context.Background()
	save := func(args map[string]any) (tools.SaveMemoryResult, error) {
		return callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, args)
	}
	first, err := save(map[string]any{"kind": "decision", "text": "Store user sessions in Redis", "files": []string{"auth/session.go"}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := save(map[string]any{"kind": "decision", "text": "Store user sessions in Postgres, not Redis", "rationale": "one database to back up",
		"files": []string{"auth/session.go"}, "supersedes": []string{first.Hash}})
	if err != nil || second.Action != "saved" {
		t.Fatalf("saving the reversal: %+v %v", second, err)
	}
	hits := searchMem(t, e, map[string]any{"query": "user sessions", "mode": "keyword"})
	if len(hits) != 1 || hits[0].Hash != second.Hash || !slices.Equal(hits[0].Supersedes, []string{first.Hash}) {
		t.Fatalf("search after the reversal: %+v, want the later decision alone, naming the earlier", hits)
	}
	all := searchMem(t, e, map[string]any{"query": "user sessions", "mode": "keyword", "include_superseded": true})
	if len(all) != 2 {
		t.Fatalf("include_superseded: %+v, want both", all)
	}
	for _, hit := range all {
		if hit.Hash == first.Hash && !slices.Equal(hit.SupersededBy, []string{second.Hash}) {
			t.Errorf("the earlier decision does not name the later: %+v", hit)
		}
	}
	if listed, err := e.ListMemories(ctx, nil, 0); err != nil || len(listed) != 1 || listed[0].Hash != second.Hash {
		t.Errorf("ListMemories: %+v %v, want the later decision alone", listed, err)
	}
	if ds := e.RecentDecisions("app", nil, memNow, 10); len(ds) != 1 || ds[0].Hash != second.Hash {
		t.Errorf("RecentDecisions: %+v, want the later decision alone", ds)
	}

	var te *tools.Error
	if _, err := save(map[string]any{"kind": "fact", "text": "x", "supersedes": []string{memory.Hash("never said")}}); !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Errorf("superseding no memory: %v, want 1001", err)
	}
	if _, err := save(map[string]any{"kind": "fact", "text": "y", "supersedes": []string{memory.Hash("y")}}); !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Errorf("superseding itself: %v, want -32602", err)
	}

	if _, err := callJSON[tools.ForgetMemoryResult](t, ctx, e, tools.ForgetMemory, map[string]any{"hash": second.Hash}); err != nil {
		t.Fatal(err)
	}
	if hits := searchMem(t, e, map[string]any{"query": "user sessions", "mode": "keyword"}); len(hits) != 1 || hits[0].Hash != first.Hash || len(hits[0].SupersededBy) != 0 {
		t.Errorf("after forgetting the reversal: %+v, want the earlier decision current", hits)
	}
}

// update_memory corrects a memory by its hash: the corrected words are
// current and keep the old kind, rationale and files unless given; the
// old words stay as history, linked both ways. A hash no live memory has
// is 1001; the same words again are not a correction.
func TestUpdateMemory(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	e, st := h.writerEdge(r)
	ctx := context.Background()
	first, err := callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, map[string]any{
		"kind": "decision", "text": "Cache rendered pages for 10 minutes", "rationale": "the origin is slow", "files": []string{"web/cache.go"}})
	if err != nil {
		t.Fatal(err)
	}
	update := func(args map[string]any) (tools.UpdateMemoryResult, error) {
		return callJSON[tools.UpdateMemoryResult](t, ctx, e, tools.UpdateMemory, args)
	}
	second, err := update(map[string]any{"hash": first.Hash, "text": "Cache rendered pages for 2 minutes"})
	if err != nil || second.Action != "saved" || second.Supersedes != first.Hash || second.Kind != "decision" || second.Hash == first.Hash {
		t.Fatalf("update_memory: %+v %v", second, err)
	}
	rec, _, err := st.Get(ctx, "app", second.Hash)
	if err != nil || rec.Rationale != "the origin is slow" || !slices.Equal(rec.FilesTouched, []string{"web/cache.go"}) || !slices.Equal(rec.Supersedes, []string{first.Hash}) {
		t.Errorf("the corrected memory as stored: %+v %v, want the old rationale and files, superseding the old", rec, err)
	}
	hits := searchMem(t, e, map[string]any{"query": "cache rendered pages", "mode": "keyword"})
	if len(hits) != 1 || hits[0].Hash != second.Hash {
		t.Fatalf("search after the update: %+v, want the corrected memory alone", hits)
	}
	all := searchMem(t, e, map[string]any{"query": "cache rendered pages", "mode": "keyword", "include_superseded": true})
	if len(all) != 2 {
		t.Fatalf("include_superseded: %+v, want both", all)
	}
	for _, hit := range all {
		if hit.Hash == first.Hash && !slices.Equal(hit.SupersededBy, []string{second.Hash}) {
			t.Errorf("the old memory does not name its correction: %+v", hit)
		}
	}

	third, err := update(map[string]any{"hash": second.Hash, "text": "Pages are not cached", "kind": "fact", "rationale": "", "files": []string{}})
	if err != nil || third.Kind != "fact" {
		t.Fatalf("update_memory with a new kind: %+v %v", third, err)
	}
	if rec, _, err := st.Get(ctx, "app", third.Hash); err != nil || rec.Rationale != "" || len(rec.FilesTouched) != 0 {
		t.Errorf("given an empty rationale and no files: %+v %v, want both cleared", rec, err)
	}

	var te *tools.Error
	for _, c := range []struct {
		args map[string]any
		code int
	}{
		{map[string]any{"hash": memory.Hash("never said"), "text": "x"}, tools.CodeFileNotFound},
		{map[string]any{"hash": third.Hash, "text": "Pages are not cached"}, tools.CodeInvalidParams},
		{map[string]any{"hash": third.Hash}, tools.CodeInvalidParams},
		{map[string]any{"hash": "abc", "text": "x"}, tools.CodeInvalidParams},
	} {
		if _, err := update(c.args); !errors.As(err, &te) || te.Code != c.code {
			t.Errorf("update_memory %v: %v, want %d", c.args, err, c.code)
		}
	}
	if _, err := callJSON[tools.ForgetMemoryResult](t, ctx, e, tools.ForgetMemory, map[string]any{"hash": third.Hash}); err != nil {
		t.Fatal(err)
	}
	if _, err := update(map[string]any{"hash": third.Hash, "text": "Cache pages again"}); !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Errorf("updating a forgotten memory: %v, want 1001", err)
	}
}

// Tags are the saver's labels: search_memories filters on any of them,
// the same words saved with other tags gather them, and update_memory
// keeps them unless given others.
func TestMemoryTags(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	e, st := h.writerEdge(r)
	ctx := context.Background()
	saved, err := callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, map[string]any{
		"kind": "fact", "text": "The staging database is rebuilt every night", "tags": []string{"staging", "ops", "staging"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, map[string]any{
		"kind": "fact", "text": "The production database is backed up every night"})
	if err != nil {
		t.Fatal(err)
	}
	tagged := func(tags ...string) []string {
		var hashes []string
		for _, hit := range searchMem(t, e, map[string]any{"query": "database every night", "mode": "keyword", "filters": map[string]any{"tags": tags}}) {
			hashes = append(hashes, hit.Hash)
		}
		return hashes
	}
	if got := tagged("ops", "billing"); !slices.Equal(got, []string{saved.Hash}) {
		t.Errorf("filtered on ops or billing: %v, want the staging fact alone", got)
	}
	if got := tagged("billing"); len(got) != 0 {
		t.Errorf("filtered on billing: %v, want nothing", got)
	}
	if _, err := callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, map[string]any{
		"kind": "fact", "text": "The production database is backed up every night", "tags": []string{"backups"}}); err != nil {
		t.Fatal(err)
	}
	if got := tagged("backups"); !slices.Equal(got, []string{other.Hash}) {
		t.Errorf("after saving the same words with a tag: %v, want that memory tagged", got)
	}
	updated, err := callJSON[tools.UpdateMemoryResult](t, ctx, e, tools.UpdateMemory, map[string]any{
		"hash": saved.Hash, "text": "The staging database is rebuilt every Sunday"})
	if err != nil {
		t.Fatal(err)
	}
	if rec, _, err := st.Get(ctx, "app", updated.Hash); err != nil || !slices.Equal(rec.Tags, []string{"staging", "ops"}) {
		t.Errorf("the corrected memory's tags: %+v %v, want the old ones", rec, err)
	}
	var te *tools.Error
	if _, err := callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, map[string]any{
		"kind": "fact", "text": "x", "tags": []string{strings.Repeat("t", 65)}}); !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
		t.Errorf("a 65-byte tag: %v, want -32602", err)
	}
}

// search_memories answers brief hits unless asked for detail; get_memory
// gives one whole by its hash, to callers that may read its repo.
func TestBriefHitsAndGetMemory(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.waitMemories(h.putMemories(fixtureMemories()))
	e := r.memEdge()
	ctx := context.Background()

	raw, err := e.Call(ctx, tools.SearchMemories, json.RawMessage(`{"query":"JWT sessions auth","mode":"keyword","limit":3}`))
	if err != nil {
		t.Fatal(err)
	}
	var briefs []map[string]any
	if err := json.Unmarshal(raw, &briefs); err != nil || len(briefs) == 0 {
		t.Fatalf("brief hits: %s %v", raw, err)
	}
	for _, field := range []string{"confidence", "session", "source", "provider", "extractions", "created_at"} {
		if _, has := briefs[0][field]; has {
			t.Errorf("a brief hit carries %s: %v", field, briefs[0])
		}
	}
	if briefs[0]["updated"] != memNow.Add(-2*time.Hour).Format(time.DateOnly) || briefs[0]["content"] != "Use JWT instead of server sessions for auth" {
		t.Errorf("brief hit %v", briefs[0])
	}
	detailed := searchMem(t, e, map[string]any{"query": "JWT sessions auth", "mode": "keyword", "limit": 3})
	if len(raw) >= len(mustJSON(t, detailed)) {
		t.Errorf("brief answer %d bytes, detailed %d", len(raw), len(mustJSON(t, detailed)))
	}

	hash := briefs[0]["hash"].(string)
	got, err := callJSON[tools.MemoryHit](t, ctx, e, tools.GetMemory, map[string]any{"hash": hash})
	if err != nil || got.Session != "sess-1111aaaa" || got.Confidence != 0.9 || got.Extractions != 2 || got.Provider != "ollama" {
		t.Errorf("get_memory: %+v %v", got, err)
	}
	var te *tools.Error
	webOnly := access.WithIdentity(ctx, access.Identity{Client: "c", Repos: []string{"web"}})
	if _, err := callJSON[tools.MemoryHit](t, webOnly, e, tools.GetMemory, map[string]any{"hash": hash}); !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Errorf("get_memory of another repo's memory: %v, want 1001", err)
	}
	web := fixtureMemories()[4]
	if got, err := callJSON[tools.MemoryHit](t, webOnly, e, tools.GetMemory, map[string]any{"hash": web.Hash}); err != nil || got.Repo != "web" {
		t.Errorf("get_memory of a memory of the caller's repo, not the edge's default: %+v %v", got, err)
	}
	if _, err := callJSON[tools.MemoryHit](t, ctx, e, tools.GetMemory, map[string]any{"hash": memory.Hash("never")}); !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
		t.Errorf("get_memory of no memory: %v, want 1001", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Two decisions saved under a same tag, naming no file, the later
// reversing the earlier: the edge supersedes the earlier without an
// explicit link, as it does for decisions touching a same file.
func TestSavedReversalUnderASameTagSupersedes(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	// Saved a minute apart: the later is the newer.
	clk := clock.NewDeterministic(memNow.Add(-time.Hour))
	e := New(r.m, testLogger(t), WithClock(clk), WithDefaultRepo("app"), WithMemoryStore(memstore.NewStore(h.mkv, clk)))
	ctx := context.Background()
	first, err := callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, map[string]any{
		"kind": "decision", "text": "Store user sessions in Redis", "tags": []string{"sessions"}})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	other, err := callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, map[string]any{
		"kind": "decision", "text": "Keep user sessions in Redis for a week", "tags": []string{"retention"}})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	second, err := callJSON[tools.SaveMemoryResult](t, ctx, e, tools.SaveMemory, map[string]any{
		"kind": "decision", "text": "Store user sessions in Postgres instead of Redis", "tags": []string{"Sessions", "storage"}})
	if err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 10*time.Second, "the reversal supersedes the decision under its tag", func() bool {
		hits := searchMem(t, e, map[string]any{"query": "user sessions Redis", "mode": "keyword"})
		current := map[string]bool{}
		for _, h := range hits {
			current[h.Hash] = true
		}
		return len(hits) == 2 && current[second.Hash] && current[other.Hash] && !current[first.Hash]
	})
	all := searchMem(t, e, map[string]any{"query": "user sessions Redis", "mode": "keyword", "include_superseded": true})
	for _, hit := range all {
		if hit.Hash == first.Hash && !slices.Equal(hit.SupersededBy, []string{second.Hash}) {
			t.Errorf("the earlier decision does not name the reversal: %+v", hit)
		}
		if hit.Hash == other.Hash && len(hit.SupersededBy) != 0 {
			t.Errorf("a decision under another tag is superseded: %+v", hit)
		}
	}
}
