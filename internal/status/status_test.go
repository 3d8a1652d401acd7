package status

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
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

func TestMemoriesAndBudget(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	mems, _ := conn.JS.KeyValue(ctx, events.MemoriesBucket)
	for _, m := range []struct{ repo, content string }{{"app", "Use a worker pool"}, {"app", "Keep offsets in Badger"}, {"web", "Prefer server-side rendering"}} {
		if _, err := mems.Put(ctx, events.MemoryKey(m.repo, memory.Hash(m.content)), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	batch := events.TranscriptBatch{Repo: "app", Session: "s1", Source: "/t.jsonl", Format: events.TranscriptClaudeCode, EndOffset: 10}
	if _, err := bus.PublishEvent(ctx, conn.JS, events.TranscriptSubject("app"), events.TranscriptBatchMsgID("app", batch.StreamKey(), 0), batch); err != nil {
		t.Fatal(err)
	}
	budget, _ := conn.JS.KeyValue(ctx, events.BudgetBucket)
	st, _ := json.Marshal(events.BudgetState{SpentMicros: 250_000, LimitMicros: 1_000_000, Calls: 5, Refused: 2})
	if _, err := budget.Put(ctx, events.BudgetKey(time.Now()), st); err != nil {
		t.Fatal(err)
	}

	rep, err := Collect(ctx, conn.JS)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Memories
	if m == nil || m.Total != 3 || m.ByRepo["app"] != 2 || m.ByRepo["web"] != 1 || m.Pending != 1 || m.Budget == nil || m.Budget.Calls != 5 {
		t.Fatalf("memories: %+v", m)
	}
	var out bytes.Buffer
	rep.Print(&out)
	printed := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"memories 3 (app 2, web 1), 1 transcript batches pending", "LLM spend today $0.2500 of $1.00 (25%), 5 calls, 2 refused by the budget"} {
		if !strings.Contains(printed, want) {
			t.Fatalf("printed output lacks %q:\n%s", want, out.String())
		}
	}
}
