package status

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// putRecord stores ev, encoded, under key in bucket.
func putRecord(t *testing.T, conn *bus.Conn, bucket, key string, ev events.Event) {
	t.Helper()
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	data, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
}

func TestEmbeddingBacklog(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	sha := strings.Repeat("a", 64)
	for i, p := range []string{"a.md", "b.md", "c.md"} {
		putRecord(t, conn, events.DocsBucket, events.DocKey("r", p), events.DocRecord{Repo: "r", Path: p, SHA256: sha, SourceSeq: uint64(i + 1), Content: "x"})
	}
	put := func(model, path string) {
		putRecord(t, conn, events.VectorsBucket, events.VectorKey(model, "r", path), events.VectorRecord{Repo: "r", Path: path, Model: model, SHA256: sha, SourceSeq: 1})
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
	rep.Print(&out, PrintOptions{})
	if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), "vectors 1 of 3 documents (33 %), 2 pending: rate not measured (builtin:use-lite)") {
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

// Records of files the prose-only workers left to keyword search are done
// embed work but hold no vectors: the report says how many, rather than
// count them as embedded.
func TestLeftOutRecordsAreNotCountedAsEmbedded(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	sha := strings.Repeat("a", 64)
	const model = "builtin:use-lite"
	for i, p := range []string{"a.md", "main.go", "util.go"} {
		putRecord(t, conn, events.DocsBucket, events.DocKey("r", p), events.DocRecord{Repo: "r", Path: p, SHA256: sha, SourceSeq: uint64(i + 1), Content: "x"})
		rec := events.VectorRecord{Repo: "r", Path: p, Model: model, Dimensions: 4, SHA256: sha, SourceSeq: uint64(i + 1), LeftOut: p != "a.md"}
		if !rec.LeftOut {
			rec.Chunks = []events.ChunkVector{{Vector: events.EncodeVector([]float32{1, 0, 0, 0})}}
		}
		putRecord(t, conn, events.VectorsBucket, events.VectorKey(model, "r", p), rec)
	}
	rep, err := CollectWith(ctx, conn.JS, Options{EmbedModel: model, CountLeftOut: true})
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.Embeddings; e == nil || e.Vectors != 3 || e.LeftOut != 2 {
		t.Fatalf("embeddings: %+v, want 3 records of which 2 left out", e)
	}
	var out bytes.Buffer
	rep.Print(&out, PrintOptions{})
	if got := strings.Join(strings.Fields(out.String()), " "); !strings.Contains(got, "vectors 3 of 3 documents (100 %), 2 of them not embedded (not prose") {
		t.Fatalf("printed:\n%s", out.String())
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
	rep.Print(&out, PrintOptions{})
	printed := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"memories 3 (app 2, web 1), 1 transcript batches pending", "LLM spend today $0.2500 of $1.00 (25%), 5 calls, 2 refused by the budget"} {
		if !strings.Contains(printed, want) {
			t.Fatalf("printed output lacks %q:\n%s", want, out.String())
		}
	}
}

// putWithSummary writes data into cue_docs as rec's entry with rec's
// summary headers, as the indexer does.
func putWithSummary(t *testing.T, conn *bus.Conn, rec events.DocRecord, data []byte) {
	t.Helper()
	msg := nats.NewMsg(events.DocsSubject(events.DocKey(rec.Repo, rec.Path)))
	msg.Data = data
	for name, v := range rec.Summary().Headers() {
		msg.Header.Set(name, v)
	}
	if _, err := conn.JS.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// Status counts from the entries' summary headers: an entry whose headers
// say all it counts is not read (a value that no longer decodes is the
// edge's to find), and one without them is read whole, and named when it
// does not decode.
func TestStatusCountsFromSummaryHeaders(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	rec := events.DocRecord{Repo: "r", Path: "a.md", SHA256: strings.Repeat("b", 64), Kind: events.DocMarkdown, Tokens: 42,
		Warnings: []string{"frontmatter: line 2:\n\tbad"}}
	putWithSummary(t, conn, rec, []byte("not a record"))
	docs, _ := conn.JS.KeyValue(ctx, events.DocsBucket)
	if _, err := docs.Put(ctx, events.DocKey("r", "old.md"), []byte("{broken")); err != nil {
		t.Fatal(err)
	}
	rep, err := Collect(ctx, conn.JS)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Repos) != 1 || rep.Repos[0].Indexed != 1 || rep.Repos[0].Tokens != 42 || rep.Repos[0].ByKind["markdown"] != 1 ||
		len(rep.Repos[0].Warnings) != 1 || rep.Repos[0].Warnings[0].Reason != rec.Warnings[0] {
		t.Fatalf("repos %+v", rep.Repos)
	}
	if len(rep.Undecodable) != 1 || !strings.HasPrefix(rep.Undecodable[0], events.DocKey("r", "old.md")+": ") {
		t.Fatalf("undecodable %q, want the entry without headers alone", rep.Undecodable)
	}
}

// pipelineBehind is a repo half indexed: 5 documents, 10 skipped files, 5
// with warnings; a scan that found 30 files and has published 25; and 3
// file events waiting for an indexer that does not run.
func pipelineBehind(t *testing.T) *bus.Conn {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	docs, _ := conn.JS.KeyValue(ctx, events.DocsBucket)
	n := 0
	put := func(rec events.DocRecord) {
		rec.Repo = "site"
		data, err := events.Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		// Every other entry carries its summary in headers, as the
		// indexer writes them; the others are read whole, as entries an
		// earlier release wrote.
		if n++; n%2 == 0 {
			putWithSummary(t, conn, rec, data)
			return
		}
		if _, err := docs.Put(ctx, events.DocKey(rec.Repo, rec.Path), data); err != nil {
			t.Fatal(err)
		}
	}
	sha := strings.Repeat("a", 64)
	for i := range 5 {
		rec := events.DocRecord{Path: fmt.Sprintf("content/p%d.md", i), SHA256: sha, Kind: events.DocMarkdown, Content: "x", Tokens: 1000}
		if i < 4 {
			rec.Warnings = []string{fmt.Sprintf("frontmatter: line %d: mapping values are not allowed here", i+2)}
		} else {
			rec.Warnings = []string{"invalid UTF-8 replaced with U+FFFD"}
		}
		put(rec)
	}
	for _, c := range "abcdefgh" {
		put(events.DocRecord{Path: fmt.Sprintf("static/img/%c.png", c), Skip: &events.Skip{Reason: events.SkipBinary, Detail: "NUL byte"}})
	}
	for _, p := range []string{"data/big.json", "data/huge.json"} {
		put(events.DocRecord{Path: p, Skip: &events.Skip{Reason: events.SkipTooLarge, Detail: "9 MiB"}})
	}
	scans, _ := conn.JS.KeyValue(ctx, events.ScansBucket)
	b, _ := json.Marshal(events.ScanProgress{Repo: "site", Files: 30, Handled: 25, Scanning: true})
	if _, err := scans.Put(ctx, "site", b); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ev := events.FileUpserted{Repo: "site", Path: fmt.Sprintf("content/new%d.md", i), SHA256: sha, Content: "x", ModTime: time.Unix(int64(i), 0)}
		if _, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("site"), events.FileUpsertedMsgID("site", ev.Path, sha, ev.ModTime), ev); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

func TestStatusLeadsWithTotalsAndSummarisesNotes(t *testing.T) {
	conn := pipelineBehind(t)
	rep, err := CollectWith(context.Background(), conn.JS, Options{RateWindow: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Files
	if f == nil || f.Seen != 30 || f.Indexed != 5 || f.Skipped != 10 || f.Pending != 5+3 || !f.Scanning {
		t.Fatalf("files: %+v", f)
	}
	// Nobody indexes: a rate of 0 was measured, and no ETA.
	if f.Rate == nil || *f.Rate != 0 || f.ETASeconds != nil {
		t.Fatalf("rate %v, eta %v; want 0 and none", f.Rate, f.ETASeconds)
	}

	var out bytes.Buffer
	rep.Print(&out, PrintOptions{})
	text := out.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if norm(lines[0]) != "files 30 seen, 5 indexed, 10 skipped, 8 pending (a scan is still publishing)" ||
		norm(lines[1]) != "indexing none done in the last 1s" {
		t.Errorf("the report does not lead with the totals:\n%s", text)
	}
	for _, want := range []string{
		"repo site 30 seen, 5 indexed (markdown 5), 5,000 tokens, 10 skipped, 5 with warnings",
		"skipped binary 8: static/img/a.png, static/img/b.png, static/img/c.png and 5 more",
		"skipped too_large 2: data/big.json, data/huge.json",
		"warnings frontmatter 4: content/p0.md, content/p1.md, content/p2.md and 1 more",
		"warnings invalid UTF-8 replaced with U+FFFD 1: content/p4.md",
		"(cue status --verbose lists every skipped file and warning; --json has everything)",
	} {
		if !strings.Contains(norm(text), want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "static/img/h.png") || len(lines) > 20 {
		t.Errorf("the summary lists every file (%d lines):\n%s", len(lines), text)
	}

	out.Reset()
	rep.Print(&out, PrintOptions{Verbose: true})
	verbose := norm(out.String())
	for _, want := range []string{"skipped static/img/h.png binary NUL byte", "warning content/p3.md frontmatter: line 5: mapping values are not allowed here"} {
		if !strings.Contains(verbose, want) {
			t.Errorf("--verbose lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(verbose, "--verbose lists") {
		t.Errorf("--verbose still points to --verbose:\n%s", out.String())
	}

	b, _ := json.Marshal(rep)
	if !strings.Contains(string(b), `"files":{"seen":30,"indexed":5,"skipped":10,"pending":8,"scanning":true,"rate_per_second":0,`) ||
		!strings.Contains(string(b), `"static/img/h.png"`) {
		t.Errorf("json: %s", b)
	}
}

// TestRateAndETA: files an indexer finishes during the window give the
// rate, and the pending files at that rate the ETA.
func TestRateAndETA(t *testing.T) {
	conn := pipelineBehind(t)
	ctx := context.Background()
	rep, err := CollectWith(ctx, conn.JS, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files.Rate != nil {
		t.Fatalf("rate measured without a window: %v", *rep.Files.Rate)
	}
	// An indexer takes two events.
	cons, err := conn.JS.Consumer(ctx, events.IngestStream, events.IndexerConsumer)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(2)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("fetched %d events", n)
	}
	if err := measureRates(ctx, conn.JS, &rep, time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	f := rep.Files
	if f.Rate == nil || *f.Rate <= 0 || f.ETASeconds == nil || *f.ETASeconds != float64(f.Pending) / *f.Rate {
		t.Fatalf("rate %v, eta %v for %d pending", f.Rate, f.ETASeconds, f.Pending)
	}
	var out bytes.Buffer
	rep.Print(&out, PrintOptions{})
	if !strings.Contains(out.String(), "files/s over the last 1s, ETA ") {
		t.Errorf("no rate and ETA:\n%s", out.String())
	}
}

// Files added under a running daemon are indexed as they come, and the
// last scan's count knows nothing of them: seen is never fewer than the
// files indexed and skipped.
func TestSeenCountsFilesIndexedSinceTheScan(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	docs, _ := conn.JS.KeyValue(ctx, events.DocsBucket)
	recs := []events.DocRecord{{Path: "img/a.png", Skip: &events.Skip{Reason: events.SkipBinary}}}
	for i := range 4 {
		recs = append(recs, events.DocRecord{Path: fmt.Sprintf("docs/p%d.md", i), SHA256: strings.Repeat("a", 64), Kind: events.DocMarkdown, Content: "x"})
	}
	for _, rec := range recs {
		rec.Repo = "site"
		data, err := events.Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := docs.Put(ctx, events.DocKey(rec.Repo, rec.Path), data); err != nil {
			t.Fatal(err)
		}
	}
	scans, _ := conn.JS.KeyValue(ctx, events.ScansBucket)
	b, _ := json.Marshal(events.ScanProgress{Repo: "site", Files: 2, Handled: 2})
	if _, err := scans.Put(ctx, "site", b); err != nil {
		t.Fatal(err)
	}
	rep, err := Collect(ctx, conn.JS)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Repos) != 1 || rep.Repos[0].Seen != 5 || rep.Files.Seen != 5 {
		t.Fatalf("seen: repos %+v, files %+v; want 5 (4 indexed, 1 skipped, where the scan found 2)", rep.Repos, rep.Files)
	}
}
