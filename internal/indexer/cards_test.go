package indexer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func runBoard(t *testing.T, s *Service) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Board().Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

func taskLogLen(t *testing.T, conn *bus.Conn) uint64 {
	t.Helper()
	st, err := conn.JS.Stream(context.Background(), events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// syncedIndexer is an indexer whose handle indexes one card event and
// waits until the indexer's board holds what it appended.
func syncedIndexer(t *testing.T) (*bus.Conn, *Service, context.Context, func(seq uint64, ev events.FileUpserted)) {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	runBoard(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return conn, s, ctx, func(seq uint64, ev events.FileUpserted) {
		t.Helper()
		if err := s.Handle(ctx, events.Envelope{StreamSeq: seq, Event: ev}); err != nil {
			t.Fatal(err)
		}
		if err := s.Board().Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

const cardV1 = "---\nid: abc123\ntitle: Login\nstatus: todo\npriority: high\n---\nSee @docs/api.md#Login\n"

func TestCardsBecomeTaskEvents(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	runBoard(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const p = ".cuedeck/cards/abc123.md"
	handle := func(seq uint64, ev events.Event) {
		t.Helper()
		if err := s.Handle(ctx, events.Envelope{StreamSeq: seq, Event: ev}); err != nil {
			t.Fatal(err)
		}
	}

	handle(1, upsert(p, cardV1))
	got, ok := s.Board().Task("r", "abc123")
	if !ok || got.Title != "Login" || got.Priority != "high" || got.Path != p {
		t.Fatalf("board after create: %+v, %v", got, ok)
	}
	// The same card again (a redelivery, or ingest's write-back) publishes nothing.
	handle(1, upsert(p, cardV1))
	handle(2, upsert(p, cardV1))
	if n := taskLogLen(t, conn); n != 1 {
		t.Fatalf("task log has %d events after identical cards, want 1", n)
	}
	handle(3, upsert(p, strings.Replace(cardV1, "status: todo", "status: active", 1)))
	if got, _ := s.Board().Task("r", "abc123"); got.Status != "active" {
		t.Fatalf("board after edit: %+v", got)
	}
	// An older event delivered late does not set the task back.
	handle(2, upsert(p, cardV1))
	if got, _ := s.Board().Task("r", "abc123"); got.Status != "active" {
		t.Fatalf("board after a late old event: %+v", got)
	}

	// A broken card is a warning on its record, not an event.
	handle(4, upsert(p, strings.Replace(cardV1, "status: todo", "status: doing", 1)))
	rec, _ := stored(t, conn, p)
	if len(rec.Warnings) != 1 || !strings.Contains(rec.Warnings[0], `line 4: status: "doing" is not one of`) {
		t.Fatalf("warnings: %q", rec.Warnings)
	}
	if n := taskLogLen(t, conn); n != 2 {
		t.Fatalf("task log has %d events, want 2", n)
	}

	// Editing the id moves the task; deleting the file deletes it.
	handle(5, upsert(p, strings.Replace(cardV1, "abc123", "xyz789", 1)))
	if _, ok := s.Board().Task("r", "abc123"); ok {
		t.Fatal("old id still on the board")
	}
	if got, ok := s.Board().Task("r", "xyz789"); !ok || got.Path != p {
		t.Fatalf("new id: %+v, %v", got, ok)
	}
	handle(6, events.FileDeleted{Repo: "r", Path: p})
	if ts := s.Board().Tasks("r"); len(ts) != 0 {
		t.Fatalf("board after delete: %+v", ts)
	}
}

func TestCardIDHeldByAnotherCard(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	runBoard(t, s)
	ctx := context.Background()
	if err := s.Handle(ctx, events.Envelope{StreamSeq: 1, Event: upsert(".cuedeck/cards/abc123.md", cardV1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(ctx, events.Envelope{StreamSeq: 2, Event: upsert(".cuedeck/cards/copy.md", cardV1)}); err != nil {
		t.Fatal(err)
	}
	rec, _ := stored(t, conn, ".cuedeck/cards/copy.md")
	if len(rec.Warnings) != 1 || !strings.Contains(rec.Warnings[0], "already the card .cuedeck/cards/abc123.md") {
		t.Fatalf("warnings: %q", rec.Warnings)
	}
	if got, _ := s.Board().Task("r", "abc123"); got.Path != ".cuedeck/cards/abc123.md" {
		t.Fatalf("board: %+v", got)
	}
	// The original deleted (a rename seen in this order): the task moves to
	// the card that still claims its id.
	if err := s.Handle(ctx, events.Envelope{StreamSeq: 3, Event: events.FileDeleted{Repo: "r", Path: ".cuedeck/cards/abc123.md"}}); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Board().Task("r", "abc123"); !ok || got.Path != ".cuedeck/cards/copy.md" || got.Title != "Login" {
		t.Fatalf("board after the original was deleted: %+v, %v", got, ok)
	}
}

// Two indexer processes: B stores and publishes version 2 of a card while
// A, holding version 1 as current when it wrote it, has yet to publish. A's
// task event must not set the task back to version 1.
func TestCardVersionsFromTwoIndexersKeepTheNewest(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	a, b := New(conn, Config{}, nil), New(conn, Config{}, nil)
	runBoard(t, a)
	runBoard(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const p = ".cuedeck/cards/abc123.md"
	if err := a.Handle(ctx, events.Envelope{StreamSeq: 1, Event: upsert(p, cardV1)}); err != nil {
		t.Fatal(err)
	}
	// B indexes version 3 (active) of the card.
	active := strings.Replace(cardV1, "status: todo", "status: active", 1)
	if err := b.Handle(ctx, events.Envelope{StreamSeq: 3, Event: upsert(p, active)}); err != nil {
		t.Fatal(err)
	}
	// A now publishes what it parsed from sequence 2, stale since B stored 3.
	done := strings.Replace(cardV1, "status: todo", "status: done", 1)
	ch := a.parseCard(ctx, &events.DocRecord{Repo: "r", Path: p}, done)
	ch.seq = 2
	if err := a.Board().Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.publishCard(ctx, "r", p, ch); err != nil {
		t.Fatal(err)
	}
	if err := a.Board().Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Board().Task("r", "abc123"); got.Status != "active" {
		t.Fatalf("a stale version reached the task log: %+v", got)
	}
}

// On a replicated cue_docs a read may come from a replica that has not
// applied the record just written: it answers an older version of the
// card. Only a newer version makes a card's change stale; an older one
// must not drop it (it would never be published, with its event acked).
func TestCardChangePublishedThoughTheRecordReadsOlder(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	runBoard(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const p = ".cuedeck/cards/abc123.md"
	if err := s.Handle(ctx, events.Envelope{StreamSeq: 2, Event: upsert(p, cardV1)}); err != nil {
		t.Fatal(err)
	}
	// The record of sequence 5 was written; the read answers sequence 2.
	done := strings.Replace(cardV1, "status: todo", "status: done", 1)
	ch := s.parseCard(ctx, &events.DocRecord{Repo: "r", Path: p}, done)
	ch.seq = 5
	if err := s.Board().Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.publishCard(ctx, "r", p, ch); err != nil {
		t.Fatal(err)
	}
	if err := s.Board().Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Board().Task("r", "abc123"); got.Status != "done" {
		t.Fatalf("the card's change was dropped on an older read of its record: %+v", got)
	}
}

// A card ingest publishes again unchanged (FileUpserted.Repeat: its task
// was lost with a restored task log) teaches the log what only the card
// holds, but is not an edit: a change the log holds from after the card's
// updated time (an agent's, made in the restored log) stays, and reaches
// the card through write-back. An edit of the card still wins, whatever
// its updated time says.
func TestRepeatedCardDoesNotUndoALaterChange(t *testing.T) {
	_, s, ctx, handle := syncedIndexer(t)
	const p = ".cuedeck/cards/abc123.md"
	const q = ".cuedeck/cards/def456.md"
	repeat := func(path, content string) events.FileUpserted {
		ev := upsert(path, content)
		ev.Repeat = true
		return ev
	}
	status := func(id string) string {
		t.Helper()
		got, ok := s.Board().Task("r", id)
		if !ok {
			t.Fatalf("task %s not on the board", id)
		}
		return got.Status
	}
	card := strings.Replace(cardV1, "priority: high\n", "priority: high\nupdated: 2026-01-02T10:43:00Z\n", 1)
	handle(1, upsert(p, card))

	task, _ := s.Board().Task("r", "abc123")
	task.Status, task.Updated = "active", time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if _, err := s.Board().Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	handle(2, repeat(p, card))
	if got := status("abc123"); got != "active" {
		t.Fatalf("the card published again set the later change back: status %q, want active", got)
	}

	// The log lacks the task: the repeated card brings it.
	other := strings.NewReplacer("abc123", "def456", "status: todo", "status: done").Replace(card)
	handle(3, repeat(q, other))
	if got := status("def456"); got != "done" {
		t.Fatalf("the repeated card's task is %q in the log, want done", got)
	}

	// An edit, its updated time untouched, is the card's truth.
	edited := strings.Replace(card, "status: todo", "status: archived", 1)
	handle(4, upsert(p, edited))
	if got := status("abc123"); got != "archived" {
		t.Fatalf("the edited card did not reach the log: status %q, want archived", got)
	}
}

// Two agent changes to one task within a second share its updated time, so
// a card holding the first cannot tell itself older than the log holding
// the second. Written back after the first and read by ingest after the
// second was appended, such a card set the task back when the indexer took
// it for an edit (and the next card set it forward again). A card ingest
// publishes as written back from the task log changes no task; the same
// card as an edit does, and so does one written back from a log since
// replaced (restored from a backup: the card may hold what it lost).
func TestWrittenBackCardDoesNotSetItsTaskBack(t *testing.T) {
	conn, s, ctx, handle := syncedIndexer(t)
	const p = ".cuedeck/cards/abc123.md"
	handle(1, upsert(p, cardV1))
	at := time.Date(2026, 1, 3, 9, 0, 0, 0, time.UTC)
	for _, status := range []string{"active", "done"} {
		task, _ := s.Board().Task("r", "abc123")
		task.Status, task.Updated = status, at
		if _, err := s.Board().Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	logged := taskLogLen(t, conn)
	// The card as write-back wrote it after the first change.
	firstCard := strings.Replace(cardV1, "priority: high\n", "priority: high\nupdated: 2026-01-03T09:00:00Z\n", 1)
	firstCard = strings.Replace(firstCard, "status: todo", "status: active", 1)
	log, err := bus.ReadStream(ctx, conn.JS, events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	writtenBack := func(from string) events.FileUpserted {
		ev := upsert(p, firstCard)
		ev.WrittenBackFrom = from
		return ev
	}
	handle(2, writtenBack(log.ID()))
	if got, _ := s.Board().Task("r", "abc123"); got.Status != "done" || taskLogLen(t, conn) != logged {
		t.Fatalf("after the written-back card: status %q, %d events (%d before); want done and no new event", got.Status, taskLogLen(t, conn), logged)
	}
	handle(3, upsert(p, firstCard))
	if got, _ := s.Board().Task("r", "abc123"); got.Status != "active" {
		t.Fatalf("the same card as an edit: status %q, want active", got.Status)
	}
	task, _ := s.Board().Task("r", "abc123")
	task.Status = "done"
	if _, err := s.Board().Append(ctx, events.TaskEvent{Repo: "r", Op: events.TaskUpdated, Task: task, Source: "mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	handle(4, writtenBack("2001-01-01T00:00:00Z"))
	if got, _ := s.Board().Task("r", "abc123"); got.Status != "active" {
		t.Fatalf("a card written back from another task log: status %q, want active (the card's)", got.Status)
	}
}
