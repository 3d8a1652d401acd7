package embedworker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/embed/cache"
	"github.com/cuedeck/cuedeck/internal/embed/ollama"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/embed/split"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/ollamatest"
	"github.com/cuedeck/cuedeck/internal/priority"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const dims = 8

// fastOllama opens model on srv with short timeouts, no waits between
// attempts and a breaker that opens after two failures and probes again
// after 200 ms.
func fastOllama(t *testing.T, srv *ollamatest.Server, model string) *ollama.Embedder {
	t.Helper()
	e, err := provider.Open("ollama:"+model, provider.Config{OllamaHost: srv.URL(), Ollama: ollama.Config{
		Timeout: 300 * time.Millisecond, MaxAttempts: 2, MaxRetryAfter: 10 * time.Millisecond,
		Sleep:   func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
		Breaker: resilience.BreakerConfig{WindowSize: 4, ErrorThreshold: 0.5, Window: time.Minute, Cooldown: 200 * time.Millisecond, ProbesRequired: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return e.(*ollama.Embedder)
}

func openCache(t *testing.T) *cache.Cache {
	t.Helper()
	c, err := cache.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func fastConfig(c *cache.Cache) Config {
	return Config{Cache: c, ReconcileEvery: -1, RetryDelay: func(n uint64) time.Duration {
		return min(time.Duration(n)*20*time.Millisecond, 200*time.Millisecond)
	}}
}

// start runs a worker until the test ends.
func start(t *testing.T, conn *bus.Conn, e embed.Embedder, cfg Config) *Service {
	t.Helper()
	w, _ := startStoppable(t, conn, e, cfg)
	return w
}

// startStoppable runs a worker until stop is called or the test ends;
// stop checks that Run returned cleanly.
func startStoppable(t *testing.T, conn *bus.Conn, e embed.Embedder, cfg Config) (w *Service, stop func()) {
	t.Helper()
	w, err := New(conn, e, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(stop)
	return w, stop
}

func upsert(path, content string) events.FileUpserted {
	return events.FileUpserted{Repo: "r", Path: path, SHA256: events.SHA256Hex([]byte(content)), Size: int64(len(content)), ModTime: time.Unix(1, 0), Content: content}
}

func index(t *testing.T, idx *indexer.Service, seq uint64, ev events.Event) {
	t.Helper()
	if err := idx.Handle(context.Background(), events.Envelope{StreamSeq: seq, Event: ev}); err != nil {
		t.Fatal(err)
	}
}

func vectors(t *testing.T, conn *bus.Conn, model, path string) (events.VectorRecord, bool) {
	t.Helper()
	kv, err := conn.JS.KeyValue(context.Background(), events.VectorsBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(context.Background(), events.VectorKey(model, "r", path))
	if err != nil {
		return events.VectorRecord{}, false
	}
	rec, err := events.DecodeVectorRecord(e.Value())
	if err != nil {
		t.Fatal(err)
	}
	return rec, true
}

func doc(t *testing.T, conn *bus.Conn, path string) (events.DocRecord, bool) {
	t.Helper()
	kv, err := conn.JS.KeyValue(context.Background(), events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(context.Background(), events.DocKey("r", path))
	if err != nil {
		return events.DocRecord{}, false
	}
	rec, err := events.DecodeDocRecord(e.Value())
	if err != nil {
		t.Fatal(err)
	}
	return rec, true
}

func backlog(t *testing.T, conn *bus.Conn, model string) status.EmbedReport {
	t.Helper()
	rep, err := status.CollectWith(context.Background(), conn.JS, status.Options{EmbedModel: model})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Embeddings == nil {
		t.Fatal("status reports no embeddings")
	}
	return *rep.Embeddings
}

const guide = `# Auth
Overview of signing in.

## Login
Send the form with user and password.

## Tokens
Tokens expire after an hour.
`

func TestDocBecomesVectorsAndUnchangedChunksAreNotEmbeddedAgain(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	e := fastOllama(t, srv, "all-minilm")
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	c := openCache(t)
	start(t, conn, e, fastConfig(c))

	index(t, idx, 1, upsert("guide.md", guide))
	var rec events.VectorRecord
	bustest.Eventually(t, 10*time.Second, "vectors of guide.md", func() bool {
		var ok bool
		rec, ok = vectors(t, conn, e.ModelID(), "guide.md")
		return ok
	})
	d, _ := doc(t, conn, "guide.md")
	if len(d.Chunks) < 3 || len(rec.Chunks) != len(d.Chunks) {
		t.Fatalf("%d vectors for %d chunks", len(rec.Chunks), len(d.Chunks))
	}
	if rec.SHA256 != d.SHA256 || rec.SourceSeq != 1 || rec.Dimensions != dims || rec.Model != "ollama:all-minilm" {
		t.Fatalf("record identity: %+v", rec)
	}
	for i, cv := range rec.Chunks {
		if cv.StartLine != d.Chunks[i].StartLine || cv.EndLine != d.Chunks[i].EndLine {
			t.Errorf("chunk %d lines %d-%d, doc chunk %d-%d", i, cv.StartLine, cv.EndLine, d.Chunks[i].StartLine, d.Chunks[i].EndLine)
		}
		if v, err := events.DecodeVector(cv.Vector); err != nil || len(v) != dims {
			t.Errorf("chunk %d vector: %v %v", i, v, err)
		}
	}
	if !slices.ContainsFunc(srv.Inputs(), func(s string) bool { return strings.HasPrefix(s, "Auth > Login\n## Login\n") }) {
		t.Fatalf("texts embedded lack the heading path: %q", srv.Inputs())
	}
	first := len(srv.Inputs())

	// One section changes: only its chunk is embedded again.
	index(t, idx, 2, upsert("guide.md", strings.Replace(guide, "an hour", "a day", 1)))
	// A copy of the file: nothing is embedded at all.
	index(t, idx, 3, upsert("copy.md", guide))
	bustest.Eventually(t, 10*time.Second, "vectors of the new version and the copy", func() bool {
		rec, ok := vectors(t, conn, e.ModelID(), "guide.md")
		_, copied := vectors(t, conn, e.ModelID(), "copy.md")
		return ok && rec.SourceSeq == 2 && copied
	})
	if got := srv.Inputs()[first:]; len(got) != 1 || !strings.Contains(got[0], "a day") {
		t.Fatalf("embedded again: %q; want only the changed chunk", got)
	}
	if s := c.Stats(); s.Hits == 0 {
		t.Fatalf("cache stats %+v", s)
	}
}

func TestDeletionAndSkipRemoveVectors(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	e := fastOllama(t, srv, "all-minilm")
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	w := start(t, conn, e, fastConfig(openCache(t)))

	index(t, idx, 1, upsert("a.md", guide))
	index(t, idx, 2, upsert("b.md", "# B\nbee\n"))
	bustest.Eventually(t, 10*time.Second, "vectors", func() bool {
		_, a := vectors(t, conn, e.ModelID(), "a.md")
		_, b := vectors(t, conn, e.ModelID(), "b.md")
		return a && b
	})
	index(t, idx, 3, events.FileDeleted{Repo: "r", Path: "a.md"})
	index(t, idx, 4, events.FileSkipped{Repo: "r", Path: "b.md", Size: 9 << 20, Reason: events.SkipTooLarge})
	bustest.Eventually(t, 10*time.Second, "vectors removed", func() bool {
		_, a := vectors(t, conn, e.ModelID(), "a.md")
		_, b := vectors(t, conn, e.ModelID(), "b.md")
		return !a && !b
	})
	// The worker counts a removal after the delete the test saw.
	bustest.Eventually(t, 10*time.Second, "both removals counted", func() bool { return w.Stats().Removed == 2 })
}

func TestRequestForAnotherModelIsDropped(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	e := fastOllama(t, srv, "all-minilm")
	// The indexer still asks for the old model's vectors.
	idx := indexer.New(conn, indexer.Config{EmbedModel: "ollama:old-model"}, nil)
	w := start(t, conn, e, fastConfig(openCache(t)))

	index(t, idx, 1, upsert("a.md", guide))
	bustest.Eventually(t, 10*time.Second, "stale request dropped and acked", func() bool {
		return w.Stats().Stale == 1 && backlog(t, conn, e.ModelID()).Pending == 0
	})
	if _, ok := vectors(t, conn, "ollama:old-model", "a.md"); ok {
		t.Fatal("vectors written for the old model")
	}
	if _, ok := vectors(t, conn, e.ModelID(), "a.md"); ok {
		t.Fatal("a stale request was embedded with this model")
	}
	if n := srv.Requests("/api/embed"); n != 0 {
		t.Fatalf("%d embed calls for a stale request", n)
	}
}

func TestOllamaOutageLeavesIndexingAloneAndDrainsOnRecovery(t *testing.T) {
	faults := []struct {
		name string
		b    ollamatest.Behaviour
	}{
		{"down", ollamatest.Behaviour{Mode: ollamatest.DropConnection}},
		{"500", ollamatest.Behaviour{Mode: ollamatest.ServerError}},
		{"429", ollamatest.Behaviour{Mode: ollamatest.RateLimited, RetryAfter: time.Second}},
		{"slow", ollamatest.Behaviour{Mode: ollamatest.Slow, Delay: 10 * time.Second}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			conn, _ := bustest.Start(t, bus.Settings{})
			srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
			srv.SetBehaviour(f.b)
			e := fastOllama(t, srv, "all-minilm")
			ctx, cancel := context.WithCancel(context.Background())
			idxDone := make(chan error, 1)
			go func() { idxDone <- indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil).Run(ctx) }()
			defer func() {
				cancel()
				if err := <-idxDone; err != nil {
					t.Error(err)
				}
			}()
			start(t, conn, e, fastConfig(openCache(t)))

			const n = 6
			for i := range n {
				ev := upsert(fmt.Sprintf("d%d.md", i), fmt.Sprintf("# Doc %d\nabout thing %d\n", i, i))
				if _, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), events.FileUpsertedMsgID(ev.Repo, ev.Path, ev.SHA256, ev.ModTime), ev); err != nil {
					t.Fatal(err)
				}
			}
			bustest.Eventually(t, 15*time.Second, "every doc record stored while the model is out", func() bool {
				for i := range n {
					if _, ok := doc(t, conn, fmt.Sprintf("d%d.md", i)); !ok {
						return false
					}
				}
				return true
			})
			bustest.Eventually(t, 15*time.Second, "breaker open", func() bool { return e.BreakerState() == resilience.Open })
			rep := backlog(t, conn, e.ModelID())
			if rep.Pending == 0 || rep.Vectors != 0 || rep.Docs != n {
				t.Fatalf("backlog during the outage: %+v", rep)
			}

			srv.SetMode(ollamatest.Healthy)
			bustest.Eventually(t, 20*time.Second, "vectors after recovery and an empty backlog", func() bool {
				rep := backlog(t, conn, e.ModelID())
				return rep.Vectors == n && rep.Pending == 0
			})
		})
	}
}

func TestModelSwitchReembedsInTheBackground(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	old := fastOllama(t, srv, "old-model")
	idx := indexer.New(conn, indexer.Config{EmbedModel: old.ModelID()}, nil)
	c := openCache(t)
	_, stopOld := startStoppable(t, conn, old, fastConfig(c))

	paths := []string{"a.md", "b.md", "c.md"}
	for i, p := range paths {
		index(t, idx, uint64(i+1), upsert(p, fmt.Sprintf("# %s\ncontent of %s\n", p, p)))
	}
	index(t, idx, 4, upsert("gone.md", "# Gone\n"))
	bustest.Eventually(t, 10*time.Second, "old model's vectors", func() bool {
		return backlog(t, conn, old.ModelID()).Vectors == 4
	})
	stopOld()
	// While no worker runs, a file goes: its old-model deletion request
	// waits, and the new model must not keep vectors for it.
	index(t, idx, 5, events.FileDeleted{Repo: "r", Path: "gone.md"})
	kv, _ := conn.JS.KeyValue(context.Background(), events.VectorsBucket)
	stray := events.VectorRecord{Repo: "r", Path: "gone.md", Model: "ollama:new-model", Dimensions: dims, SHA256: strings.Repeat("a", 64), SourceSeq: 4,
		Chunks: []events.ChunkVector{{StartLine: 1, EndLine: 1, Vector: events.EncodeVector(make([]float32, dims))}}}
	data, _ := events.Encode(stray)
	if _, err := kv.Put(context.Background(), events.VectorKey(stray.Model, "r", "gone.md"), data); err != nil {
		t.Fatal(err)
	}

	cfg := fastConfig(c)
	cfg.ReconcileEvery = time.Hour // the pass at start is the one tested
	neu := fastOllama(t, srv, "new-model")
	nw := start(t, conn, neu, cfg)
	bustest.Eventually(t, 15*time.Second, "new model's vectors for every indexed doc", func() bool {
		for _, p := range paths {
			if _, ok := vectors(t, conn, neu.ModelID(), p); !ok {
				return false
			}
		}
		_, stale := vectors(t, conn, neu.ModelID(), "gone.md")
		return !stale
	})
	for _, p := range paths {
		if _, ok := vectors(t, conn, old.ModelID(), p); !ok {
			t.Errorf("old model's vectors of %s were removed; an edge querying with it still uses them", p)
		}
		if _, ok := doc(t, conn, p); !ok {
			t.Errorf("doc record %s gone", p)
		}
	}
	bustest.Eventually(t, 10*time.Second, "backlog drained, stale old-model requests dropped", func() bool {
		return backlog(t, conn, neu.ModelID()).Pending == 0
	})
	if nw.Stats().Stale == 0 {
		t.Fatalf("stats %+v: the old model's deletion request should have been dropped", nw.Stats())
	}

	// A second reconcile finds nothing to do.
	r, err := nw.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Docs != 3 || r.Vectors != 3 || r.Requested != 0 || r.Removals != 0 {
		t.Fatalf("second reconcile: %+v", r)
	}
}

// A daemon restarted with embed requests still queued asks for none of
// them again: the reconciler's first scan waits for the queue to drain,
// and the worker, gated as background work, embeds only while no
// foreground work runs.
func TestRestartWithQueuedRequestsAsksForNothingTwiceAndYieldsToForeground(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	e := fastOllama(t, srv, "all-minilm")
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	paths := []string{"a.md", "b.md", "c.md"}
	for i, p := range paths {
		index(t, idx, uint64(i+1), upsert(p, fmt.Sprintf("# %s\ncontent of %s\n", p, p)))
	}

	gate := priority.New(time.Millisecond)
	end := gate.Begin() // indexing, say, runs when the worker starts
	cfg := fastConfig(openCache(t))
	cfg.ReconcileEvery = time.Hour // the pass at start is the one tested
	cfg.Gate = gate
	w := start(t, conn, e, cfg)
	bustest.Eventually(t, 10*time.Second, "the worker holding requests at the gate", func() bool {
		cons, err := conn.JS.Consumer(context.Background(), events.EmbedStream, events.EmbedderConsumer)
		if err != nil {
			return false
		}
		info, err := cons.Info(context.Background())
		return err == nil && info.NumAckPending > 0
	})
	if n := len(srv.Inputs()); n != 0 {
		t.Fatalf("%d texts embedded while foreground work ran", n)
	}
	if s := w.Stats(); s.Reconciles != 0 || s.Rerequested != 0 {
		t.Fatalf("reconciled with the queue still full: %+v", s)
	}

	end()
	bustest.Eventually(t, 15*time.Second, "vectors of every doc and the start-up reconcile", func() bool {
		for _, p := range paths {
			if _, ok := vectors(t, conn, e.ModelID(), p); !ok {
				return false
			}
		}
		return w.Stats().Reconciles == 1
	})
	if s := w.Stats(); s.Rerequested != 0 || s.Embedded != uint64(len(paths)) {
		t.Fatalf("stats %+v: want every queued request embedded once and none asked for again", s)
	}
}

// The cache keeps one vector per chunk, whatever its number of windows: a
// long chunk is looked up once, a copy of the file embeds nothing, and an
// edit inside a long chunk embeds that chunk's windows again and no other.
func TestCacheKeepsOneVectorPerChunk(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	e := fastOllama(t, srv, "all-minilm")
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	c := openCache(t)
	cfg := fastConfig(c)
	cfg.WindowTokens = 12
	start(t, conn, e, cfg)

	var long strings.Builder
	long.WriteString("# Long\n\n")
	for i := range 12 {
		fmt.Fprintf(&long, "Line %d of the long section says something different.\n", i)
	}
	content := long.String() + "\n# Short\n\nOne line.\n"
	waitSeq := func(path string, seq uint64) events.VectorRecord {
		t.Helper()
		var rec events.VectorRecord
		bustest.Eventually(t, 10*time.Second, "vectors of "+path, func() bool {
			var ok bool
			rec, ok = vectors(t, conn, e.ModelID(), path)
			return ok && rec.SourceSeq == seq
		})
		return rec
	}
	index(t, idx, 1, upsert("a.md", content))
	rec := waitSeq("a.md", 1)
	windows := len(srv.Inputs())
	if len(rec.Chunks) != 2 || windows < 4 {
		t.Fatalf("%d chunks from %d windows; want 2 chunks, the first in several windows", len(rec.Chunks), windows)
	}
	if s := c.Stats(); s.Misses != 2 || s.Hits != 0 {
		t.Fatalf("cache %+v after the first file; want one lookup per chunk", s)
	}

	index(t, idx, 2, upsert("copy.md", content))
	copied := waitSeq("copy.md", 2)
	if n := len(srv.Inputs()); n != windows {
		t.Fatalf("the copy embedded %d texts", n-windows)
	}
	if !slices.Equal(copied.Chunks, rec.Chunks) {
		t.Fatal("a chunk's cached vector differs from the one embedded")
	}

	index(t, idx, 3, upsert("a.md", strings.Replace(content, "Line 5 of", "Line five of", 1)))
	waitSeq("a.md", 3)
	again := srv.Inputs()[windows:]
	if len(again) < 2 {
		t.Fatalf("the edit embedded %q; want every window of the long chunk", again)
	}
	for _, in := range again {
		if !strings.HasPrefix(in, "Long\n") {
			t.Fatalf("a text outside the edited chunk was embedded again: %q", in)
		}
	}
}

// Workers that embed prose only record a code file without vectors, so it
// counts as done, and embed markdown; workers started later that embed
// every file embed the code, found by the reconciler at start, and prose
// already embedded is not embedded again.
func TestCodeLeftOutByProseOnlyWorkersIsEmbeddedByLaterOnes(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	e := fastOllama(t, srv, "all-minilm")
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	c := openCache(t)
	cfg := fastConfig(c)
	cfg.ProseOnly = true
	_, stop := startStoppable(t, conn, e, cfg)

	const code = "package auth\n\n// Login checks a password.\nfunc Login(user, password string) error {\n\treturn nil\n}\n"
	index(t, idx, 1, upsert("guide.md", guide))
	index(t, idx, 2, upsert("auth/login.go", code))
	bustest.Eventually(t, 10*time.Second, "records of both files", func() bool {
		_, prose := vectors(t, conn, e.ModelID(), "guide.md")
		_, code := vectors(t, conn, e.ModelID(), "auth/login.go")
		return prose && code
	})
	rec, _ := vectors(t, conn, e.ModelID(), "auth/login.go")
	if !rec.LeftOut || len(rec.Chunks) != 0 || rec.SourceSeq != 2 {
		t.Fatalf("the code file's record: %+v; want it left out, with no chunks", rec)
	}
	if prose, _ := vectors(t, conn, e.ModelID(), "guide.md"); prose.LeftOut || len(prose.Chunks) == 0 {
		t.Fatalf("the markdown file's record: %+v; want its chunks' vectors", prose)
	}
	if slices.ContainsFunc(srv.Inputs(), func(s string) bool { return strings.Contains(s, "func Login") }) {
		t.Fatalf("the code was embedded: %q", srv.Inputs())
	}
	if b := backlog(t, conn, e.ModelID()); b.Vectors != 2 || b.Pending != 0 {
		t.Fatalf("backlog %+v: both files should count as embedded", b)
	}
	stop()

	before := len(srv.Inputs())
	kv, err := conn.JS.KeyValue(context.Background(), events.VectorsBucket)
	if err != nil {
		t.Fatal(err)
	}
	revision := func() uint64 {
		e, err := kv.Get(context.Background(), events.VectorKey(e.ModelID(), "r", "guide.md"))
		if err != nil {
			t.Fatal(err)
		}
		return e.Revision()
	}
	proseRevision := revision()
	cfg = fastConfig(c)
	cfg.ReconcileEvery = time.Hour // the pass at start is the one tested
	start(t, conn, e, cfg)
	bustest.Eventually(t, 10*time.Second, "the code file embedded", func() bool {
		rec, ok := vectors(t, conn, e.ModelID(), "auth/login.go")
		return ok && !rec.LeftOut && len(rec.Chunks) > 0
	})
	got := srv.Inputs()[before:]
	if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "Overview") || strings.Contains(s, "Tokens expire") }) {
		t.Fatalf("embedded after the switch: %q; want the code's chunks only", got)
	}
	if r := revision(); r != proseRevision {
		t.Fatalf("guide.md's vectors were written again (revision %d, was %d)", r, proseRevision)
	}
}

// TestSplitModelEmbedsProseAndCodeEachWithItsModel: with a prose model and
// a code model joined (embed/split), a markdown file is embedded by the
// prose model alone and a Go file by the code model alone, each record
// one model id wide with the other model's half zero.
func TestSplitModelEmbedsProseAndCodeEachWithItsModel(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	proseSrv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	const codeDims = 4
	codeSrv := ollamatest.NewServer(t, ollamatest.WithDimensions(codeDims))
	e, err := split.New(fastOllama(t, proseSrv, "all-minilm"), fastOllama(t, codeSrv, "code-model"))
	if err != nil {
		t.Fatal(err)
	}
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	start(t, conn, e, fastConfig(openCache(t)))

	const code = "package auth\n\n// Login checks a password.\nfunc Login(user, password string) error {\n\treturn nil\n}\n"
	index(t, idx, 1, upsert("guide.md", guide))
	index(t, idx, 2, upsert("auth/login.go", code))
	var proseRec, codeRec events.VectorRecord
	bustest.Eventually(t, 10*time.Second, "vectors of both files", func() bool {
		var p, c bool
		proseRec, p = vectors(t, conn, e.ModelID(), "guide.md")
		codeRec, c = vectors(t, conn, e.ModelID(), "auth/login.go")
		return p && c
	})
	if e.ModelID() != "ollama:all-minilm+code=ollama:code-model" || proseRec.Model != e.ModelID() {
		t.Fatalf("model ids %q, %q", e.ModelID(), proseRec.Model)
	}
	half := func(rec events.VectorRecord, lo, hi int) (nonzero bool) {
		t.Helper()
		if rec.Dimensions != dims+codeDims || len(rec.Chunks) == 0 {
			t.Fatalf("%s: %d dimensions, %d chunks; want %d and some", rec.Path, rec.Dimensions, len(rec.Chunks), dims+codeDims)
		}
		for _, cv := range rec.Chunks {
			v, err := events.DecodeVector(cv.Vector)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range v[lo:hi] {
				if x != 0 {
					return true
				}
			}
		}
		return false
	}
	if !half(proseRec, 0, dims) || half(proseRec, dims, dims+codeDims) {
		t.Errorf("guide.md's vectors should lie in the prose model's half only")
	}
	if half(codeRec, 0, dims) || !half(codeRec, dims, dims+codeDims) {
		t.Errorf("login.go's vectors should lie in the code model's half only")
	}
	if slices.ContainsFunc(proseSrv.Inputs(), func(s string) bool { return strings.Contains(s, "func Login") }) {
		t.Errorf("the prose model embedded code: %q", proseSrv.Inputs())
	}
	if slices.ContainsFunc(codeSrv.Inputs(), func(s string) bool { return strings.Contains(s, "Tokens expire") }) {
		t.Errorf("the code model embedded prose: %q", codeSrv.Inputs())
	}
}

// embedGuide runs a worker of e until guide.md, indexed, has its vectors,
// stops it, and returns the model's EmbedCost as the bucket then holds it.
func embedGuide(t *testing.T, conn *bus.Conn, e embed.Embedder) events.EmbedCost {
	t.Helper()
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	_, stop := startStoppable(t, conn, e, fastConfig(nil))
	index(t, idx, 1, upsert("guide.md", guide))
	bustest.Eventually(t, 30*time.Second, "vectors of guide.md", func() bool {
		_, ok := vectors(t, conn, e.ModelID(), "guide.md")
		return ok
	})
	stop()
	return recordedCost(t, conn, e.ModelID())
}

// recordedCost is the model's EmbedCost as the bucket holds it.
func recordedCost(t *testing.T, conn *bus.Conn, model string) events.EmbedCost {
	t.Helper()
	kv, err := conn.JS.KeyValue(context.Background(), events.EmbedCostBucket)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := bus.ReadEmbedCost(context.Background(), kv, model)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEmbeddingCostAddsUpOverWorkersAndRestarts(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	e := builtin.New()
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	embedded := func(path string) {
		bustest.Eventually(t, 30*time.Second, "vectors of "+path, func() bool {
			_, ok := vectors(t, conn, e.ModelID(), path)
			return ok
		})
	}
	chunks := func(path string) uint64 {
		d, _ := doc(t, conn, path)
		return uint64(len(d.Chunks))
	}

	w1, stop1 := startStoppable(t, conn, e, fastConfig(nil))
	index(t, idx, 1, upsert("guide.md", guide))
	embedded("guide.md")
	stop1()
	first := recordedCost(t, conn, e.ModelID())
	if want := chunks("guide.md"); first.Chunks != want || first.MeteredChunks != want || first.Texts < want {
		t.Fatalf("after guide.md (%d chunks): %+v", want, first)
	}
	if first.CPUSeconds <= 0 || first.CallSeconds <= 0 || first.Since.IsZero() || first.Updated.Before(first.Since) {
		t.Fatalf("after guide.md: %+v", first)
	}
	if s := w1.Stats().Cost; s.Chunks != first.Chunks || s.CPUSeconds != first.CPUSeconds {
		t.Fatalf("the worker counted %+v, the bucket holds %+v", s, first)
	}

	// Another worker of the model, after a restart: its counts add to the
	// first's.
	_, stop2 := startStoppable(t, conn, e, fastConfig(nil))
	notes := "# Notes\nThe indexer stores each record before it asks for vectors.\n\n## Later\nVectors trail keyword search.\n"
	index(t, idx, 2, upsert("notes.md", notes))
	embedded("notes.md")
	stop2()
	both := recordedCost(t, conn, e.ModelID())
	if want := chunks("guide.md") + chunks("notes.md"); both.Chunks != want || both.MeteredChunks != want {
		t.Fatalf("after both files (%d chunks): %+v", want, both)
	}
	if both.CPUSeconds <= first.CPUSeconds || !both.Since.Equal(first.Since) {
		t.Fatalf("first %+v, then %+v", first, both)
	}

	rep, err := status.CollectWith(context.Background(), conn.JS, status.Options{EmbedModel: e.ModelID()})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out, status.PrintOptions{})
	if c := rep.Embeddings.Cost; c == nil || c.Chunks != both.Chunks {
		t.Fatalf("status reports cost %+v", c)
	}
	if !strings.Contains(out.String(), "CPU s per 10,000 chunks") {
		t.Fatalf("cue status says nothing of CPU time:\n%s", out.String())
	}
}

func TestEmbeddingCostOfAModelServerIsItsWaitNotOurCPU(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	e := fastOllama(t, srv, "all-minilm")
	c := embedGuide(t, conn, e)
	d, _ := doc(t, conn, "guide.md")
	if c.Chunks != uint64(len(d.Chunks)) || c.MeteredChunks != 0 || c.CPUSeconds != 0 || c.CallSeconds <= 0 {
		t.Fatalf("a model server's cost: %+v", c)
	}
	rep, err := status.CollectWith(context.Background(), conn.JS, status.Options{EmbedModel: e.ModelID()})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out, status.PrintOptions{})
	if !strings.Contains(out.String(), "waiting on the model, whose CPU time is its server's") {
		t.Fatalf("cue status:\n%s", out.String())
	}
}
