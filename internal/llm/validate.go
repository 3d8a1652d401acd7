package llm

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/memory"
)

// Bounds of a valid candidate. A model that writes past them is rambling or
// pasting, and a memory that long would crowd the scenes it is shown in.
const (
	// MaxContentRunes bounds a memory's content and its rationale.
	MaxContentRunes = 1000
	// MaxFilesTouched bounds a memory's files_touched.
	MaxFilesTouched = 32
	// maxPathBytes bounds one path of files_touched.
	maxPathBytes = 512
	// maxReasons is how many invalid candidates' reasons a Result keeps.
	maxReasons = 5
)

// candidate is one memory as the model wrote it; pointers tell a missing
// field from a zero one.
type candidate struct {
	Content      *string  `json:"content"`
	Kind         *string  `json:"kind"`
	Rationale    *string  `json:"rationale"`
	FilesTouched []string `json:"files_touched"`
	Confidence   *float64 `json:"confidence"`
}

// decodeAnswer reads a JSON answer into res's Memories, Invalid and
// InvalidReasons. It fails, with ErrInvalidOutput, only when the answer is
// not an object with a memories array.
func decodeAnswer(answer string, res *Result) error {
	// Each candidate stays raw so that one of the wrong type is counted as
	// invalid instead of failing the others.
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(answer), &top); err != nil || top == nil {
		return fmt.Errorf("%w: the answer is not a JSON object", ErrInvalidOutput)
	}
	raw, ok := top["memories"]
	if !ok {
		return fmt.Errorf("%w: the answer has no memories field", ErrInvalidOutput)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("%w: memories is not an array", ErrInvalidOutput)
	}
	for i, raw := range list {
		m, err := validateCandidate(raw)
		if err != nil {
			res.Invalid++
			if len(res.InvalidReasons) < maxReasons {
				res.InvalidReasons = append(res.InvalidReasons, fmt.Sprintf("memories[%d]: %v", i, err))
			}
			continue
		}
		res.Memories = append(res.Memories, m)
	}
	return nil
}

// validateCandidate checks one candidate against the schema and the bounds
// above and returns it as a Memory with Content, Kind, Rationale,
// FilesTouched and Confidence set.
func validateCandidate(raw json.RawMessage) (memory.Memory, error) {
	var c candidate
	if err := json.Unmarshal(raw, &c); err != nil {
		return memory.Memory{}, fmt.Errorf("not a memory object: %v", err)
	}
	if c.Content == nil || strings.TrimSpace(*c.Content) == "" {
		return memory.Memory{}, fmt.Errorf("content is missing or empty")
	}
	content := strings.TrimSpace(*c.Content)
	if n := utf8.RuneCountInString(content); n > MaxContentRunes {
		return memory.Memory{}, fmt.Errorf("content has %d runes, more than %d", n, MaxContentRunes)
	}
	if c.Kind == nil {
		return memory.Memory{}, fmt.Errorf("kind is missing")
	}
	kind := memory.Kind(strings.TrimSpace(*c.Kind))
	if !extractable(kind) {
		return memory.Memory{}, fmt.Errorf("kind %q is not one of decision, rationale, fact, preference, open_question", *c.Kind)
	}
	var rationale string
	if c.Rationale != nil {
		rationale = strings.TrimSpace(*c.Rationale)
		if n := utf8.RuneCountInString(rationale); n > MaxContentRunes {
			return memory.Memory{}, fmt.Errorf("rationale has %d runes, more than %d", n, MaxContentRunes)
		}
	}
	confidence := memory.DefaultConfidence
	if c.Confidence != nil {
		confidence = *c.Confidence
		if confidence < 0 || confidence > 1 {
			return memory.Memory{}, fmt.Errorf("confidence %v is outside [0, 1]", confidence)
		}
	}
	if len(c.FilesTouched) > MaxFilesTouched {
		return memory.Memory{}, fmt.Errorf("%d files_touched, more than %d", len(c.FilesTouched), MaxFilesTouched)
	}
	var files []string
	for _, f := range c.FilesTouched {
		clean, err := relativePath(f)
		if err != nil {
			return memory.Memory{}, err
		}
		files = append(files, clean)
	}
	return memory.Memory{
		Content:      content,
		Kind:         kind,
		Rationale:    rationale,
		FilesTouched: files,
		Confidence:   confidence,
	}, nil
}

// extractable reports whether a model may produce kind: experiences are
// grafted by rules, never extracted.
func extractable(k memory.Kind) bool {
	return k.Valid() && k != memory.KindExperience
}

// relativePath accepts a path that looks relative to the repository and
// returns it cleaned, with forward slashes. Absolute paths, home paths,
// URLs and paths climbing out with ".." name nothing in the repository.
func relativePath(p string) (string, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return "", fmt.Errorf("files_touched has an empty path")
	case len(p) > maxPathBytes:
		return "", fmt.Errorf("files_touched path of %d bytes, more than %d", len(p), maxPathBytes)
	case strings.ContainsAny(p, "\x00\n\r"):
		return "", fmt.Errorf("files_touched path %q has control characters", p)
	case strings.Contains(p, "://"):
		return "", fmt.Errorf("files_touched path %q is a URL, not a repository path", p)
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || len(p) >= 2 && p[1] == ':' {
		return "", fmt.Errorf("files_touched path %q is absolute, not relative to the repository", p)
	}
	clean := path.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("files_touched path %q leaves the repository", p)
	}
	return clean, nil
}
