package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestReadContextFindsIndexedDocs(t *testing.T) {
	h := newHarness(t)
	rev := h.putAll(fixtureDocs())
	r := h.start("")
	r.wait(rev)
	select {
	case <-r.m.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready after the replay")
	}

	hits := r.search(map[string]any{"query": "login flow", "mode": "keyword"})
	if len(hits) == 0 || hits[0].Path != "docs/auth.md" {
		t.Fatalf("login flow: got %v, want docs/auth.md first", paths(hits))
	}
	top := hits[0]
	want := tools.ContextHit{Path: "docs/auth.md", Repo: "app", Hash: events.SHA256Hex([]byte(authDoc)), Tokens: len(authDoc) / 4,
		Anchors: []string{"Authentication", "Login Flow", "OAuth Configuration"},
		Section: &tools.Section{Heading: "Login Flow", LineRange: tools.LineRange{Start: 5, End: 9}}, Modes: []string{"keyword"}}
	top.Score = 0
	if !reflect.DeepEqual(top, want) {
		t.Fatalf("hit:\n got %+v\nwant %+v", top, want)
	}
	if hits[0].Score <= 0 {
		t.Fatalf("score %v, want > 0", hits[0].Score)
	}

	// Code is searchable too, and limit holds.
	if got := r.search(map[string]any{"query": "VerifyToken"}); len(got) == 0 || got[0].Path != "src/auth.go" {
		t.Fatalf("VerifyToken: %v", paths(got))
	}
	if got := r.search(map[string]any{"query": "login", "limit": 1}); len(got) != 1 {
		t.Fatalf("limit 1: %v", paths(got))
	}
	if got := r.search(map[string]any{"query": "zebra"}); got == nil || len(got) != 0 {
		t.Fatalf("no match must be an empty array, got %#v", got)
	}
	st := r.m.Status()
	if !st.Ready || st.Docs != 4 || st.Revision != rev {
		t.Fatalf("status %+v", st)
	}
}

func TestSearchModes(t *testing.T) {
	for _, c := range []struct {
		args string
		want string
	}{
		{`{"query":"x"}`, "hybrid"},
		{`{"query":"x","semantic":true}`, "semantic"},
		{`{"query":"x","semantic":false}`, "hybrid"},
		{`{"query":"x","mode":"keyword","semantic":true}`, "keyword"},
		{`{"query":"x","mode":"hybrid"}`, "hybrid"},
	} {
		if got := searchMode(json.RawMessage(c.args)); got != c.want {
			t.Errorf("searchMode(%s) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestReadContextValidates(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	for _, args := range []map[string]any{{}, {"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "mode": "fuzzy"}} {
		_, err := r.call(tools.ReadContext, args)
		var te *tools.Error
		if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams {
			t.Errorf("%v: got %v, want invalid params", args, err)
		}
	}
	_, err := r.call("list_everything", map[string]any{})
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeMethodMissing {
		t.Errorf("unknown tool: got %v", err)
	}
}

func TestFilters(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll(fixtureDocs()))

	cases := []struct {
		filters map[string]any
		want    []string
	}{
		{map[string]any{"tags": []string{"SECURITY", "nope"}}, []string{"docs/auth.md"}},
		{map[string]any{"tags": []string{"release"}}, []string{"docs/deploy.md"}},
		{map[string]any{"priority": "high"}, []string{"docs/auth.md"}},
		{map[string]any{"assignee": "Alice"}, []string{"docs/auth.md"}},
		{map[string]any{"assignee": "@BOB"}, []string{"docs/api.md"}},
		{map[string]any{"tags": []string{"api", "auth"}, "priority": "MEDIUM"}, []string{"docs/api.md"}},
		{map[string]any{"priority": "urgent"}, []string{}},
	}
	for _, c := range cases {
		got := paths(r.search(map[string]any{"query": "login token rollback error", "limit": 10, "filters": c.filters}))
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("filters %v: got %v, want %v", c.filters, got, c.want)
		}
	}
}

func TestTombstoneAndDeleteRemove(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll(fixtureDocs()))

	r.wait(h.put(tombstone("app", "docs/auth.md")))
	if got := paths(r.search(map[string]any{"query": "oauth"})); slices.Contains(got, "docs/auth.md") {
		t.Fatalf("tombstoned doc still found: %v", got)
	}
	if te := r.readErr(map[string]any{"path": "docs/auth.md"}); te.Code != tools.CodeFileNotFound || te.Message != "File Not Found" {
		t.Fatalf("read_doc of a tombstone: %v", te)
	}

	// KV delete and purge markers remove too.
	if err := h.kv.Delete(context.Background(), events.DocKey("app", "docs/deploy.md")); err != nil {
		t.Fatal(err)
	}
	if err := h.kv.Purge(context.Background(), events.DocKey("app", "docs/api.md")); err != nil {
		t.Fatal(err)
	}
	r.wait(h.put(mdRecord("app", "docs/later.md", "# Later\n", nil)))
	st := r.m.Status()
	if st.Docs != 2 {
		t.Fatalf("docs after tombstone, delete and purge: %+v", st)
	}
	for _, p := range []string{"docs/deploy.md", "docs/api.md"} {
		if te := r.readErr(map[string]any{"path": p}); te.Code != tools.CodeFileNotFound {
			t.Fatalf("%s: %v", p, te)
		}
	}
	if got := r.search(map[string]any{"query": "rollback"}); len(got) != 0 {
		t.Fatalf("deleted doc still searchable: %v", paths(got))
	}
}

// snapshot is everything an edge materialised, for comparing two edges.
func snapshot(t *testing.T, r *running) map[string]string {
	t.Helper()
	m := r.m
	m.mu.RLock()
	keys := make([]string, 0, len(m.docs))
	for k := range m.docs {
		keys = append(keys, k)
	}
	m.mu.RUnlock()
	out := make(map[string]string)
	for _, k := range keys {
		d, ok, err := m.store.Get(k)
		if err != nil || !ok {
			t.Fatalf("stored %s: %v %v", k, ok, err)
		}
		out[k] = string(must(json.Marshal(d)))
	}
	for _, q := range []string{"login", "token", "rollback", "error codes", "later"} {
		out["q:"+q] = string(must(json.Marshal(r.search(map[string]any{"query": q, "limit": 50}))))
	}
	return out
}

func TestRestartResumesAndFreshStoreRebuildsIdentically(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(t.TempDir(), "badger")

	first := h.start(dir)
	rev := h.putAll(fixtureDocs())
	first.wait(rev)
	first.stop()

	// While the edge is down: an update, a tombstone, a new doc, a skip.
	down := []events.DocRecord{
		mdRecord("app", "docs/deploy.md", "# Deploying\n\nBlue-green rollback in seconds.\n", map[string]any{"priority": "high"}),
		tombstone("app", "docs/api.md"),
		mdRecord("app", "docs/later.md", "# Later\n\nWritten while the edge was down.\n", nil),
		{Repo: "app", Path: "assets/logo.md", Size: 9, SourceSeq: 3, Skip: &events.Skip{Reason: events.SkipBinary, Detail: "NUL at 3"}, IndexedAt: testTime},
	}
	rev = h.putAll(down)

	second := h.open(dir)
	if got := second.m.Status(); got.Revision == 0 || got.Docs != 4 {
		t.Fatalf("reopened store should hold the first run's state before any watch: %+v", got)
	}
	second.run()
	second.wait(rev)
	st := second.m.Status()
	if st.Applied != uint64(len(down)) {
		t.Fatalf("resumed edge applied %d entries, want only the %d written while it was down", st.Applied, len(down))
	}
	if st.Docs != 5 || st.Skipped != 1 {
		t.Fatalf("status after resume: %+v", st)
	}
	if got := paths(second.search(map[string]any{"query": "blue-green"})); !slices.Equal(got, []string{"docs/deploy.md"}) {
		t.Fatalf("update made while down: %v", got)
	}
	want := snapshot(t, second)
	second.stop()

	// Lose the disk: a fresh edge replays everything and ends identical.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	fresh := h.start(dir)
	fresh.wait(rev)
	if got := fresh.m.Status(); got.Applied < uint64(got.Docs) || got.Docs != 5 {
		t.Fatalf("fresh edge status: %+v", got)
	}
	if got := snapshot(t, fresh); !reflect.DeepEqual(got, want) {
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("%s:\n fresh %s\n want  %s", k, got[k], want[k])
			}
		}
		t.Fatal("fresh edge differs from the resumed one")
	}
}

func TestBlobBackedRecord(t *testing.T) {
	h := newHarness(t)
	content := "# Big Guide\n\n" + strings.Repeat("Filler line about nothing.\n", 2000) + "\n## Zanzibar\n\nThe rare word lives here.\n"
	sha := events.SHA256Hex([]byte(content))
	if _, err := h.obs.PutBytes(context.Background(), sha, []byte(content)); err != nil {
		t.Fatal(err)
	}
	rec := mdRecord("app", "docs/big.md", content, nil)
	rec.Content, rec.Blob = "", sha

	missing := mdRecord("app", "docs/lost.md", "# Lost\n", nil)
	missing.Content, missing.Blob = "", events.SHA256Hex([]byte("never stored"))

	h.put(missing)
	r := h.start("")
	r.wait(h.put(rec))

	hits := r.search(map[string]any{"query": "zanzibar"})
	if got := paths(hits); !slices.Equal(got, []string{"docs/big.md"}) {
		t.Fatalf("blob content not searchable: %v", got)
	}
	// Content this large is kept compressed: the hit's section and
	// read_doc decompress it.
	if s := hits[0].Section; s == nil || s.Heading != "Zanzibar" {
		t.Fatalf("hit section of a doc kept compressed: %+v", s)
	}
	res := r.read(map[string]any{"path": "docs/big.md"})
	if res.Content != strings.TrimSpace(content) || !res.Cached {
		t.Fatalf("blob read: cached=%v len=%d", res.Cached, len(res.Content))
	}
	sec := r.read(map[string]any{"path": "docs/big.md", "anchor": "Zanzibar"})
	if sec.Content != "## Zanzibar\n\nThe rare word lives here." {
		t.Fatalf("section of a blob doc: %q", sec.Content)
	}

	te := r.readErr(map[string]any{"path": "docs/lost.md"})
	if te.Message != "File Not Indexed" || !strings.Contains(fmt.Sprint(te.Data["detail"]), "missing") {
		t.Fatalf("missing blob: %v", te)
	}
}

func TestLargeDocServedFromStore(t *testing.T) {
	h := newHarness(t)
	content := "# Huge\n\n" + strings.Repeat("x", 2048) + "\n"
	rev := h.put(mdRecord("app", "docs/huge.md", content, nil))
	m, err := Open(Config{Docs: h.kv, Blobs: h.obs, MaxContentInMemory: 1024})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if err := m.WaitRevision(ctx, rev); err != nil {
		t.Fatal(err)
	}
	out, err := New(m, nil).Call(ctx, tools.ReadDoc, json.RawMessage(`{"path":"docs/huge.md"}`))
	if err != nil {
		t.Fatal(err)
	}
	var res tools.ReadDocResult
	_ = json.Unmarshal(out, &res)
	if res.Cached || res.Content != strings.TrimSpace(content) {
		t.Fatalf("large doc: cached=%v len=%d", res.Cached, len(res.Content))
	}
}

func TestUndecodableEntryDoesNotStopTheWatch(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll(fixtureDocs()))

	// Garbage over an existing doc drops it; garbage at a new key and a
	// stray key are ignored; the watch goes on.
	h.putRaw(events.DocKey("app", "docs/deploy.md"), []byte("{not json"))
	h.putRaw(events.DocKey("app", "docs/new.md"), []byte(`{"v":"9.0","kind":"doc.record","data":{}}`))
	h.putRaw("not-a-doc-key", []byte("x"))
	r.wait(h.put(mdRecord("app", "docs/after.md", "# After\n\nArrived after the garbage.\n", nil)))

	st := r.m.Status()
	if st.Undecodable != 3 {
		t.Fatalf("undecodable = %d, want 3", st.Undecodable)
	}
	if got := paths(r.search(map[string]any{"query": "arrived garbage"})); !slices.Equal(got, []string{"docs/after.md"}) {
		t.Fatalf("record after garbage: %v", got)
	}
	if te := r.readErr(map[string]any{"path": "docs/deploy.md"}); te.Code != tools.CodeFileNotFound {
		t.Fatalf("overwritten by garbage: %v", te)
	}
}

func TestReadDoc(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll(fixtureDocs()))

	full := r.read(map[string]any{"path": "docs/auth.md"})
	want := strings.TrimSpace(authDoc)
	if full.Content != want || full.Path != "docs/auth.md" || full.Repo != "app" || full.Anchor != nil || full.LineRange != nil ||
		full.Hash != events.SHA256Hex([]byte(want)) || full.Tokens != tokens.Count(want) || !full.Cached {
		t.Fatalf("full read: %+v", full)
	}

	for _, anchor := range []string{"Login Flow", "login flow", "#login-flow"} {
		sec := r.read(map[string]any{"path": "docs/auth.md", "anchor": anchor})
		wantSec := "## Login Flow\n\nThe client posts credentials to /login and receives a session token.\nTokens expire after an hour.\n\n### Refresh\n\nRefresh tokens rotate on use."
		if sec.Content != wantSec {
			t.Fatalf("anchor %q: %q", anchor, sec.Content)
		}
		if sec.LineRange == nil || *sec.LineRange != (tools.LineRange{Start: 5, End: 12}) {
			t.Fatalf("anchor %q: line range %+v", anchor, sec.LineRange)
		}
		if sec.Anchor == nil || *sec.Anchor != anchor || sec.Hash != events.SHA256Hex([]byte(wantSec)) {
			t.Fatalf("anchor %q: %+v", anchor, sec)
		}
	}
	last := r.read(map[string]any{"path": "docs/auth.md", "anchor": "OAuth Configuration"})
	if *last.LineRange != (tools.LineRange{Start: 14, End: 16}) {
		t.Fatalf("last section range %+v", last.LineRange)
	}

	te := r.readErr(map[string]any{"path": "docs/auth.md", "anchor": "Logn Flow"})
	if te.Code != tools.CodeInvalidParams || te.Data["suggestion"] != "Did you mean 'Login Flow'?" {
		t.Fatalf("unknown anchor: %v", te)
	}
	if hs, _ := te.Data["headings"].([]string); !slices.Equal(hs, []string{"Authentication", "Login Flow", "Refresh", "OAuth Configuration"}) {
		t.Fatalf("unknown anchor lists %v", te.Data["headings"])
	}
}

func TestReadDocDidYouMean(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll(fixtureDocs()))
	te := r.readErr(map[string]any{"path": "docs/atuh.md"})
	if te.Code != tools.CodeFileNotFound || te.Data["path"] != "docs/atuh.md" || te.Data["suggestion"] != "Did you mean 'docs/auth.md'?" {
		t.Fatalf("typo: %v", te)
	}
	if te := r.readErr(map[string]any{"path": "docs/zzzzzzzzzzzzz.md"}); te.Data["suggestion"] != nil {
		t.Fatalf("nothing close should suggest nothing: %v", te)
	}
	// A new file becomes a candidate.
	r.wait(h.put(mdRecord("app", "docs/runbook.md", "# Runbook\n", nil)))
	if te := r.readErr(map[string]any{"path": "docs/runbok.md"}); te.Data["suggestion"] != "Did you mean 'docs/runbook.md'?" {
		t.Fatalf("new candidate: %v", te)
	}
}

func TestReadDocRejectsEscapingPaths(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll(fixtureDocs()))
	for path, want := range map[string]string{
		"docs/../../etc/passwd.md": "'..'",
		"docs/../auth.md":          "'..'",
		"/etc/auth.md":             "absolute",
		`docs\auth.md`:             `'\'`,
		"C:/docs/auth.md":          "absolute",
		"docs//auth.md":            "empty",
		"docs/auth.md\x00.txt.md":  "control character",
		"docs/\nauth.md":           "control character",
		"docs/auth\x7f.md":         "control character",
	} {
		te := r.readErr(map[string]any{"path": path})
		detail, _ := te.Data["detail"].(string)
		if te.Code != tools.CodeInvalidParams || !strings.Contains(detail, want) {
			t.Errorf("%q: got %v, want invalid params mentioning %s", path, te, want)
		}
		if _, ok := te.Data["suggestion"]; ok {
			t.Errorf("%q: a refused path must not be resolved into a suggestion: %v", path, te)
		}
	}
	if te := r.readErr(map[string]any{"path": "../x.md"}); te.Code != tools.CodeInvalidParams {
		t.Errorf("leading dot: %v", te)
	}
}

func TestReadDocSkippedFile(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	skip := events.DocRecord{Repo: "app", Path: "docs/huge.md", Size: 1 << 30, SourceSeq: 1,
		Skip: &events.Skip{Reason: events.SkipTooLarge, Detail: "1 GiB exceeds the 8 MiB limit"}, IndexedAt: testTime}
	r.wait(h.put(skip))
	te := r.readErr(map[string]any{"path": "docs/huge.md"})
	if te.Code != tools.CodeFileNotFound || te.Message != "File Not Indexed" || te.Data["reason"] != "too_large" ||
		te.Data["detail"] != "1 GiB exceeds the 8 MiB limit" {
		t.Fatalf("skipped: %v", te)
	}
	if got := r.search(map[string]any{"query": "huge"}); len(got) != 0 {
		t.Fatalf("skipped file searchable: %v", paths(got))
	}
	// Indexed later: the skip goes away.
	r.wait(h.put(mdRecord("app", "docs/huge.md", "# Huge\n\nNow small.\n", nil)))
	if res := r.read(map[string]any{"path": "docs/huge.md"}); res.Content != "# Huge\n\nNow small." {
		t.Fatalf("after reindex: %+v", res)
	}
	if st := r.m.Status(); st.Skipped != 0 {
		t.Fatalf("skipped count %d", st.Skipped)
	}
}

func TestReadDocAcrossRepos(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll([]events.DocRecord{
		mdRecord("app", "README.md", "# App\n", nil),
		mdRecord("lib", "README.md", "# Lib\n", nil),
		mdRecord("lib", "docs/only-lib.md", "# Only lib\n", nil),
	}))
	te := r.readErr(map[string]any{"path": "README.md"})
	if te.Code != tools.CodeInvalidParams || !reflect.DeepEqual(te.Data["candidates"], []string{"app/README.md", "lib/README.md"}) {
		t.Fatalf("ambiguous: %v", te)
	}
	if res := r.read(map[string]any{"path": "lib/README.md"}); res.Content != "# Lib" || res.Repo != "lib" || res.Path != "README.md" {
		t.Fatalf("repo-qualified: %+v", res)
	}
	if res := r.read(map[string]any{"path": "docs/only-lib.md"}); res.Repo != "lib" {
		t.Fatalf("unique path in one repo: %+v", res)
	}
	if te := r.readErr(map[string]any{"path": "app/READMEE.md"}); te.Data["suggestion"] != "Did you mean 'app/README.md'?" {
		t.Fatalf("suggestion across repos: %v", te)
	}
}

func TestWaitRevisionEnds(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := r.m.WaitRevision(ctx, 1000); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- r.m.WaitRevision(context.Background(), 1000) }()
	r.stop()
	if err := <-errc; !errors.Is(err, ErrStopped) {
		t.Fatalf("after stop: %v", err)
	}
	if err := r.m.Run(context.Background()); !errors.Is(err, ErrStopped) {
		t.Fatalf("Run after stop: %v", err)
	}
}

// TestConcurrentReadsWhileStreaming runs searches and reads while records
// stream in; run it with -race.
func TestConcurrentReadsWhileStreaming(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	const n = 300
	done := make(chan struct{})
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if _, err := r.call(tools.ReadContext, map[string]any{"query": fmt.Sprintf("topic%d words", (i+w)%50)}); err != nil {
					errc <- err
					return
				}
				_, err := r.call(tools.ReadDoc, map[string]any{"path": fmt.Sprintf("docs/n%d.md", i%n), "anchor": "Part"})
				var te *tools.Error
				if err != nil && !(errors.As(err, &te) && te.Code == tools.CodeFileNotFound) {
					errc <- err
					return
				}
				r.m.Status()
			}
		}()
	}
	var rev uint64
	for i := range n {
		body := fmt.Sprintf("# Note %d\n\nAbout topic%d and more words.\n\n## Part\n\nDetail %d.\n", i, i%50, i)
		rev = h.put(mdRecord("app", fmt.Sprintf("docs/n%d.md", i), body, nil))
		if i%7 == 0 {
			rev = h.put(tombstone("app", fmt.Sprintf("docs/n%d.md", i/2)))
		}
	}
	r.wait(rev)
	close(done)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if got := r.search(map[string]any{"query": "topic7", "limit": 50}); len(got) == 0 {
		t.Fatal("nothing found after streaming")
	}
}

// An agent's question ranks and picks its section by what it asks about,
// not by "how do I", which a FAQ says more often than any answer.
func TestReadContextAnswersAQuestionAsItsKeywords(t *testing.T) {
	h := newHarness(t)
	faq := mdRecord("app", "docs/faq.md", "# FAQ\n\n## How do I do that?\n\nWhat do I do when I don't know where it is?\n\n## Where do I find the OAuth provider?\n\nHow do I get there? Ask in the chat.\n", nil)
	rev := h.putAll(append(fixtureDocs(), faq))
	r := h.start("")
	r.wait(rev)

	question := r.search(map[string]any{"query": "How do I configure the OAuth provider?", "mode": "keyword"})
	keywords := r.search(map[string]any{"query": "configure OAuth provider", "mode": "keyword"})
	if !slices.Equal(paths(question), paths(keywords)) || len(question) == 0 || question[0].Path != "docs/auth.md" {
		t.Fatalf("question ranked %v, keywords %v; want docs/auth.md first in both", paths(question), paths(keywords))
	}
	if s := question[0].Section; s == nil || s.Heading != "OAuth Configuration" {
		t.Fatalf("section %+v, want OAuth Configuration", s)
	}
	if got := r.search(map[string]any{"query": "how do I", "mode": "keyword"}); len(got) == 0 || got[0].Path != "docs/faq.md" {
		t.Fatalf("how do I: %v, want the FAQ", paths(got))
	}
}
