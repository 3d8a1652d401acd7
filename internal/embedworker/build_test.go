package embedworker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/ollamatest"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestSplitKeepsWindowsUnderTheLimit(t *testing.T) {
	var body strings.Builder
	for i := range 60 {
		fmt.Fprintf(&body, "line %d says something about the login flow\n", i)
	}
	prefix := "Auth > Login\n"
	parts := splitLines(prefix, body.String(), 100)
	if len(parts) < 2 {
		t.Fatalf("%d windows for a body of %d tokens", len(parts), tokens.Count(body.String()))
	}
	var joined strings.Builder
	for _, p := range parts {
		if !strings.HasPrefix(p, prefix) {
			t.Errorf("window without the heading path: %q", p)
		}
		if n := tokens.Count(p); n > 100 {
			t.Errorf("window of %d tokens", n)
		}
		joined.WriteString(strings.TrimPrefix(p, prefix) + "\n")
	}
	if joined.String() != body.String() {
		t.Fatal("windows do not add up to the body")
	}
	if got := splitLines(prefix, "short\n", 100); len(got) != 1 || got[0] != prefix+"short\n" {
		t.Fatalf("a short body is one text: %q", got)
	}
	if got := splitLines("", body.String(), 0); len(got) != 1 {
		t.Fatal("no limit keeps the body whole")
	}
}

func TestMeanIsNormalised(t *testing.T) {
	v := mean([][]float32{{1, 0}, {0, 1}})
	if math.Abs(float64(v[0])-math.Sqrt2/2) > 1e-6 || math.Abs(float64(v[1])-math.Sqrt2/2) > 1e-6 {
		t.Fatalf("mean = %v", v)
	}
}

func TestLargeFileKeepsItsRecordUnderTheLimit(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(64))
	e := fastOllama(t, srv, "all-minilm")
	idx := indexer.New(conn, indexer.Config{EmbedModel: e.ModelID()}, nil)
	cfg := fastConfig(openCache(t))
	cfg.MaxRecordBytes = 4 << 10
	start(t, conn, e, cfg)

	var md strings.Builder
	for i := range 40 {
		fmt.Fprintf(&md, "# Section %d\nText of section %d.\n\n", i, i)
	}
	index(t, idx, 1, upsert("big.md", md.String()))
	var rec events.VectorRecord
	bustest.Eventually(t, 10*time.Second, "vectors of big.md", func() bool {
		var ok bool
		rec, ok = vectors(t, conn, e.ModelID(), "big.md")
		return ok
	})
	d, _ := doc(t, conn, "big.md")
	data, _ := events.Encode(rec)
	if len(data) > cfg.MaxRecordBytes {
		t.Fatalf("record of %d bytes, limit %d", len(data), cfg.MaxRecordBytes)
	}
	if rec.ChunksOmitted == 0 || len(rec.Chunks)+rec.ChunksOmitted != len(d.Chunks) {
		t.Fatalf("%d chunks kept + %d omitted, doc has %d", len(rec.Chunks), rec.ChunksOmitted, len(d.Chunks))
	}
	if rec.Chunks[0].StartLine != d.Chunks[0].StartLine {
		t.Fatal("the first chunks are the ones kept")
	}
}

func TestBlobContentIsEmbeddedAndAMissingBlobIsPermanent(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	e := fastOllama(t, srv, "all-minilm")
	w, err := New(conn, e, fastConfig(openCache(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	obs, _ := conn.JS.ObjectStore(ctx, events.BlobsBucket)
	sha := events.SHA256Hex([]byte(guide))
	if _, err := obs.PutBytes(ctx, sha, []byte(guide)); err != nil {
		t.Fatal(err)
	}
	idx := indexer.New(conn, indexer.Config{}, nil)
	ev := events.FileUpserted{Repo: "r", Path: "blob.md", SHA256: sha, Size: int64(len(guide)), Blob: sha}
	index(t, idx, 1, ev)
	req := events.EmbedRequest{Repo: "r", Path: "blob.md", Model: e.ModelID(), SHA256: sha, SourceSeq: 1}
	if err := w.Handle(ctx, events.Envelope{Event: req}); err != nil {
		t.Fatal(err)
	}
	if rec, ok := vectors(t, conn, e.ModelID(), "blob.md"); !ok || len(rec.Chunks) < 3 {
		t.Fatalf("vectors of a blob document: %+v %v", rec, ok)
	}

	index(t, idx, 2, events.FileUpserted{Repo: "r", Path: "blob2.md", SHA256: sha, Size: int64(len(guide)), Blob: sha})
	if err := obs.Delete(ctx, sha); err != nil {
		t.Fatal(err)
	}
	req.Path, req.SourceSeq = "blob2.md", 2
	if err := w.Handle(ctx, events.Envelope{Event: req}); !errors.Is(err, bus.ErrPermanent) {
		t.Fatalf("missing blob: err = %v, want a permanent error (dead letter)", err)
	}
}

func TestConcurrentReconcilersPublishEachRequestOnce(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(dims))
	idx := indexer.New(conn, indexer.Config{}, nil) // no requests of its own
	for i := range 5 {
		index(t, idx, uint64(i+1), upsert(fmt.Sprintf("d%d.md", i), fmt.Sprintf("# D%d\n", i)))
	}
	var ws []*Service
	for range 3 {
		w, err := New(conn, fastOllama(t, srv, "all-minilm"), fastConfig(nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	errs := make(chan error, len(ws))
	for _, w := range ws {
		go func() {
			r, err := w.Reconcile(context.Background())
			if err == nil && (r.Docs != 5 || r.Requested != 5) {
				err = fmt.Errorf("reconcile: %+v", r)
			}
			errs <- err
		}()
	}
	for range ws {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st, err := conn.JS.Stream(context.Background(), events.EmbedStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 5 {
		t.Fatalf("%d requests queued by three reconcilers, want 5", info.State.Msgs)
	}
}

// TestWindowsFollowTheModelOfEachKind: the built-in model reads 128
// tokens, so its texts are cut into windows, also as a split model's
// prose model; a static or Ollama model's are not, prose or code.
func TestWindowsFollowTheModelOfEachKind(t *testing.T) {
	for _, c := range []struct {
		model       string
		set         int
		prose, code int
	}{
		{builtin.ModelID, 0, 100, 100},
		{"static:code", 0, 0, 0},
		{builtin.ModelID + "+code=static:code", 0, 100, 0},
		{"ollama:all-minilm+code=" + builtin.ModelID, 0, 0, 100},
		{builtin.ModelID + "+code=static:code", 12, 12, 12},
	} {
		s := &Service{model: c.model, cfg: Config{WindowTokens: c.set}}
		if p, k := s.windowTokens(true), s.windowTokens(false); p != c.prose || k != c.code {
			t.Errorf("%s (WindowTokens %d): windows of %d tokens for prose, %d for code; want %d and %d", c.model, c.set, p, k, c.prose, c.code)
		}
	}
}
