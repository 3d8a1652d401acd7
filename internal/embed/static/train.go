package static

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/cuedeck/cuedeck/pkg/core/search"
)

// Pair is a description and the text it describes: what a query is
// asked as, and the document that answers it.
type Pair struct{ Query, Doc string }

// TrainOptions shape Train; zero values take the defaults.
type TrainOptions struct {
	Name        string  // the model's name (ModelID "static:<name>")
	Dims        int     // default 128
	MinCount    int     // a token in fewer texts is left out; default 5
	MaxVocab    int     // the most frequent tokens kept; default 200,000
	Epochs      int     // default 4
	Batch       int     // pairs a step, each the others' negatives; default 128
	Temperature float64 // of the contrastive softmax; default 0.05
	Rate        float64 // Adagrad's learning rate; default 0.05
	Seed        uint64
	// Progress, if set, is called after each epoch with its mean loss.
	Progress func(epoch int, loss float64)
}

func (o *TrainOptions) defaults() {
	o.Dims = cmp.Or(o.Dims, 128)
	o.MinCount = cmp.Or(o.MinCount, 5)
	o.MaxVocab = cmp.Or(o.MaxVocab, 200_000)
	o.Epochs = cmp.Or(o.Epochs, 4)
	o.Batch = cmp.Or(o.Batch, 128)
	o.Temperature = cmp.Or(o.Temperature, 0.05)
	o.Rate = cmp.Or(o.Rate, 0.05)
}

// Train learns token vectors under which each pair's two texts are closer
// than either is to the other pairs' texts of its batch (a symmetric
// InfoNCE loss over in-batch negatives), with IDF weights fixed from the
// pairs' texts.
func Train(ctx context.Context, pairs []Pair, o TrainOptions) (*Model, error) {
	o.defaults()
	if len(pairs) < o.Batch {
		return nil, fmt.Errorf("static: %d pairs, fewer than one batch of %d", len(pairs), o.Batch)
	}
	// Document frequencies over every text.
	df := map[string]int{}
	for _, p := range pairs {
		for _, s := range []string{p.Query, p.Doc} {
			for _, t := range distinct(search.Tokenize(s)) {
				df[t]++
			}
		}
	}
	var toks []string
	for t, n := range df {
		if n >= o.MinCount {
			toks = append(toks, t)
		}
	}
	sort.Slice(toks, func(i, j int) bool {
		if df[toks[i]] != df[toks[j]] {
			return df[toks[i]] > df[toks[j]]
		}
		return toks[i] < toks[j]
	})
	if len(toks) > o.MaxVocab {
		toks = toks[:o.MaxVocab]
	}
	texts := float64(2 * len(pairs))
	m := &Model{Name: o.Name, Dims: o.Dims, Vocab: make(map[string]int32, len(toks)), Weight: make([]float32, len(toks)), Vec: make([]float32, len(toks)*o.Dims)}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x5deece66d))
	scale := 1 / math.Sqrt(float64(o.Dims))
	for i, t := range toks {
		m.Vocab[t] = int32(i)
		m.Weight[i] = float32(math.Log((texts + 1) / (float64(df[t]) + 1)))
		for k := range o.Dims {
			m.Vec[i*o.Dims+k] = float32(rng.NormFloat64() * scale)
		}
	}
	qs := make([][]int32, len(pairs))
	ds := make([][]int32, len(pairs))
	for i, p := range pairs {
		qs[i], ds[i] = m.ids(p.Query), m.ids(p.Doc)
	}
	tr := newTrainer(m, o)
	order := make([]int, len(pairs))
	for i := range order {
		order[i] = i
	}
	for epoch := range o.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var loss float64
		steps := 0
		for start := 0; start+o.Batch <= len(order); start += o.Batch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			bq := make([][]int32, o.Batch)
			bd := make([][]int32, o.Batch)
			for k, i := range order[start : start+o.Batch] {
				bq[k], bd[k] = qs[i], ds[i]
			}
			loss += tr.step(bq, bd)
			steps++
		}
		if o.Progress != nil {
			o.Progress(epoch+1, loss/float64(steps))
		}
	}
	return m, nil
}

func distinct(toks []string) []string {
	seen := make(map[string]bool, len(toks))
	out := toks[:0:0]
	for _, t := range toks {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// trainer holds Adagrad's accumulated squared gradients.
type trainer struct {
	m    *Model
	o    TrainOptions
	acc  []float32
	grad map[int32][]float32
}

func newTrainer(m *Model, o TrainOptions) *trainer {
	return &trainer{m: m, o: o, acc: make([]float32, len(m.Vec)), grad: map[int32][]float32{}}
}

// pool is a text's normalised vector and the norm of its weighted sum.
type pool struct {
	unit []float32
	norm float64
}

func (tr *trainer) pool(ids []int32) pool {
	sum := tr.m.weightedSum(ids)
	var n float64
	for _, x := range sum {
		n += float64(x) * float64(x)
	}
	p := pool{unit: make([]float32, len(sum)), norm: math.Sqrt(n)}
	if p.norm > 0 {
		for k, x := range sum {
			p.unit[k] = float32(float64(x) / p.norm)
		}
	}
	return p
}

// step takes one Adagrad step on a batch and returns its loss.
func (tr *trainer) step(bq, bd [][]int32) float64 {
	b, d := len(bq), tr.m.Dims
	q := make([]pool, b)
	c := make([]pool, b)
	for i := range b {
		q[i], c[i] = tr.pool(bq[i]), tr.pool(bd[i])
	}
	inv := 1 / tr.o.Temperature
	s := make([]float64, b*b)
	for i := range b {
		for j := range b {
			var dot float64
			for k := range d {
				dot += float64(q[i].unit[k]) * float64(c[j].unit[k])
			}
			s[i*b+j] = dot * inv
		}
	}
	// dS: the softmax over each row (query to docs) and each column (doc
	// to queries), less the one-hot of the pair, averaged over the batch.
	ds := make([]float64, b*b)
	var loss float64
	// softmax adds one row's or column's softmax to dS and returns its
	// log-sum-exp, of which the loss is made.
	softmax := func(at func(k int) int) float64 {
		mx := math.Inf(-1)
		for k := range b {
			mx = max(mx, s[at(k)])
		}
		var z float64
		for k := range b {
			z += math.Exp(s[at(k)] - mx)
		}
		for k := range b {
			ds[at(k)] += math.Exp(s[at(k)]-mx) / z / float64(b)
		}
		return mx + math.Log(z)
	}
	for i := range b {
		row := softmax(func(k int) int { return i*b + k })
		col := softmax(func(k int) int { return k*b + i })
		loss += (row + col - 2*s[i*b+i]) / 2
		ds[i*b+i] -= 2 / float64(b)
	}
	clear(tr.grad)
	for i := range b {
		dq := make([]float64, d)
		dc := make([]float64, d)
		for j := range b {
			gij, gji := ds[i*b+j]*inv, ds[j*b+i]*inv
			for k := range d {
				dq[k] += gij * float64(c[j].unit[k])
				dc[k] += gji * float64(q[j].unit[k])
			}
		}
		tr.backPool(q[i], dq, bq[i])
		tr.backPool(c[i], dc, bd[i])
	}
	tr.apply()
	return loss / float64(b)
}

// backPool carries the gradient of a normalised pool back to its tokens'
// rows.
func (tr *trainer) backPool(p pool, du []float64, ids []int32) {
	if p.norm == 0 {
		return
	}
	d := tr.m.Dims
	var dot float64
	for k := range d {
		dot += du[k] * float64(p.unit[k])
	}
	for k := range d {
		du[k] = (du[k] - dot*float64(p.unit[k])) / p.norm
	}
	for _, id := range ids {
		g := tr.grad[id]
		if g == nil {
			g = make([]float32, d)
			tr.grad[id] = g
		}
		w := float64(tr.m.Weight[id])
		for k := range d {
			g[k] += float32(w * du[k])
		}
	}
}

func (tr *trainer) apply() {
	d := tr.m.Dims
	rate := float32(tr.o.Rate)
	for id, g := range tr.grad {
		base := int(id) * d
		for k, x := range g {
			a := tr.acc[base+k] + x*x
			tr.acc[base+k] = a
			tr.m.Vec[base+k] -= rate * x / (float32(math.Sqrt(float64(a))) + 1e-8)
		}
	}
}
