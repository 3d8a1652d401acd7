package memory

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestMemoryJSON(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := Memory{Content: "Use NATS KV", Kind: KindDecision, Rationale: "one dependency",
		FilesTouched: []string{"internal/bus/kv.go"}, Confidence: 0.72, Repo: "cuedeck", Session: "s1",
		Source: Span{Start: 100, End: 250}, Provider: "ollama", Model: "qwen", CreatedAt: at, UpdatedAt: at}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"content", "kind", "rationale", "files_touched", "confidence", "repo", "session",
		"source", "provider", "model", "created_at", "updated_at"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	var back Memory
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip: %+v", back)
	}
}

func TestKindValid(t *testing.T) {
	for _, k := range []Kind{KindDecision, KindRationale, KindFact, KindPreference, KindOpenQuestion, KindExperience} {
		if !k.Valid() {
			t.Errorf("%q should be valid", k)
		}
	}
	if Kind("opinion").Valid() || Kind("").Valid() {
		t.Error("unknown kinds must be invalid")
	}
}
