package scenes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestRelativeTime(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{-time.Hour, "just now"},
		{30 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{59 * time.Minute, "59 minutes ago"},
		{time.Hour, "1 hour ago"},
		{2*time.Hour + 59*time.Minute, "2 hours ago"},
		{24 * time.Hour, "yesterday"},
		{47 * time.Hour, "yesterday"},
		{48 * time.Hour, "2 days ago"},
		{29 * 24 * time.Hour, "29 days ago"},
	} {
		if got := RelativeTime(now.Add(-c.ago), now); got != c.want {
			t.Errorf("%v ago: %q, want %q", c.ago, got, c.want)
		}
	}
}

// decisionEdge is a running edge over a real JetStream whose cue_memories
// holds recs.
func decisionEdge(t *testing.T, recs []events.MemoryRecord) *edge.Edge {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	kv := func(name string) jetstream.KeyValue {
		b, err := conn.JS.KeyValue(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mkv := kv(events.MemoriesBucket)
	var rev uint64
	for _, r := range recs {
		b, err := events.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		if rev, err = mkv.Put(ctx, events.MemoryKey(r.Repo, r.Hash), b); err != nil {
			t.Fatal(err)
		}
	}
	m, err := edge.Open(edge.Config{Docs: kv(events.DocsBucket), Memories: mkv})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	waitCtx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	if err := m.WaitMemoryRevision(waitCtx, rev); err != nil {
		t.Fatal(err)
	}
	return edge.New(m, nil, edge.WithDefaultRepo("app"))
}

func decision(content, session, agent string, updated time.Time, conf float64, files ...string) events.MemoryRecord {
	return events.MemoryRecord{
		Memory: memory.Memory{Content: content, Kind: memory.KindDecision, Confidence: conf, Repo: "app", Session: session,
			FilesTouched: files, CreatedAt: updated, UpdatedAt: updated},
		Hash: memory.Hash(content), Agent: agent, Extractions: 1,
	}
}

func TestSceneShowsRecentDecisions(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	recs := []events.MemoryRecord{
		decision("Used singleton for DB connection", "sess-9f8e7d6c5b4a", "agent-abc", now.Add(-2*time.Hour), 0.8),
		decision("Chose JWT over sessions for auth", "5f3c2a1b-0000-4000-8000-000000000000", "", now.Add(-30*time.Hour), 0.8),
		decision("Kept the login endpoint at /login", "s-login", "agent-api", now.Add(-5*24*time.Hour), 0.6, "/ws/docs/auth.md"),
		decision("Store the deploy key as aws_access_key_id = "+awsKey, "s-key", "agent-ops", now.Add(-3*time.Hour), 0.7),
	}
	for i := range 9 {
		recs = append(recs, decision(fmt.Sprintf("Older decision %d", i), "s-old", "agent-old", now.Add(-time.Duration(3+i)*24*time.Hour), 0.5))
	}
	recs = append(recs, decision("Ancient decision", "s-old", "agent-old", now.Add(-40*24*time.Hour), 1))
	e := decisionEdge(t, recs)

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".cuedeck/cards/a1b2c3.md": card("a1b2c3", "active", "Fix login. Read @docs/auth.md."),
		"docs/auth.md":             "# Auth\n\nLogin flow.\n",
	})
	res, err := Build(openRoot(t, dir).FS(), Options{Decisions: e, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	// Written first: the one touching the focus (docs/auth.md), then by
	// whole days, at most ten; the secret redacted; the oldest cut.
	want := "## Recent Decisions\n" +
		"- agent-api: Kept the login endpoint at /login (5 days ago)\n" +
		"- agent-abc: Used singleton for DB connection (2 hours ago)\n" +
		"- agent-ops: Store the deploy key as aws_access_key_id = %s (3 hours ago)\n" +
		"- 5f3c2a1b: Chose JWT over sessions for auth (yesterday)\n" +
		"- agent-old: Older decision 0 (3 days ago)\n" +
		"- agent-old: Older decision 1 (4 days ago)\n" +
		"- agent-old: Older decision 2 (5 days ago)\n" +
		"- agent-old: Older decision 3 (6 days ago)\n" +
		"- agent-old: Older decision 4 (7 days ago)\n" +
		"- agent-old: Older decision 5 (8 days ago)\n" +
		"\n---\n"
	start := strings.Index(res.Markdown, "## Recent Decisions")
	if start < 0 {
		t.Fatalf("no Recent Decisions:\n%s", res.Markdown)
	}
	got := res.Markdown[start:]
	got = got[:strings.Index(got, "---\n")+4]
	if strings.Contains(got, awsKey) {
		t.Fatalf("secret in the scene:\n%s", got)
	}
	redacted := strings.Split(strings.Split(got, "aws_access_key_id = ")[1], " (3 hours ago)")[0]
	if w := fmt.Sprintf(want, redacted); got != w {
		t.Fatalf("decisions:\n%s\nwant:\n%s", got, w)
	}
	if strings.Index(res.Markdown, "## Recent Decisions") > strings.Index(res.Markdown, "## Focus Area") {
		t.Error("decisions must be in the anchor, before the focus")
	}
}

func TestSceneToolTakesDecisionsFromTheEdge(t *testing.T) {
	e := decisionEdge(t, []events.MemoryRecord{
		decision("Used singleton for DB connection", "sess-1", "agent-abc", time.Now().Add(-2*time.Hour-time.Minute), 0.8),
	})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".cuedeck/cards/a1b2c3.md": card("a1b2c3", "active", "Fix login.")})
	out, err := Tool(e, openRoot(t, dir).FS(), "app", nil).Call(context.Background(), tools.GetScene, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var res tools.GetSceneResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Markdown, "## Recent Decisions\n- agent-abc: Used singleton for DB connection (2 hours ago)\n") {
		t.Fatalf("scene:\n%s", res.Markdown)
	}
}
