package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/tiercache"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestReplayKeepsTheCacheUnderItsCapAndFresh replays the benchmark's
// 10,000 mixed calls on an edge whose cap (64 KiB) is far below what the
// answers add up to, and checks every answer against an uncached edge's:
// byte for byte the same, although documents and tasks change under the
// cache all along. The bytes charged stay within the cap after every call
// and at the end; entries were evicted for it, and every level served
// hits.
func TestReplayKeepsTheCacheUnderItsCapAndFresh(t *testing.T) {
	calls := replayCalls
	if testing.Short() || raceEnabled {
		calls = 2000
	}
	const maxBytes = 64 << 10
	env := newReplayEnv(t)
	e, clk := env.replayEdge(maxBytes)
	ref, _ := env.replayEdge(-1)
	st := env.replay(t, e, ref, clk, calls, 1)
	cs, _ := e.CacheStats()
	if st.peakBytes > maxBytes || cs.PeakBytes > maxBytes || cs.Bytes > maxBytes {
		t.Fatalf("cache charged %d bytes at the end, peaked at %d (sampled %d): cap %d", cs.Bytes, cs.PeakBytes, st.peakBytes, maxBytes)
	}
	var sum int64
	var evicted uint64
	for _, l := range cs.Levels {
		sum += l.Bytes
		evicted += l.Evicted
		if l.Hits == 0 {
			t.Errorf("%s served no hits: %+v", l.Level, l)
		}
	}
	if sum != cs.Bytes {
		t.Errorf("levels hold %d bytes, the cache %d", sum, cs.Bytes)
	}
	if evicted == 0 {
		t.Error("nothing evicted under a 64 KiB cap")
	}
	t.Logf("%d reads, %d writes; %d bytes held, peak %d of %d; %d evicted", st.reads, st.writes, cs.Bytes, cs.PeakBytes, maxBytes, evicted)
	for _, l := range cs.Levels {
		t.Logf("%s: hit rate %.1f%% (%d/%d), %d evicted, %d expired, %d invalidated, %d bytes", l.Level, 100*l.HitRate(), l.Hits, l.Hits+l.Misses, l.Evicted, l.Expired, l.Invalidated, l.Bytes)
	}
}

// cachedEdge is an edge on r's materialiser with a cache of its own,
// whose clock the test moves.
func cachedEdge(r *running) (*Edge, *clock.Deterministic) {
	clk := clock.NewDeterministic(testTime)
	return New(r.m, nil, WithCache(tiercache.Config{MaxBytes: 1 << 20, Clock: clk})), clk
}

func readDocOn(t *testing.T, e *Edge, ctx context.Context, args string) tools.ReadDocResult {
	t.Helper()
	out, err := e.Call(ctx, tools.ReadDoc, json.RawMessage(args))
	if err != nil {
		t.Fatalf("read_doc %s: %v", args, err)
	}
	var res tools.ReadDocResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCachedReadDocNeverOutlivesItsVersion rewrites a document 30 times
// and reads it, whole and a section, twice after each version is applied:
// every read returns that version, the second from the cache, and the
// older version's entries are dropped as the change is applied.
func TestCachedReadDocNeverOutlivesItsVersion(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	e, _ := cachedEdge(r)
	ctx := context.Background()
	const versions = 30
	for v := range versions {
		content := fmt.Sprintf("# Notes\n\nVersion %d.\n\n## Details\n\nDetail of version %d.\n", v, v)
		r.wait(h.put(mdRecord("app", "docs/notes.md", content, nil)))
		for range 2 {
			if got := readDocOn(t, e, ctx, `{"path":"docs/notes.md"}`); got.Content != strings.TrimSpace(content) || got.Hash != events.SHA256Hex([]byte(got.Content)) {
				t.Fatalf("version %d: read %q (hash %s)", v, got.Content, got.Hash)
			}
			if got := readDocOn(t, e, ctx, `{"path":"docs/notes.md","anchor":"Details"}`); !strings.Contains(got.Content, fmt.Sprintf("version %d.", v)) {
				t.Fatalf("version %d: section %q", v, got.Content)
			}
		}
	}
	st, _ := e.CacheStats()
	l2 := st.Level(tiercache.L2)
	if l2.Hits != 2*versions || l2.Misses != 2*versions {
		t.Errorf("L2 %d hits, %d misses; want %d each", l2.Hits, l2.Misses, 2*versions)
	}
	if l2.Invalidated != 2*(versions-1) || l2.Entries != 2 {
		t.Errorf("L2 invalidated %d, holds %d; want %d and 2", l2.Invalidated, l2.Entries, 2*(versions-1))
	}
}

// TestCachedReadContextSeesNewDocuments caches a ranking, adds a document
// that matches the query better, and finds it ranked first.
func TestCachedReadContextSeesNewDocuments(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll(fixtureDocs()))
	e, _ := cachedEdge(r)
	ctx := context.Background()
	search := func() []tools.ContextHit {
		t.Helper()
		out, err := e.Call(ctx, tools.ReadContext, json.RawMessage(`{"query":"rollback image","mode":"keyword"}`))
		if err != nil {
			t.Fatal(err)
		}
		var hits []tools.ContextHit
		if err := json.Unmarshal(out, &hits); err != nil {
			t.Fatal(err)
		}
		return hits
	}
	first := search()
	if again := search(); !slices.Equal(paths(again), paths(first)) {
		t.Fatalf("second ranking %v, first %v", paths(again), paths(first))
	}
	r.wait(h.put(mdRecord("app", "docs/rollback.md", "# Rollback image\n\nRollback image rollback image: how to roll back an image.\n", nil)))
	if got := paths(search()); len(got) == 0 || got[0] != "docs/rollback.md" {
		t.Fatalf("after adding docs/rollback.md the ranking is %v", got)
	}
	if l3 := cacheStats(e).Level(tiercache.L3); l3.Hits != 1 || l3.Invalidated != 1 {
		t.Errorf("L3 %+v: want one hit and one invalidation", l3)
	}
}

// TestCachedReadContextKeepsRepoScopes asks the same query as a caller who
// may read every repo and as one who may read only app: the second must
// not get the first's cached ranking, which names lib's documents.
func TestCachedReadContextKeepsRepoScopes(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll([]events.DocRecord{
		mdRecord("app", "docs/deploy.md", "# Deploy\n\nDeploy the service.\n", nil),
		mdRecord("lib", "docs/deploy-lib.md", "# Deploy lib\n\nDeploy the library, deploy it.\n", nil),
	}))
	e, _ := cachedEdge(r)
	args := json.RawMessage(`{"query":"deploy","mode":"keyword"}`)
	all := must(e.Call(context.Background(), tools.ReadContext, args))
	if !strings.Contains(string(all), "lib") {
		t.Fatalf("unrestricted ranking has no lib document: %s", all)
	}
	appOnly := access.WithIdentity(context.Background(), access.Identity{Client: "c", Repos: []string{"app"}})
	for range 2 {
		out := must(e.Call(appOnly, tools.ReadContext, args))
		if strings.Contains(string(out), `"repo":"lib"`) {
			t.Fatalf("app-only caller got lib's documents: %s", out)
		}
	}
}

// TestCachedAnswersExpireWhenIdle reads a rules file, lets 31 minutes pass
// on the cache's clock, and reads it again: computed afresh, the entry
// counted as expired; reads 29 minutes apart keep it.
func TestCachedAnswersExpireWhenIdle(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.put(mdRecord("app", "AGENTS.md", "# Rules\n\n- Test with real NATS.\n", nil)))
	e, clk := cachedEdge(r)
	ctx := context.Background()
	read := func() { readDocOn(t, e, ctx, `{"path":"AGENTS.md"}`) }
	read()
	clk.Advance(29 * time.Minute)
	read()
	clk.Advance(29 * time.Minute)
	read()
	clk.Advance(31 * time.Minute)
	read()
	l4 := cacheStats(e).Level(tiercache.L4)
	if l4.Hits != 2 || l4.Misses != 2 || l4.Expired != 1 {
		t.Fatalf("L4 %+v: want 2 hits, 2 misses, 1 expired", l4)
	}
}

func TestDocLevel(t *testing.T) {
	for p, want := range map[string]tiercache.Level{
		"AGENTS.md":                tiercache.L4,
		"CLAUDE.md":                tiercache.L4,
		"docs/ARCHITECTURE.md":     tiercache.L4,
		"docs/architecture/bus.md": tiercache.L4,
		"docs/adr/0001-bus.md":     tiercache.L4,
		"docs/coding-rules.md":     tiercache.L4,
		"shared/STYLE.md":          tiercache.L4,
		"docs/api.md":              tiercache.L2,
		"internal/edge/cache.go":   tiercache.L2,
		"docs/rollout/plan.md":     tiercache.L2,
		"README.md":                tiercache.L2,
	} {
		if got := docLevel(p); got != want {
			t.Errorf("docLevel(%q) = %s, want %s", p, got, want)
		}
	}
}

// TestWithoutCacheHasNoCache keeps the switch honest.
func TestWithoutCacheHasNoCache(t *testing.T) {
	if _, ok := New(nil, nil, WithoutCache()).CacheStats(); ok {
		t.Fatal("WithoutCache edge reports a cache")
	}
	if st, ok := New(nil, nil).CacheStats(); !ok || st.MaxBytes != tiercache.DefaultMaxBytes {
		t.Fatalf("default edge: cache %v, cap %d", ok, st.MaxBytes)
	}
}

func cacheStats(e *Edge) tiercache.Stats {
	st, _ := e.CacheStats()
	return st
}
