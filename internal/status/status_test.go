package status

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestEmbeddingBacklog(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	docs, _ := conn.JS.KeyValue(ctx, events.DocsBucket)
	vecs, _ := conn.JS.KeyValue(ctx, events.VectorsBucket)
	sha := strings.Repeat("a", 64)
	for i, p := range []string{"a.md", "b.md", "c.md"} {
		data, err := events.Encode(events.DocRecord{Repo: "r", Path: p, SHA256: sha, SourceSeq: uint64(i + 1), Content: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := docs.Put(ctx, events.DocKey("r", p), data); err != nil {
			t.Fatal(err)
		}
	}
	put := func(model, path string) {
		data, err := events.Encode(events.VectorRecord{Repo: "r", Path: path, Model: model, SHA256: sha, SourceSeq: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := vecs.Put(ctx, events.VectorKey(model, "r", path), data); err != nil {
			t.Fatal(err)
		}
	}
	put("builtin:use-lite", "a.md")
	put("ollama:all-minilm", "a.md")
	put("ollama:all-minilm", "b.md")
	for _, p := range []string{"b.md", "c.md"} {
		req := events.EmbedRequest{Repo: "r", Path: p, Model: "builtin:use-lite", SHA256: sha, SourceSeq: 2}
		if _, err := bus.PublishEvent(ctx, conn.JS, events.EmbedSubject("r"), events.EmbedRequestMsgID(req), req); err != nil {
			t.Fatal(err)
		}
	}

	rep, err := CollectWith(ctx, conn.JS, Options{EmbedModel: "builtin:use-lite"})
	if err != nil {
		t.Fatal(err)
	}
	e := rep.Embeddings
	if e == nil || e.Model != "builtin:use-lite" || e.Pending != 2 || e.Docs != 3 || e.Vectors != 1 || e.ByModel["ollama:all-minilm"] != 2 {
		t.Fatalf("embeddings: %+v", e)
	}
	var out bytes.Buffer
	rep.Print(&out)
	if !strings.Contains(out.String(), "embeddings (builtin:use-lite)  1 of 3 documents have vectors, 2 requests pending") {
		t.Fatalf("printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "consumer embedder") {
		t.Fatalf("the embedder consumer's lag is not printed:\n%s", out.String())
	}
	b, _ := json.Marshal(rep)
	if !strings.Contains(string(b), `"embeddings":{"model":"builtin:use-lite","pending":2,"docs":3,"vectors":1`) {
		t.Fatalf("json: %s", b)
	}

	// Without a configured model, two models with vectors name none.
	rep, err = Collect(ctx, conn.JS)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Embeddings.Model != "" || rep.Embeddings.Vectors != 0 {
		t.Fatalf("no model given: %+v", rep.Embeddings)
	}
}
