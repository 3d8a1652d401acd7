package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/markdown"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// harness is a real embedded JetStream with cue_docs and cue_blobs, written
// to as the indexer would.
type harness struct {
	t   testing.TB
	kv  jetstream.KeyValue
	obs jetstream.ObjectStore
	// vkv is cue_vectors; emb, when set, is the embedder of edges start
	// opens.
	vkv jetstream.KeyValue
	emb embed.Embedder
	// mkv is cue_memories.
	mkv jetstream.KeyValue
	// vectorsAfter is Config.VectorsAfter of the edges open opens.
	vectorsAfter <-chan struct{}
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	return harnessOn(t, conn)
}

// harnessOn is a harness on conn's buckets, for tests that also run the
// roles writing them.
func harnessOn(t testing.TB, conn *bus.Conn) *harness {
	t.Helper()
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := conn.JS.ObjectStore(ctx, events.BlobsBucket)
	if err != nil {
		t.Fatal(err)
	}
	vkv, err := conn.JS.KeyValue(ctx, events.VectorsBucket)
	if err != nil {
		t.Fatal(err)
	}
	mkv, err := conn.JS.KeyValue(ctx, events.MemoriesBucket)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, kv: kv, obs: obs, vkv: vkv, mkv: mkv}
}

// put writes rec under its DocKey and returns the revision.
func (h *harness) put(rec events.DocRecord) uint64 {
	h.t.Helper()
	b, err := events.Encode(rec)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.putRaw(events.DocKey(rec.Repo, rec.Path), b)
}

func (h *harness) putRaw(key string, value []byte) uint64 {
	h.t.Helper()
	rev, err := h.kv.Put(context.Background(), key, value)
	if err != nil {
		h.t.Fatal(err)
	}
	return rev
}

// running is an edge whose Run goroutine the test owns.
type running struct {
	t      testing.TB
	m      *Materialiser
	e      *Edge
	cancel context.CancelFunc
	done   chan error
}

// start opens an edge on dir ("" for memory) and runs it until stop or the
// end of the test.
func (h *harness) start(dir string) *running {
	h.t.Helper()
	r := h.open(dir)
	r.run()
	return r
}

// open opens an edge on dir without running it: it holds what its store
// held.
func (h *harness) open(dir string) *running {
	h.t.Helper()
	m, err := Open(Config{Dir: dir, Docs: h.kv, Blobs: h.obs, Vectors: h.vkv, Memories: h.mkv, Embedder: h.emb, VectorsAfter: h.vectorsAfter, Logger: testLogger(h.t)})
	if err != nil {
		h.t.Fatal(err)
	}
	r := &running{t: h.t, m: m, e: New(m, testLogger(h.t))}
	h.t.Cleanup(func() {
		if r.done == nil {
			m.Close()
		}
	})
	return r
}

// run runs an opened edge until stop or the end of the test.
func (r *running) run() {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- r.m.Run(ctx) }()
	r.t.Cleanup(func() { r.stop() })
}

func (r *running) stop() {
	r.t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	if err := <-r.done; err != nil {
		r.t.Errorf("Run: %v", err)
	}
}

func (r *running) wait(rev uint64) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.m.WaitRevision(ctx, rev); err != nil {
		r.t.Fatalf("waiting for revision %d (at %d): %v", rev, r.m.Revision(), err)
	}
}

func (r *running) call(tool string, args any) (json.RawMessage, error) {
	b, err := json.Marshal(args)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.e.Call(context.Background(), tool, b)
}

func (r *running) search(args map[string]any) []tools.ContextHit {
	r.t.Helper()
	out, err := r.call(tools.ReadContext, args)
	if err != nil {
		r.t.Fatalf("read_context %v: %v", args, err)
	}
	var hits []tools.ContextHit
	if err := json.Unmarshal(out, &hits); err != nil {
		r.t.Fatal(err)
	}
	return hits
}

func (r *running) read(args map[string]any) tools.ReadDocResult {
	r.t.Helper()
	out, err := r.call(tools.ReadDoc, args)
	if err != nil {
		r.t.Fatalf("read_doc %v: %v", args, err)
	}
	var res tools.ReadDocResult
	if err := json.Unmarshal(out, &res); err != nil {
		r.t.Fatal(err)
	}
	return res
}

// readErr calls read_doc and returns its tool error, failing if it succeeds.
func (r *running) readErr(args map[string]any) *tools.Error {
	r.t.Helper()
	_, err := r.call(tools.ReadDoc, args)
	var te *tools.Error
	if !errors.As(err, &te) {
		r.t.Fatalf("read_doc %v: got %v, want a tool error", args, err)
	}
	return te
}

func paths(hits []tools.ContextHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Path
	}
	return out
}

// testLogger writes to stderr with -v; otherwise it keeps what is logged
// at info and above and prints it when the test fails, so a failure seen
// once on CI says what the edge did.
func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
	}
	var logs logtest.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logged:\n%s", logs.String())
		}
	})
	return slog.New(slog.NewTextHandler(&logs, nil))
}

var testTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// mdRecord is the record an indexer would write for a markdown file.
func mdRecord(repo, path, content string, fm map[string]any) events.DocRecord {
	doc := markdown.Parse([]byte(content))
	hs := make([]events.Heading, len(doc.Headings))
	title := ""
	for i, h := range doc.Headings {
		hs[i] = events.Heading{Level: h.Level, Text: h.Text, Slug: h.Slug, Line: h.Line, EndLine: h.EndLine, ParentIdx: h.Parent}
		if title == "" && h.Level == 1 {
			title = h.Text
		}
	}
	return events.DocRecord{
		Repo: repo, Path: path, SHA256: events.SHA256Hex([]byte(content)), Size: int64(len(content)),
		ModTime: testTime, SourceSeq: 1, Kind: events.DocMarkdown, Tokens: len(content) / 4,
		Lines: doc.Lines, Title: title, Headings: hs, Frontmatter: fm, Content: content, IndexedAt: testTime,
	}
}

func tombstone(repo, path string) events.DocRecord {
	return events.DocRecord{Repo: repo, Path: path, SourceSeq: 2, Deleted: true, IndexedAt: testTime}
}

const authDoc = `# Authentication

How users sign in.

## Login Flow

The client posts credentials to /login and receives a session token.
Tokens expire after an hour.

### Refresh

Refresh tokens rotate on use.

## OAuth Configuration

Configure the OAuth provider's client id and secret.
`

func fixtureDocs() []events.DocRecord {
	return []events.DocRecord{
		mdRecord("app", "docs/auth.md", authDoc, map[string]any{"tags": []any{"auth", "security"}, "priority": "High", "assignee": "@alice"}),
		mdRecord("app", "docs/deploy.md", "# Deploying\n\nShip the container to the cluster.\n\n## Rollback\n\nRoll back with the previous image tag.\n", map[string]any{"tags": "ops, release", "priority": "low"}),
		mdRecord("app", "docs/api.md", "# API\n\n## Error Codes\n\nError 1001 means the file is not found.\n\n## Login endpoint\n\nPOST /login with credentials.\n", map[string]any{"tags": []any{"api"}, "priority": "medium", "assignee": "bob"}),
		mdRecord("app", "src/auth.go", "package auth\n\n// VerifyToken checks a session token.\nfunc VerifyToken() {}\n", nil),
	}
}

func (h *harness) putAll(recs []events.DocRecord) uint64 {
	var rev uint64
	for _, r := range recs {
		rev = h.put(r)
	}
	return rev
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}

// compareGolden reports whether v, as indented JSON, equals the golden
// file, and returns the file's content; with -update it rewrites the file
// instead and reports equal.
func compareGolden(t *testing.T, golden string, v any) (want []byte, same bool) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return got, true
	}
	want, err = os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	return want, bytes.Equal(got, want)
}
