package indexer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// A record carries the times its path's content changed: not the first
// version, not a re-index of the same content, each edit at its indexing
// time; a deletion clears them and the file that comes back starts again.
func TestRecordsCarryTheirContentChanges(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := New(conn, Config{}, nil)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	now := t0
	s.now = func() time.Time { return now }
	ctx := context.Background()
	seq := uint64(0)
	handle := func(at time.Time, ev events.Event) events.DocRecord {
		t.Helper()
		now, seq = at, seq+1
		if err := s.Handle(ctx, events.Envelope{StreamSeq: seq, Event: ev}); err != nil {
			t.Fatal(err)
		}
		rec, _ := stored(t, conn, "auth.go")
		return rec
	}
	changed := func(rec events.DocRecord, want ...time.Time) {
		t.Helper()
		if !slices.EqualFunc(rec.Changed, want, time.Time.Equal) {
			t.Fatalf("changed %v, want %v", rec.Changed, want)
		}
	}
	changed(handle(t0, upsert("auth.go", "package auth\n")))
	changed(handle(t0.Add(time.Hour), upsert("auth.go", "package auth\n"))) // re-indexed, same content
	changed(handle(t0.Add(2*time.Hour), upsert("auth.go", "package auth\n\n// v2\n")), t0.Add(2*time.Hour))
	changed(handle(t0.Add(3*time.Hour), upsert("auth.go", "package auth\n\n// v3\n")), t0.Add(2*time.Hour), t0.Add(3*time.Hour))
	changed(handle(t0.Add(4*time.Hour), upsert("auth.go", "package auth\n\n// v3\n")), t0.Add(2*time.Hour), t0.Add(3*time.Hour))
	changed(handle(t0.Add(5*time.Hour), events.FileDeleted{Repo: "r", Path: "auth.go"}))
	changed(handle(t0.Add(6*time.Hour), upsert("auth.go", "package auth\n\n// back\n")))
	changed(handle(t0.Add(7*time.Hour), upsert("auth.go", "package auth\n\n// v4\n")), t0.Add(7*time.Hour))
}
