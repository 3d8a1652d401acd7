package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/extractor"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// A conversation in which a decision is reversed, extracted by the rule
// path: both decisions are stored, the edges serve the later one as
// current, and include_superseded shows both, linked both ways.
func TestReversedDecisionIsSuperseded(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	h := harnessOn(t, conn)
	r := h.start("")
	e := r.memEdge()

	data, err := os.ReadFile("../extractor/testdata/reversal.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	b := events.TranscriptBatch{Repo: "app", Session: "7c1e9a42-5b3d-4f60-8e2a-1d9b0c3f4a55", Source: "reversal.jsonl", Format: events.TranscriptClaudeCode, Final: true}
	off := int64(0)
	for line := range bytes.Lines(data) {
		b.Lines = append(b.Lines, json.RawMessage(bytes.TrimSpace(line)))
		b.Offsets = append(b.Offsets, off)
		off += int64(len(line))
	}
	b.EndOffset = off
	x, err := extractor.New(conn, nil, extractor.Config{}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	bustest.Run(t, "extractor", x.Run)
	if _, err := bus.PublishEvent(context.Background(), conn.JS, events.TranscriptSubject(b.Repo), events.TranscriptBatchMsgID(b.Repo, b.StreamKey(), b.StartOffset), b); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 30*time.Second, "both decisions on the edge", func() bool {
		all, _ := e.listMemories(context.Background(), nil, 0, true)
		return len(all) >= 2
	})

	all := searchMem(t, e, map[string]any{"query": "store user sessions", "mode": "keyword", "include_superseded": true})
	if len(all) != 2 {
		t.Fatalf("extracted: %+v, want the two decisions", contents(all))
	}
	var redis, postgres string
	for _, m := range all {
		switch {
		case bytes.Contains([]byte(m.Content), []byte("Postgres")):
			postgres = m.Hash
		default:
			redis = m.Hash
		}
	}
	for _, m := range all {
		if m.Hash == redis && !slices.Equal(m.SupersededBy, []string{postgres}) {
			t.Errorf("the Redis decision is not superseded by the Postgres one: %+v", m)
		}
		if m.Hash == postgres && len(m.SupersededBy) != 0 {
			t.Errorf("the Postgres decision is superseded: %+v", m)
		}
	}
	current := searchMem(t, e, map[string]any{"query": "store user sessions", "mode": "keyword"})
	if len(current) != 1 || current[0].Hash != postgres {
		t.Errorf("current decisions: %+v, want the Postgres one alone", contents(current))
	}
	if ds := e.RecentDecisions("app", nil, time.Now(), 10); len(ds) != 1 || ds[0].Hash != postgres {
		t.Errorf("Recent Decisions: %d, want the Postgres one alone", len(ds))
	}
}
