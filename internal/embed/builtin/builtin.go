package builtin

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cuedeck/cuedeck/internal/embed"
)

const (
	// ModelID names this model in vector caches.
	ModelID = "builtin:use-lite"
	// Dimensions is the length of every vector.
	Dimensions = modelDim
)

// sharedModel loads the weights once per process, on the first Embed, so
// that starting a binary that might never embed stays fast.
var sharedModel = sync.OnceValues(func() (*model, error) {
	m, err := loadModel()
	if err != nil {
		return nil, fmt.Errorf("builtin: load model: %w", err)
	}
	return m, nil
})

// Embedder embeds texts with USE Lite. Its zero value is ready to use and
// it is safe for concurrent use.
type Embedder struct {
	scratch sync.Pool // *scratch, one per worker in flight
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an Embedder. The model is loaded by the first call to Embed.
func New() *Embedder { return &Embedder{} }

// ModelID returns "builtin:use-lite".
func (e *Embedder) ModelID() string { return ModelID }

// Dimensions returns 512.
func (e *Embedder) Dimensions() int { return Dimensions }

// Embed returns one L2-normalised 512-dimensional vector per text, in order.
// Each text is cut at 128 tokens. Texts are spread over up to GOMAXPROCS
// goroutines; ctx is checked before each text, and if it is done Embed
// returns ctx.Err(). An error loading the embedded model is returned as is.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m, err := sharedModel()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*Dimensions)
	var next atomic.Int64
	work := func() {
		s, _ := e.scratch.Get().(*scratch)
		if s == nil {
			s = newScratch()
		}
		defer e.scratch.Put(s)
		for {
			i := int(next.Add(1)) - 1
			if i >= len(texts) || ctx.Err() != nil {
				return
			}
			v := flat[i*Dimensions : (i+1)*Dimensions : (i+1)*Dimensions]
			m.embed(m.tok.tokens(texts[i]), s, v)
			out[i] = v
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
