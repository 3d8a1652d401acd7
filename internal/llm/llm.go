// Package llm is the extractor's port to a language model: it turns the
// salient messages of a transcript batch into candidate memories. The
// Ollama adapter streams a chat whose `format` is the memories' JSON
// schema, assembles the stream with pkg/core/llmjson, repairs and validates
// what it gets, and retries what is worth retrying.
package llm

import (
	"context"
	"errors"

	"github.com/cuedeck/cuedeck/pkg/core/memory"
)

// Request is one extraction.
type Request struct {
	Repo    string
	Session string
	// Messages are the salient messages, in conversation order, as
	// "role: text" in Content.
	Messages []memory.Message
	// Files are the files the batch's tool calls modified, offered to the
	// model for files_touched.
	Files []string
}

// Result is what one extraction produced.
type Result struct {
	// Memories are the valid candidates: Content, Kind, Rationale,
	// FilesTouched and Confidence set; the caller fills in the rest.
	Memories []memory.Memory
	// Invalid counts candidates that failed validation, with the first few
	// reasons: counted, never silently dropped.
	Invalid        int
	InvalidReasons []string
	// Repaired reports that the model's JSON needed repair.
	Repaired bool
	// PromptTokens and OutputTokens are the provider's counts.
	PromptTokens int
	OutputTokens int
	// Attempts is how many requests the call took (1 without retries).
	Attempts int
}

// Extractor is a language model that extracts memories.
type Extractor interface {
	// Provider names the provider ("ollama") for the token projector and
	// the memories' provenance; Model names the model.
	Provider() string
	Model() string
	// Estimate returns an upper bound of the tokens req will consume: its
	// prompt tokens and the most output tokens the call allows. The
	// extractor reserves their cost in the shared budget before calling.
	Estimate(req Request) (promptTokens, maxOutputTokens int)
	// Extract runs one extraction. Its errors wrap ErrUnavailable (breaker
	// open, retries exhausted, server unreachable, timeouts),
	// ErrInvalidOutput (the answer was not repairable JSON of the schema)
	// or ErrRefused (a spend-limit or permission refusal, never retried).
	// On ErrInvalidOutput the Result still reports tokens and attempts.
	Extract(ctx context.Context, req Request) (Result, error)
}

// Errors of Extract.
var (
	ErrUnavailable   = errors.New("llm: unavailable")
	ErrInvalidOutput = errors.New("llm: output is not valid memories JSON")
	ErrRefused       = errors.New("llm: request refused")
)
