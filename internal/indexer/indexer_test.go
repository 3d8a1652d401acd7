package indexer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func upsert(path, content string) events.FileUpserted {
	return events.FileUpserted{Repo: "r", Path: path, SHA256: events.SHA256Hex([]byte(content)), Size: int64(len(content)), ModTime: time.Unix(1, 0), Content: content}
}

func stored(t *testing.T, conn *bus.Conn, path string) (events.DocRecord, bool) {
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

func TestUpsertWritesParsedRecord(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	md := "---\ntitle: Auth\n---\n# Login\ntext\n## Tokens\nmore\n"
	if err := s.Handle(context.Background(), events.Envelope{StreamSeq: 3, Event: upsert("docs/auth.md", md)}); err != nil {
		t.Fatal(err)
	}
	rec, ok := stored(t, conn, "docs/auth.md")
	if !ok {
		t.Fatal("no record written")
	}
	if rec.SourceSeq != 3 || rec.SHA256 != events.SHA256Hex([]byte(md)) || rec.Content != md {
		t.Fatalf("record identity: %+v", rec)
	}
	if len(rec.Headings) != 2 || rec.Headings[0].Text != "Login" || rec.Headings[1].Line != 6 {
		t.Fatalf("headings: %+v", rec.Headings)
	}
	if rec.Title != "Auth" || rec.Tokens == 0 || rec.Kind != events.DocMarkdown {
		t.Fatalf("derived fields: title %q tokens %d kind %s", rec.Title, rec.Tokens, rec.Kind)
	}
}

func TestOlderEventNeverOverwritesNewer(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	ctx := context.Background()
	s.Handle(ctx, events.Envelope{StreamSeq: 10, Event: upsert("a.md", "# New\n")})
	// A redelivery of an older event, delivered late.
	if err := s.Handle(ctx, events.Envelope{StreamSeq: 4, Event: upsert("a.md", "# Old\n")}); err != nil {
		t.Fatal(err)
	}
	rec, _ := stored(t, conn, "a.md")
	if rec.Content != "# New\n" || rec.SourceSeq != 10 {
		t.Fatalf("older event overwrote newer: %+v", rec)
	}
	// The same event again is a no-op too.
	if err := s.Handle(ctx, events.Envelope{StreamSeq: 10, Event: upsert("a.md", "# New\n")}); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteLeavesTombstoneThatBlocksLateUpsert(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	ctx := context.Background()
	s.Handle(ctx, events.Envelope{StreamSeq: 1, Event: upsert("a.md", "# A\n")})
	s.Handle(ctx, events.Envelope{StreamSeq: 5, Event: events.FileDeleted{Repo: "r", Path: "a.md"}})
	s.Handle(ctx, events.Envelope{StreamSeq: 2, Event: upsert("a.md", "# A2\n")})
	rec, _ := stored(t, conn, "a.md")
	if !rec.Deleted || rec.SourceSeq != 5 {
		t.Fatalf("late upsert revived a deleted file: %+v", rec)
	}
	s.Handle(ctx, events.Envelope{StreamSeq: 7, Event: upsert("a.md", "# Back\n")})
	if rec, _ := stored(t, conn, "a.md"); rec.Deleted || rec.Content != "# Back\n" {
		t.Fatalf("re-created file: %+v", rec)
	}
}

// First is only a hint: wherever the key already has an entry, the
// record is written by the same rules as without it.
func TestFirstHintKeepsTheWriteRules(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	ctx := context.Background()
	first := func(path, content string) events.FileUpserted {
		ev := upsert(path, content)
		ev.First = true
		return ev
	}
	handle := func(seq uint64, ev events.Event) {
		t.Helper()
		if err := s.Handle(ctx, events.Envelope{StreamSeq: seq, Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	handle(10, first("a.md", "# New\n"))
	handle(4, first("a.md", "# Old\n"))
	handle(10, first("a.md", "# New\n"))
	if rec, _ := stored(t, conn, "a.md"); rec.Content != "# New\n" || rec.SourceSeq != 10 {
		t.Fatalf("a hinted older event overwrote newer: %+v", rec)
	}
	handle(12, first("a.md", "# Changed\n"))
	if rec, _ := stored(t, conn, "a.md"); rec.Content != "# Changed\n" || len(rec.Changed) != 1 {
		t.Fatalf("a hinted change is written with its change time: %+v", rec)
	}

	handle(5, events.FileDeleted{Repo: "r", Path: "b.md"})
	handle(2, first("b.md", "# Late\n"))
	if rec, _ := stored(t, conn, "b.md"); !rec.Deleted || rec.SourceSeq != 5 {
		t.Fatalf("a hinted late upsert revived a deleted file: %+v", rec)
	}

	// After the bucket's own delete marker (the key's last entry).
	kv, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	handle(20, first("c.md", "# C\n"))
	if err := kv.Delete(ctx, events.DocKey("r", "c.md")); err != nil {
		t.Fatal(err)
	}
	handle(21, first("c.md", "# C again\n"))
	if rec, ok := stored(t, conn, "c.md"); !ok || rec.Content != "# C again\n" {
		t.Fatalf("after a delete marker: %+v %v", rec, ok)
	}

	sk := events.FileSkipped{Repo: "r", Path: "a.md", Size: 1 << 30, Reason: events.SkipTooLarge, First: true}
	handle(11, sk)
	if rec, _ := stored(t, conn, "a.md"); rec.Skip != nil || rec.SourceSeq != 12 {
		t.Fatalf("a hinted older skip overwrote newer: %+v", rec)
	}

	var wg sync.WaitGroup
	for seq := 1; seq <= 40; seq++ {
		wg.Go(func() {
			if err := s.Handle(ctx, events.Envelope{StreamSeq: uint64(100 + seq), Event: first("hot.md", fmt.Sprintf("# v%d\n", seq))}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if rec, _ := stored(t, conn, "hot.md"); rec.SourceSeq != 140 || rec.Content != "# v40\n" {
		t.Fatalf("after concurrent hinted writes: seq %d content %q", rec.SourceSeq, rec.Content)
	}
}

func TestSkipIsRecorded(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	s.Handle(context.Background(), events.Envelope{StreamSeq: 1, Event: events.FileSkipped{Repo: "r", Path: "big.bin", Size: 50 << 20, Reason: events.SkipTooLarge, Detail: "52428800 bytes > 8388608"}})
	rec, _ := stored(t, conn, "big.bin")
	if rec.Skip == nil || rec.Skip.Reason != events.SkipTooLarge {
		t.Fatalf("skip not recorded: %+v", rec)
	}
}

func TestConcurrentWritersHighestSequenceWins(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	var wg sync.WaitGroup
	for seq := 1; seq <= 40; seq++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Handle(context.Background(), events.Envelope{StreamSeq: uint64(seq), Event: upsert("hot.md", fmt.Sprintf("# v%d\n", seq))}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if rec, _ := stored(t, conn, "hot.md"); rec.SourceSeq != 40 || rec.Content != "# v40\n" {
		t.Fatalf("after concurrent writes: seq %d content %q", rec.SourceSeq, rec.Content)
	}
}

func TestBlobContentAndOversizeRecord(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{MaxRecordBytes: 64 << 10}, nil)
	ctx := context.Background()
	big := strings.Repeat("# Section\nsome words here\n", 20000)
	sha := events.SHA256Hex([]byte(big))
	obs, _ := conn.JS.ObjectStore(ctx, events.BlobsBucket)
	if _, err := obs.PutBytes(ctx, sha, []byte(big)); err != nil {
		t.Fatal(err)
	}
	ev := events.FileUpserted{Repo: "r", Path: "big.md", SHA256: sha, Size: int64(len(big)), Blob: sha}
	if err := s.Handle(ctx, events.Envelope{StreamSeq: 1, Event: ev}); err != nil {
		t.Fatal(err)
	}
	rec, _ := stored(t, conn, "big.md")
	if rec.Blob != sha || rec.Content != "" || len(rec.Headings) == 0 {
		t.Fatalf("blob record: blob %q content %d headings %d", rec.Blob, len(rec.Content), len(rec.Headings))
	}
	if len(rec.Warnings) == 0 || !strings.Contains(strings.Join(rec.Warnings, ";"), "trimmed") {
		t.Fatalf("an oversize record must say it was trimmed: %v", rec.Warnings)
	}

	missing := ev
	missing.Path, missing.Blob, missing.SHA256 = "gone.md", strings.Repeat("0", 64), strings.Repeat("0", 64)
	if err := s.Handle(ctx, events.Envelope{StreamSeq: 2, Event: missing}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing blob: %v", err)
	}
}

func TestRunIndexesPublishedEvents(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(conn, Config{}, nil).Run(ctx) }()
	for i := range 20 {
		ev := upsert(fmt.Sprintf("d%d.md", i), fmt.Sprintf("# Doc %d\n", i))
		if _, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), events.FileUpsertedMsgID(ev.Repo, ev.Path, ev.SHA256, ev.ModTime), ev); err != nil {
			t.Fatal(err)
		}
	}
	bustest.Eventually(t, 10*time.Second, "20 records", func() bool {
		_, ok := stored(t, conn, "d19.md")
		if !ok {
			return false
		}
		for i := range 20 {
			if _, ok := stored(t, conn, fmt.Sprintf("d%d.md", i)); !ok {
				return false
			}
		}
		return true
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// embedRequests returns the EmbedRequests queued on CUE_EMBED, in order.
func embedRequests(t *testing.T, conn *bus.Conn) []events.EmbedRequest {
	t.Helper()
	ctx := context.Background()
	st, err := conn.JS.Stream(ctx, events.EmbedStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.EmbedRequest
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		ev, err := events.Decode(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		req := ev.(events.EmbedRequest)
		if m.Subject != events.EmbedSubject(req.Repo) || m.Header.Get("Nats-Msg-Id") != events.EmbedRequestMsgID(req) {
			t.Fatalf("request %+v on %s with id %q", req, m.Subject, m.Header.Get("Nats-Msg-Id"))
		}
		out = append(out, req)
	}
	return out
}

func TestStoredRecordsAreFollowedByEmbedRequests(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{EmbedModel: "builtin:use-lite"}, nil)
	ctx := context.Background()
	ev := upsert("a.md", "# A\ntext\n")
	steps := []events.Envelope{
		{StreamSeq: 3, Event: ev},
		{StreamSeq: 3, Event: ev},                        // a redelivery: the same request, dropped as a duplicate
		{StreamSeq: 2, Event: upsert("a.md", "# Old\n")}, // older: no record, no request
		{StreamSeq: 4, Event: events.FileSkipped{Repo: "r", Path: "b.bin", Size: 9, Reason: events.SkipBinary}},
		{StreamSeq: 5, Event: events.FileDeleted{Repo: "r", Path: "a.md"}},
	}
	for _, env := range steps {
		if err := s.Handle(ctx, env); err != nil {
			t.Fatal(err)
		}
	}
	got := embedRequests(t, conn)
	want := []events.EmbedRequest{
		{Repo: "r", Path: "a.md", Model: "builtin:use-lite", SHA256: ev.SHA256, SourceSeq: 3},
		{Repo: "r", Path: "b.bin", Model: "builtin:use-lite", SourceSeq: 4, Deleted: true},
		{Repo: "r", Path: "a.md", Model: "builtin:use-lite", SourceSeq: 5, Deleted: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("requests:\n got %+v\nwant %+v", got, want)
	}
}

func TestNoEmbedRequestsWithoutAModel(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	if err := s.Handle(context.Background(), events.Envelope{StreamSeq: 1, Event: upsert("a.md", "# A\n")}); err != nil {
		t.Fatal(err)
	}
	if got := embedRequests(t, conn); len(got) != 0 {
		t.Fatalf("requests without a model: %+v", got)
	}
}

// The invalid-UTF-8 warning follows ingest's repair flag: a file ingest
// repaired says so, one that holds U+FFFD of its own does not.
func TestRepairedContentIsWarnedOf(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	repaired := upsert("latin1.txt", "caf\uFFFD\n")
	repaired.UTF8Repaired = true
	own := upsert("encoding.md", "# Encoding\n\nU+FFFD looks like \uFFFD.\n")
	for i, ev := range []events.FileUpserted{repaired, own} {
		if err := s.Handle(context.Background(), events.Envelope{StreamSeq: uint64(i + 1), Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	if rec, _ := stored(t, conn, "latin1.txt"); len(rec.Warnings) != 1 || rec.Warnings[0] != "invalid UTF-8 replaced" {
		t.Errorf("repaired file: warnings %q", rec.Warnings)
	}
	if rec, _ := stored(t, conn, "encoding.md"); len(rec.Warnings) != 0 {
		t.Errorf("a file holding U+FFFD of its own: warnings %q", rec.Warnings)
	}
}
