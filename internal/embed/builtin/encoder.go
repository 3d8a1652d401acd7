package builtin

import (
	"fmt"
	"math"

	"github.com/cuedeck/cuedeck/internal/cpumeter"
)

const (
	embedDim   = 256 // token embedding width
	modelDim   = 512 // width after layer 0 and of the output
	ffnDim     = 1536
	heads      = 4
	vocabRows  = 8002
	timescales = 128
	lnEpsilon  = 1e-6
)

// layer is one transformer layer. Layer 0 widens its input from 256 to 512
// through a dense residual projection; layer 1 keeps 512.
type layer struct {
	in, attn int // input width; width of q, k and v (heads × head size)

	resW, resB   []float32 // in×modelDim, or nil for an identity residual
	lnScale, lnB []float32 // before attention, width in
	qkvW, qkvB   []float32 // in×3·attn
	qScale       float32
	outW, outB   []float32 // attn×modelDim
	ffnLNScale   []float32 // before the feed-forward block, width modelDim
	ffnLNB       []float32
	ffn1W, ffn1B []float32 // modelDim×ffnDim
	ffn2W, ffn2B []float32 // ffnDim×modelDim
	headSize     int
}

// model holds the weights, ready to run.
type model struct {
	tok        *tokenizer
	embeddings []float32 // vocabRows×embedDim
	timing     []float32 // maxTokens×embedDim: sin‖cos of position × inverse timescale
	layers     [2]layer
	poolW      []float32 // modelDim×modelDim
	poolB      []float32
}

func loadModel() (*model, error) {
	all, err := readTensors()
	if err != nil {
		return nil, err
	}
	vocab, err := modelFS.ReadFile("model/vocab.json")
	if err != nil {
		return nil, err
	}
	tok, err := newTokenizer(vocab)
	if err != nil {
		return nil, err
	}
	s := &tensorSet{all: all}
	m := &model{
		tok:        tok,
		embeddings: s.get("module/Embeddings_en", vocabRows, embedDim),
		poolW:      s.get("tanh_layer_0/weights", modelDim, modelDim),
		poolB:      s.get("tanh_layer_0/bias", modelDim),
	}
	inv := s.get("AddTimingSignal/TimingSignal/ExpandDims_1", 1, timescales)
	for i, in := range []int{embedDim, modelDim} {
		l := &m.layers[i]
		p := fmt.Sprintf("Encode/Layer_%d/TransformerLayer/", i)
		ps := fmt.Sprintf("TransformerStack/Layer_%d/TransformerLayer/", i)
		attn := in
		l.in, l.attn, l.headSize = in, attn, attn/heads
		if i == 0 {
			l.resW = s.get(p+"dense/kernel/ConcatPartitions/concat", in, modelDim)
			l.resB = s.get(p+"dense/bias/ConcatPartitions/concat", modelDim)
		}
		l.lnScale = s.get(p+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", in)
		l.lnB = s.get(p+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", in)
		l.qkvW = s.get(p+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, in, 3*attn)
		l.qkvB = s.get(p+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*attn)
		if q := s.get(ps + "MultiheadAttention/mul/y"); len(q) == 1 {
			l.qScale = q[0]
		}
		l.outW = s.get(p+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, attn, modelDim)
		l.outB = s.get(p+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", modelDim)
		l.ffnLNScale = s.get(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", modelDim)
		l.ffnLNB = s.get(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", modelDim)
		l.ffn1W = s.get(ps+"FFN/conv1/Tensordot/Reshape_1", modelDim, ffnDim)
		l.ffn1B = s.get(p+"FFN/conv1/bias/ConcatPartitions/concat", ffnDim)
		l.ffn2W = s.get(ps+"FFN/conv2/Tensordot/Reshape_1", ffnDim, modelDim)
		l.ffn2B = s.get(p+"FFN/conv2/bias/ConcatPartitions/concat", modelDim)
	}
	if s.err != nil {
		return nil, s.err
	}
	m.timing = make([]float32, maxTokens*embedDim)
	for pos := range maxTokens {
		row := m.timing[pos*embedDim:]
		for j, f := range inv {
			angle := float64(float32(pos) * f)
			row[j] = float32(math.Sin(angle))
			row[timescales+j] = float32(math.Cos(angle))
		}
	}
	return m, nil
}

// A group is texts embedded together: their tokens are stacked into one
// matrix so that the dense layers read each weight once for the group, and
// only attention and pooling look at texts one by one. Rows are
// independent in every product, so a text's vector does not depend on its
// group.
const (
	maxGroupTokens = maxTokens
	maxGroupTexts  = 64
	// scratchRows leaves room for the last text's attention tile, which
	// may run up to tileRows-1 rows past the group.
	scratchRows = maxGroupTokens + tileRows
)

// scratch is one worker's buffers, sized for the largest group so that
// embedding allocates nothing but the result.
type scratch struct {
	x, res, h, qkv, ctx, ffn, scores, kt []float32
	pooled, hidden                       []float32
	// par is how many goroutines share each dense product: more than one
	// when there are fewer groups than cores.
	par int
	// meter, if set, counts the CPU time of the goroutines a product
	// starts.
	meter *cpumeter.Meter
}

func newScratch() *scratch {
	return &scratch{
		x:      make([]float32, scratchRows*modelDim),
		res:    make([]float32, scratchRows*modelDim),
		h:      make([]float32, scratchRows*modelDim),
		qkv:    make([]float32, scratchRows*3*modelDim),
		ctx:    make([]float32, scratchRows*modelDim),
		ffn:    make([]float32, scratchRows*ffnDim),
		scores: make([]float32, roundUp(maxTokens, tileRows)*roundUp(maxTokens, tileCols)),
		kt:     make([]float32, modelDim/heads*roundUp(maxTokens, tileCols)),
		pooled: make([]float32, maxGroupTexts*modelDim),
		hidden: make([]float32, maxGroupTexts*modelDim),
	}
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// segment is one text's rows in a group.
type segment struct{ off, n int }

// embedGroup writes the L2-normalised embedding of each token sequence in
// seqs to the matching element of outs. The sequences hold at most
// maxGroupTokens ids between them and number at most maxGroupTexts.
func (m *model) embedGroup(seqs [][]int, s *scratch, outs [][]float32) {
	segs := make([]segment, len(seqs))
	total := 0
	for i, ids := range seqs {
		segs[i] = segment{total, len(ids)}
		total += len(ids)
	}
	rows := roundUp(total, tileRows)
	// Rows past total are padding that the products carry along; keep
	// them zero so they stay finite.
	x := s.x[:rows*embedDim]
	clear(x)
	for i, ids := range seqs {
		for p, id := range ids {
			e := m.embeddings[id*embedDim : (id+1)*embedDim]
			t := m.timing[p*embedDim : (p+1)*embedDim]
			xr := x[(segs[i].off+p)*embedDim:][:embedDim]
			for j := range xr {
				// The graph adds the looked-up embedding twice.
				xr[j] = e[j] + (e[j] + t[j])
			}
		}
	}
	y := s.res[:rows*modelDim]
	if total > 0 {
		m.layers[0].forward(segs, rows, x, y, s)
		copy(s.x[:rows*modelDim], y)
		m.layers[1].forward(segs, rows, s.x[:rows*modelDim], y, s)
	}

	// Mean over each text's tokens; a text with none pools to zero, as in
	// the graph.
	texts := roundUp(len(seqs), tileRows)
	pooled := s.pooled[:texts*modelDim]
	clear(pooled)
	for i, sg := range segs {
		pr := pooled[i*modelDim : (i+1)*modelDim]
		for r := sg.off; r < sg.off+sg.n; r++ {
			for j, v := range y[r*modelDim : (r+1)*modelDim] {
				pr[j] += v
			}
		}
		inv := 1 / float32(max(sg.n, 1))
		for j := range pr {
			pr[j] *= inv
		}
	}
	hidden := s.hidden[:texts*modelDim]
	fillRows(hidden, texts, modelDim, m.poolB)
	gemmParallel(s.par, s.meter, texts, modelDim, modelDim, pooled, modelDim, m.poolW, modelDim, hidden, modelDim)
	for i, out := range outs {
		var sum float32
		for j, v := range hidden[i*modelDim : (i+1)*modelDim] {
			v = float32(math.Tanh(float64(v)))
			out[j] = v
			sum += v * v
		}
		norm := float32(1 / math.Sqrt(float64(max(sum, 1e-12))))
		for j := range out {
			out[j] *= norm
		}
	}
}

// forward runs the layer on x (rows×in, holding the texts segs) and writes
// the result to y (rows×modelDim).
func (l *layer) forward(segs []segment, rows int, x, y []float32, s *scratch) {
	// Residual: a dense projection in layer 0, the input itself in layer 1.
	if l.resW != nil {
		fillRows(y, rows, modelDim, l.resB)
		gemmParallel(s.par, s.meter, rows, modelDim, l.in, x, l.in, l.resW, modelDim, y, modelDim)
	} else {
		copy(y, x[:rows*modelDim])
	}

	h := s.h[:rows*l.in]
	layerNorm(h, x, rows, l.in, l.lnScale, l.lnB)
	qkv := s.qkv[:rows*3*l.attn]
	fillRows(qkv, rows, 3*l.attn, l.qkvB)
	gemmParallel(s.par, s.meter, rows, 3*l.attn, l.in, h, l.in, l.qkvW, 3*l.attn, qkv, 3*l.attn)

	ctx := s.ctx[:rows*l.attn]
	clear(ctx)
	for _, sg := range segs {
		if sg.n > 0 {
			// Full buffers: the last tile of a text may pass rows.
			l.attention(sg.n, s.qkv[sg.off*3*l.attn:], s.ctx[sg.off*l.attn:], s)
		}
	}

	// y = residual + ctx·Wo + bo
	addBias(y, rows, modelDim, l.outB)
	gemmParallel(s.par, s.meter, rows, modelDim, l.attn, ctx, l.attn, l.outW, modelDim, y, modelDim)

	// y += FFN(LN(y))
	h = s.h[:rows*modelDim]
	layerNorm(h, y, rows, modelDim, l.ffnLNScale, l.ffnLNB)
	f := s.ffn[:rows*ffnDim]
	fillRows(f, rows, ffnDim, l.ffn1B)
	gemmParallel(s.par, s.meter, rows, ffnDim, modelDim, h, modelDim, l.ffn1W, ffnDim, f, ffnDim)
	for i, v := range f {
		if v < 0 {
			f[i] = 0
		}
	}
	addBias(y, rows, modelDim, l.ffn2B)
	gemmParallel(s.par, s.meter, rows, modelDim, ffnDim, f, ffnDim, l.ffn2W, modelDim, y, modelDim)
}

// attention computes softmax(q·kᵀ)·v per head over one text's n tokens,
// whose q‖k‖v rows start qkv, and adds it to the rows starting ctx. The
// products run on whole tiles; rows past n get exactly zero added.
func (l *layer) attention(n int, qkv, ctx []float32, s *scratch) {
	rows := roundUp(n, tileRows)
	stride := 3 * l.attn
	cols := roundUp(n, tileCols)
	d := l.headSize
	// Scale q in place, as the graph does before the product.
	for i := range n {
		q := qkv[i*stride : i*stride+l.attn]
		for j := range q {
			q[j] *= l.qScale
		}
	}
	for hd := range heads {
		// kᵀ for this head: d×cols, padding columns zero.
		kt := s.kt[:d*cols]
		clear(kt)
		for i := range n {
			k := qkv[i*stride+l.attn+hd*d:]
			for j := range d {
				kt[j*cols+i] = k[j]
			}
		}
		scores := s.scores[:rows*cols]
		clear(scores)
		gemm(rows, cols, d, qkv[hd*d:], stride, kt, cols, scores, cols)
		for i := range n {
			softmax(scores[i*cols : i*cols+n])
		}
		// ctx_h += p·v_h, with the padding rows of p left zero.
		for i := n; i < rows; i++ {
			clear(scores[i*cols : i*cols+n])
		}
		gemm(rows, d, n, scores, cols, qkv[2*l.attn+hd*d:], stride, ctx[hd*d:], l.attn)
	}
}

func softmax(v []float32) {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	var sum float32
	for i, x := range v {
		e := expNonPositive(x - m)
		v[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range v {
		v[i] *= inv
	}
}

// expNonPositive is e^x for x ≤ 0 in float32, within a few ulp: Cephes'
// expf, several times faster than math.Exp, which dominated softmax.
func expNonPositive(x float32) float32 {
	if x < -80 {
		return 0 // below 1e-34: nothing beside the softmax maximum's 1
	}
	const (
		log2e = 1.44269504088896341
		ln2Hi = 0.693359375
		ln2Lo = -2.12194440e-4
	)
	n := float32(int32(x*log2e - 0.5)) // round half away from zero, x ≤ 0
	r := x - n*ln2Hi - n*ln2Lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	y := p*r*r + r + 1
	return math.Float32frombits(math.Float32bits(y) + uint32(int32(n))<<23)
}

// layerNorm writes (x-mean)/sqrt(var+eps)·scale+bias of each row of x to dst.
func layerNorm(dst, x []float32, rows, width int, scale, bias []float32) {
	for i := range rows {
		xr := x[i*width : (i+1)*width]
		dr := dst[i*width : (i+1)*width]
		var mean float32
		for _, v := range xr {
			mean += v
		}
		mean /= float32(width)
		var variance float32
		for _, v := range xr {
			d := v - mean
			variance += d * d
		}
		variance /= float32(width)
		r := float32(1 / math.Sqrt(float64(variance+lnEpsilon)))
		for j, v := range xr {
			dr[j] = scale[j]*r*(v-mean) + bias[j]
		}
	}
}

func fillRows(dst []float32, rows, width int, row []float32) {
	for i := range rows {
		copy(dst[i*width:(i+1)*width], row)
	}
}

func addBias(dst []float32, rows, width int, bias []float32) {
	for i := range rows {
		r := dst[i*width : (i+1)*width]
		for j, b := range bias {
			r[j] += b
		}
	}
}
