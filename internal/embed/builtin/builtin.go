package builtin

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cuedeck/cuedeck/internal/cpumeter"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/priority"
	"github.com/cuedeck/cuedeck/internal/version"
)

const (
	// ModelID names this model in vector caches.
	ModelID = version.EmbeddingModel
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
	// gate, if set, holds each group back while foreground work runs.
	gate *priority.Gate
}

var (
	_ embed.Embedder = (*Embedder)(nil)
	_ embed.Yielding = (*Embedder)(nil)
)

// Yielding returns an Embedder of the same model that waits at g before
// each group of texts (at most 128 tokens of work, a few milliseconds), so
// embedding in the background gives way to foreground work.
func (e *Embedder) Yielding(g *priority.Gate) embed.Embedder { return &Embedder{gate: g} }

// New returns an Embedder. The model is loaded by the first call to Embed.
func New() *Embedder { return &Embedder{} }

// ModelID returns "builtin:use-lite".
func (e *Embedder) ModelID() string { return ModelID }

// Dimensions returns 512.
func (e *Embedder) Dimensions() int { return Dimensions }

// Window returns 128, the most tokens of a text the model sees: Embed
// clips the rest, so chunkers cut text to fit it.
func (e *Embedder) Window() int { return maxTokens }

// CountTokens returns how many of the model's tokens text holds, all of
// them, though Embed sees only the first Window. It loads the model on
// first use and returns the error of loading it.
func (e *Embedder) CountTokens(text string) (int, error) {
	m, err := sharedModel()
	if err != nil {
		return 0, err
	}
	return len(m.tok.allTokens(text)), nil
}

// Embed returns one L2-normalised 512-dimensional vector per text, in order.
// Each text is cut at 128 tokens. Short texts are embedded in groups and
// the groups spread over up to GOMAXPROCS goroutines; ctx is checked
// before each group (at most 128 tokens of work), and if it is done Embed
// returns ctx.Err(). A Yielding embedder takes a place at its gate before
// each group (priority.Gate.Acquire): it waits for foreground work to
// stop, and the groups of all its calls at once keep to the gate's
// background cores. The CPU time of the work is added to the
// cpumeter.Meter ctx carries, if any. An error loading the embedded model
// is returned as is.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, ctx.Err()
	}
	m, err := sharedModel()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	meter := cpumeter.From(ctx)
	seqs := make([][]int, len(texts))
	total := 0
	meter.Do(func() {
		for i, text := range texts {
			seqs[i] = m.tok.tokens(text)
			total += len(seqs[i])
		}
	})
	// Every core, unless a gate keeps background work to fewer.
	cores := e.gate.BackgroundCores()
	workers := max(1, min(cores, len(texts)))
	groups := makeGroups(seqs, max(1, min(maxGroupTokens, (total+workers-1)/workers)))
	// With fewer groups than cores, the dense products of each group share
	// the spare ones.
	par := max(1, cores/len(groups))
	workers = min(workers, len(groups))

	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*Dimensions)
	for i := range out {
		out[i] = flat[i*Dimensions : (i+1)*Dimensions : (i+1)*Dimensions]
	}
	var next atomic.Int64
	work := func() {
		s, _ := e.scratch.Get().(*scratch)
		if s == nil {
			s = newScratch()
		}
		defer e.scratch.Put(s)
		s.par, s.meter = par, meter
		for {
			g := int(next.Add(1)) - 1
			if g >= len(groups) {
				return
			}
			release, err := e.gate.Acquire(ctx)
			if err != nil {
				return
			}
			lo, hi := groups[g][0], groups[g][1]
			if onGroup != nil {
				onGroup(+1)
			}
			meter.Do(func() { m.embedGroup(seqs[lo:hi], s, out[lo:hi]) })
			if onGroup != nil {
				onGroup(-1)
			}
			release()
		}
	}
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

// onGroup, when a test sets it, is told as each group starts (+1) and
// ends (-1).
var onGroup func(delta int)

// makeGroups cuts seqs, in order, into [lo, hi) runs of at most
// maxGroupTexts sequences holding at most limit tokens between them (or one
// sequence, if it alone is longer).
func makeGroups(seqs [][]int, limit int) [][2]int {
	var groups [][2]int
	lo, tokens := 0, 0
	for i, ids := range seqs {
		if i > lo && (tokens+len(ids) > limit || i-lo == maxGroupTexts) {
			groups = append(groups, [2]int{lo, i})
			lo, tokens = i, 0
		}
		tokens += len(ids)
	}
	if lo < len(seqs) {
		groups = append(groups, [2]int{lo, len(seqs)})
	}
	return groups
}
