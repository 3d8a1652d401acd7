package extractor

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// fileBatch reads a JSONL transcript into one batch, with the lines' real
// byte offsets.
func fileBatch(t testing.TB, repo, session, path string) events.TranscriptBatch {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b := events.TranscriptBatch{Repo: repo, Session: session, Source: path, Format: events.TranscriptClaudeCode, Final: true}
	off := int64(0)
	for line := range bytes.Lines(data) {
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			b.Lines = append(b.Lines, json.RawMessage(trimmed))
			b.Offsets = append(b.Offsets, off)
		}
		off += int64(len(line))
	}
	b.EndOffset = off
	return b
}

func extractOne(t *testing.T, conn *bus.Conn, s *Service, b events.TranscriptBatch) events.ExtractionRecord {
	t.Helper()
	before := s.Stats().Batches
	publishBatch(t, conn, events.TranscriptSubject(b.Repo), b)
	bustest.Eventually(t, 30*time.Second, "batch handled", func() bool { return s.Stats().Batches > before })
	rec, ok := extractionOf(t, conn, b)
	if !ok {
		t.Fatal("no extraction record")
	}
	return rec
}

func TestRulePathOnAClaudeCodeSession(t *testing.T) {
	const session = "3b9d6c2e-41f7-4a8e-9d10-5e2f7c8a9b01"
	const file = "/home/dev/src/app/internal/client/client.go"
	b := fileBatch(t, "app", session, "testdata/decisions.jsonl")
	span := func(line int) memory.Span { return memory.Span{Start: b.Offsets[line], End: b.Offsets[line+1]} }
	want := []memory.Memory{
		{Content: "Wrap the transport in a retrying RoundTripper", Kind: memory.KindExperience,
			Rationale: "Every caller gets retries without changing its call site", FilesTouched: []string{file},
			Confidence: 0.5, Repo: "app", Session: session, Source: span(5), Provider: ProviderRules},
		{Content: "Cap retries at three attempts", Kind: memory.KindExperience,
			Rationale: "The upstream SLO allows two seconds of retry time", FilesTouched: []string{file},
			Confidence: 0.5, Repo: "app", Session: session, Source: span(10), Provider: ProviderRules},
	}

	conn, _ := bustest.Start(t, bus.Settings{})
	s := newService(t, conn, nil, Config{})
	run(t, s)
	rec := extractOne(t, conn, s, b)
	got := rec.Memories
	for i := range got {
		got[i].CreatedAt, got[i].UpdatedAt = time.Time{}, time.Time{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("extracted\n%+v\nwant\n%+v", got, want)
	}
	if rec.Path != events.PathRules || rec.Why != WhyNoLLM || rec.Outcome != memory.OutcomeSuccess {
		t.Fatalf("record %s/%s outcome %q", rec.Path, rec.Why, rec.Outcome)
	}
	// The second Read of client.go supersedes the first (hash), and the
	// Edit supersedes the second (file): both outputs are saved.
	if rec.CallsSuperseded != 2 || rec.TokensSaved <= 0 {
		t.Fatalf("supersede: %d calls, %d tokens", rec.CallsSuperseded, rec.TokensSaved)
	}
	stored := memories(t, conn)
	if len(stored) != len(want) {
		t.Fatalf("%d memories stored, want %d", len(stored), len(want))
	}
	for _, w := range want {
		m, ok := stored[events.MemoryKey("app", memory.Hash(w.Content))]
		if !ok || m.Content != w.Content || m.Outcome != memory.OutcomeSuccess || m.Extractions != 1 || m.Batch != batchID(b) {
			t.Fatalf("stored %+v", m)
		}
	}

	// The same batch published again under another message id (a
	// re-ingest) reuses its record and changes no memory.
	if _, err := bus.PublishEvent(context.Background(), conn.JS, events.TranscriptSubject("app"), batchID(b)+"#again", b); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 30*time.Second, "republished batch handled", func() bool { return s.Stats().Batches == 2 })
	if st := s.Stats(); st.Reused != 1 || st.Store.Inserted != 2 || st.Store.SameBatch != 2 {
		t.Fatalf("stats %+v", st)
	}
	if again := memories(t, conn); !reflect.DeepEqual(again, stored) {
		t.Fatal("a redelivered batch changed its memories")
	}
}

// TestRulePathOnRecordedSessions runs the recorded Claude Code sessions:
// they hold no decision, so nothing may become a memory — not the
// model's "OK.", not the task notification a background subagent leaves.
func TestRulePathOnRecordedSessions(t *testing.T) {
	paths, _ := filepath.Glob("../../../shared/samples/claude-code/*/*.stripped.jsonl")
	sub, _ := filepath.Glob("../../../shared/samples/claude-code/*/subagents/*.stripped.jsonl")
	paths = append(paths, sub...)
	if len(paths) == 0 {
		t.Skip("no recorded sessions beside the repository (../shared/samples)")
	}
	var want []memory.Memory // none of them decides anything
	conn, _ := bustest.Start(t, bus.Settings{})
	s := newService(t, conn, nil, Config{})
	run(t, s)
	for i, p := range paths {
		b := fileBatch(t, "app", "recorded-"+string(rune('a'+i)), p)
		raw := string(bytesOf(t, p))
		if strings.Contains(p, "subagents") && !strings.Contains(raw, `"OK."`) || strings.Contains(p, "run2") && !strings.Contains(p, "subagents") && !strings.Contains(raw, "task-notification") {
			t.Fatalf("%s no longer holds what this test is about", p)
		}
		rec := extractOne(t, conn, s, b)
		if len(rec.Memories) != len(want) {
			t.Fatalf("%s: extracted %+v, want none", p, rec.Memories)
		}
		if rec.MessagesIn == 0 {
			t.Fatalf("%s: no message parsed", p)
		}
	}
	for k, m := range memories(t, conn) {
		t.Errorf("memory %s stored: %q", k, m.Content)
	}
	if st := s.Stats(); st.Batches != uint64(len(paths)) {
		t.Fatalf("stats %+v", st)
	}
}

func bytesOf(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
