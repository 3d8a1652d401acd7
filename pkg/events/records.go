package events

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Validate implements Event, so an ExtractionRecord is written with Encode
// like every other record.
func (r ExtractionRecord) Validate() error {
	if err := ValidateRepo(r.Repo); err != nil {
		return err
	}
	if r.Batch == "" {
		return fmt.Errorf("%w: extraction.record: no batch id", ErrMalformed)
	}
	switch r.Path {
	case PathLLM, PathRules, PathEmpty:
	default:
		return fmt.Errorf("%w: extraction.record %s: unknown path %q", ErrMalformed, r.Batch, r.Path)
	}
	for i, m := range r.Memories {
		if strings.TrimSpace(m.Content) == "" || !m.Kind.Valid() {
			return fmt.Errorf("%w: extraction.record %s: memory %d has no content or an unknown kind %q", ErrMalformed, r.Batch, i, m.Kind)
		}
	}
	return nil
}

// DecodeMemoryRecord decodes a cue_memories value written with Encode.
func DecodeMemoryRecord(b []byte) (MemoryRecord, error) {
	return decodeRecord[MemoryRecord](b, KindMemoryRecord)
}

// DecodeExtractionRecord decodes a cue_extractions value written with
// Encode.
func DecodeExtractionRecord(b []byte) (ExtractionRecord, error) {
	return decodeRecord[ExtractionRecord](b, KindExtractionRecord)
}

// decodeRecord reads a KV record of kind: the records never travel on a
// stream, so Decode's table of events does not list them.
func decodeRecord[T Event](b []byte, kind Kind) (T, error) {
	var zero T
	if len(b) > MaxEncodedSize {
		return zero, fmt.Errorf("%w: %d bytes exceeds %d", ErrMalformed, len(b), MaxEncodedSize)
	}
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return zero, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := checkVersion(w.V); err != nil {
		return zero, err
	}
	if w.Kind != kind {
		return zero, fmt.Errorf("%w: expected %s, got %q", ErrMalformed, kind, w.Kind)
	}
	var v T
	if err := json.Unmarshal(w.Data, &v); err != nil {
		return zero, fmt.Errorf("%w: %s: %v", ErrMalformed, kind, err)
	}
	if err := v.Validate(); err != nil {
		return zero, err
	}
	return v, nil
}
