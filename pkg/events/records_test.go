package events

import (
	"errors"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/memory"
)

func TestRecordsRoundTrip(t *testing.T) {
	m := memory.Memory{Content: "Use pgx", Kind: memory.KindDecision, Confidence: 0.9, Repo: "app", Session: "s",
		CreatedAt: time.Unix(1, 0).UTC(), UpdatedAt: time.Unix(2, 0).UTC()}
	mr := MemoryRecord{Memory: m, Hash: memory.Hash(m.Content), Batch: "app/s@0", Extractions: 2, Outcome: memory.OutcomeSuccess}
	data, err := Encode(mr)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMemoryRecord(data)
	if err != nil || got.Hash != mr.Hash || got.Extractions != 2 || got.Content != m.Content || !got.CreatedAt.Equal(m.CreatedAt) {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := DecodeExtractionRecord(data); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a memory record read as an extraction: %v", err)
	}
	er := ExtractionRecord{Batch: "app/s@0", Repo: "app", Path: PathRules, Why: "no_llm", Memories: []memory.Memory{m}}
	data, err = Encode(er)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeExtractionRecord(data); err != nil || got.Batch != er.Batch || len(got.Memories) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := Encode(ExtractionRecord{Batch: "b", Repo: "app", Path: "magic"}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("unknown path encoded: %v", err)
	}
	if _, err := DecodeMemoryRecord([]byte(`{"v":"9.0","kind":"memory.record","data":{}}`)); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("newer major read: %v", err)
	}
}
