// Package embed is the port through which CueDeck turns text into vectors
// for semantic search. Adapters live in its subpackages: builtin (Universal
// Sentence Encoder Lite in pure Go, weights in the binary) and ollama (any
// Ollama embedding model). Edges and indexers depend on Embedder only.
package embed

import (
	"context"
	"errors"

	"github.com/cuedeck/cuedeck/internal/priority"
)

// Embedder turns texts into L2-normalised vectors.
type Embedder interface {
	// ModelID names the model and its settings, e.g. "builtin:use-lite"
	// or "ollama:all-minilm". Vectors are cached and compared only within
	// one ModelID.
	ModelID() string
	// Dimensions is the length of every vector.
	Dimensions() int
	// Embed returns one vector per text, in order. It honours ctx.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrUnavailable wraps failures that mean "no embeddings right now" (the
// model server is down, the breaker is open): callers carry on keyword-only.
var ErrUnavailable = errors.New("embedder unavailable")

// Yielding is implemented by embedders that compute on this process's own
// cores (the built-in model): Yielding returns an embedder of the same
// model that waits at g between steps of a few milliseconds, so that
// embedding in the background never holds up foreground work for longer.
type Yielding interface {
	Yielding(g *priority.Gate) Embedder
}

// KindEmbedder is implemented by embedders that embed a document's text by
// what the document is (package split: one model for prose, another for
// code). Their Embed embeds queries, to be compared with either.
type KindEmbedder interface {
	Embedder
	// EmbedKind embeds texts of documents that are prose (docparse.Prose)
	// or not.
	EmbedKind(ctx context.Context, texts []string, prose bool) ([][]float32, error)
}

// EmbedDocs embeds texts of documents that are prose or not: with
// EmbedKind where e has it, else with Embed (a model that embeds every
// text alike).
func EmbedDocs(ctx context.Context, e Embedder, texts []string, prose bool) ([][]float32, error) {
	if k, ok := e.(KindEmbedder); ok {
		return k.EmbedKind(ctx, texts, prose)
	}
	return e.Embed(ctx, texts)
}
