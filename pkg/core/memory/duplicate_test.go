package memory

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

func TestDecideDuplicateInsertsUniqueHash(t *testing.T) {
	d := DecideDuplicate(Memory{Content: "Use NATS KV", Confidence: 0.7},
		[]Memory{{Content: "Use Badger", Confidence: 0.9}})
	if d.Action != ActionInsert || d.Reason != ReasonUniqueHash || d.Match != -1 || d.Hash != Hash("use nats kv") {
		t.Fatalf("got %+v", d)
	}
	if d := DecideDuplicate(Memory{Content: "x"}, nil); d.Action != ActionInsert {
		t.Fatalf("no rows: %+v", d)
	}
}

func TestDecideDuplicateUpdatesOnlyWhenStrictlyGreater(t *testing.T) {
	rows := []Memory{{Content: "unrelated", Confidence: 0.1}, {Content: "Use NATS KV.", Confidence: 0.6}}
	d := DecideDuplicate(Memory{Content: "use nats kv", Confidence: 0.9}, rows)
	if d.Action != ActionUpdate || d.Reason != ReasonConfidenceImproved || d.Match != 1 {
		t.Fatalf("got %+v", d)
	}
	if d.ExistingConfidence != 0.6 || d.NewConfidence != 0.9 {
		t.Fatalf("confidences %+v", d)
	}
	// The stored confidence is the seed's harmonic mean, which here ends
	// below the candidate's 0.9.
	if got := fmt.Sprintf("%.6f", d.Confidence); got != "0.720000" {
		t.Fatalf("merged confidence %s, want 0.720000", got)
	}
	if d.Confidence >= d.NewConfidence {
		t.Fatal("the seed's merge lowers the stored confidence below the new one")
	}
}

func TestDecideDuplicateSkips(t *testing.T) {
	rows := []Memory{{Content: "Use NATS KV", Confidence: 0.8}}
	for _, c := range []struct {
		conf float64
		want Reason
	}{
		{0.8, ReasonEqualConfidence},
		{0.5, ReasonLowerConfidence},
		{math.NaN(), ReasonLowerConfidence},
	} {
		d := DecideDuplicate(Memory{Content: "use nats kv!", Confidence: c.conf}, rows)
		if d.Action != ActionSkip || d.Reason != c.want || d.ExistingConfidence != 0.8 || d.Match != 0 {
			t.Errorf("confidence %v: got %+v", c.conf, d)
		}
		if !(d.NewConfidence == c.conf || math.IsNaN(c.conf)) {
			t.Errorf("new confidence %v not reported", c.conf)
		}
	}
}

func TestDecisionUpdated(t *testing.T) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := created.Add(time.Hour)
	old := Memory{Content: "Use NATS KV", Kind: KindDecision, Rationale: "simple", Confidence: 0.6,
		Repo: "r", Session: "s1", Source: Span{0, 10}, Provider: "ollama", Model: "a", CreatedAt: created, UpdatedAt: created}
	cand := Memory{Content: "use nats kv", Kind: KindFact, Rationale: "one dependency", Confidence: 0.9,
		FilesTouched: []string{"internal/bus/kv.go"}, Repo: "r", Session: "s2", Source: Span{5, 9}, Provider: "ollama", Model: "b"}
	d := DecideDuplicate(cand, []Memory{old})
	got := d.Updated(old, cand, now)
	want := old
	want.Confidence, want.Rationale, want.FilesTouched, want.Model, want.UpdatedAt = 0.72, "one dependency", cand.FilesTouched, "b", now
	if got.Content != want.Content || got.Kind != want.Kind || got.Confidence != want.Confidence ||
		got.Rationale != want.Rationale || !slices.Equal(got.FilesTouched, want.FilesTouched) ||
		got.Model != want.Model || got.Session != "s1" || got.Source != old.Source ||
		!got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(now) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	cand.FilesTouched[0] = "changed"
	if got.FilesTouched[0] != "internal/bus/kv.go" {
		t.Fatal("Updated must copy the files touched")
	}
}
