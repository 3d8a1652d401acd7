// Package split embeds prose with one model and code with another, as one
// model: `[embed] model = "builtin+code=static:FILE"`. No model at hand
// does both well: the built-in one is near random on code (`cue eval
// code`: 0.106 nDCG@10 alone) and a static model trained on Go's doc
// comments and code knows next to no prose (SciFact: 0.027).
//
// A document's vector lies in its model's half of the space, the other
// half zero; a query's vector is both models' vectors side by side. So a
// query's dot product with a document is the cosine of the model that
// embedded the document, and one vector index, one record per file and
// one model id serve both. Each model's cosines keep their own scale: in
// a repository of prose and code, one model's documents may score above
// the other's for no better match.
package split

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/priority"
)

// CodeSeparator joins the prose model's spec or id and the code model's:
// "builtin+code=static:/path/code.static".
const CodeSeparator = "+code="

// ID is the model id of a prose model and a code model joined.
func ID(prose, code string) string { return prose + CodeSeparator + code }

// Parts splits a model id or spec into its prose and code parts; ok is
// false for one of a single model.
func Parts(id string) (prose, code string, ok bool) { return strings.Cut(id, CodeSeparator) }

// Embedder is a prose model and a code model as one.
type Embedder struct {
	prose, code embed.Embedder
}

var (
	_ embed.KindEmbedder = (*Embedder)(nil)
	_ embed.Yielding     = (*Embedder)(nil)
)

// New returns the model embedding prose with prose and code with code.
func New(prose, code embed.Embedder) (*Embedder, error) {
	if prose == nil || code == nil {
		return nil, errors.New("split: a prose model and a code model are both needed")
	}
	return &Embedder{prose: prose, code: code}, nil
}

// ModelID is ID of the two models' ids.
func (e *Embedder) ModelID() string { return ID(e.prose.ModelID(), e.code.ModelID()) }

// Dimensions is the sum of both models' dimensions, 0 while one of them
// does not know its own yet (an Ollama model before its first answer).
func (e *Embedder) Dimensions() int {
	p, c := e.prose.Dimensions(), e.code.Dimensions()
	if p == 0 || c == 0 {
		return 0
	}
	return p + c
}

// Embed embeds queries: each text by both models, the prose model's
// vector first. The result is not of unit length (it is √2): its dot
// product with a document's vector is the document model's cosine.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ps, err := e.prose.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	cs, err := e.code.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(ps) != len(texts) || len(cs) != len(texts) {
		return nil, fmt.Errorf("split: %d and %d vectors for %d texts", len(ps), len(cs), len(texts))
	}
	out := make([][]float32, len(texts))
	for i := range texts {
		v := make([]float32, len(ps[i])+len(cs[i]))
		copy(v, ps[i])
		copy(v[len(ps[i]):], cs[i])
		out[i] = v
	}
	return out, nil
}

// EmbedKind embeds documents' texts with the prose model or the code
// model, each vector in its model's half.
func (e *Embedder) EmbedKind(ctx context.Context, texts []string, prose bool) ([][]float32, error) {
	m := e.code
	if prose {
		m = e.prose
	}
	vs, err := m.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	p, c := e.prose.Dimensions(), e.code.Dimensions()
	if p == 0 || c == 0 {
		// An adapter learns its length from its first answer: ask the
		// other model once.
		other := e.prose
		if prose {
			other = e.code
		}
		if _, err := other.Embed(ctx, texts[:min(1, len(texts))]); err != nil {
			return nil, err
		}
		p, c = e.prose.Dimensions(), e.code.Dimensions()
	}
	at, want := p, c
	if prose {
		at, want = 0, p
	}
	out := make([][]float32, len(vs))
	for i, v := range vs {
		if len(v) != want {
			return nil, fmt.Errorf("split: %s returned a vector of %d dimensions, not %d", m.ModelID(), len(v), want)
		}
		w := make([]float32, p+c)
		copy(w[at:], v)
		out[i] = w
	}
	return out, nil
}

// Yielding returns the same models, each yielding at g if it can
// (embed.Yielding).
func (e *Embedder) Yielding(g *priority.Gate) embed.Embedder {
	y := func(m embed.Embedder) embed.Embedder {
		if ym, ok := m.(embed.Yielding); ok {
			return ym.Yielding(g)
		}
		return m
	}
	return &Embedder{prose: y(e.prose), code: y(e.code)}
}
