// Package static is an embedding model of static token vectors: a text's
// vector is the IDF-weighted mean of its tokens' vectors (the search
// index's tokens: identifiers split, lowercased), normalised. It costs
// microseconds a text, against milliseconds for a transformer, and is
// trained here (Train) from pairs of a description and what it describes,
// such as a Go function's doc comment and its code.
package static

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/cuedeck/cuedeck/internal/cpumeter"
	"github.com/cuedeck/cuedeck/pkg/core/search"
)

// Model is a vocabulary with a vector and an IDF weight per token.
type Model struct {
	Name   string
	Dims   int
	Vocab  map[string]int32
	Weight []float32 // per token
	Vec    []float32 // len(Vocab) × Dims, row-major
}

// ModelID names the model's vectors: "static:" and its name.
func (m *Model) ModelID() string { return "static:" + m.Name }

// Dimensions is the vectors' length.
func (m *Model) Dimensions() int { return m.Dims }

// Embed returns one L2-normalised vector per text. A text with no known
// token gets the zero vector, which is no closer to one text than to
// another. The CPU time it takes is added to the cpumeter.Meter ctx
// carries, if any.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var err error
	cpumeter.From(ctx).Do(func() {
		for i, t := range texts {
			if err = ctx.Err(); err != nil {
				return
			}
			out[i] = m.embedOne(t)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (m *Model) embedOne(text string) []float32 {
	v := m.weightedSum(m.ids(text))
	normalise(v)
	return v
}

// weightedSum is the sum of the vectors of ids, each times its weight.
func (m *Model) weightedSum(ids []int32) []float32 {
	v := make([]float32, m.Dims)
	for _, id := range ids {
		w := m.Weight[id]
		row := m.Vec[int(id)*m.Dims : int(id+1)*m.Dims]
		for k, x := range row {
			v[k] += w * x
		}
	}
	return v
}

// ids are the distinct known tokens of text, in order of appearance.
func (m *Model) ids(text string) []int32 {
	var out []int32
	seen := map[int32]bool{}
	for _, tok := range search.Tokenize(text) {
		id, ok := m.Vocab[tok]
		if ok && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func normalise(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for k := range v {
		v[k] *= inv
	}
}

// magic opens a model file; the version follows it.
const magic = "CUESTATIC"

const fileVersion = 1

// Save writes m to path (through a temporary file and a rename).
func (m *Model) Save(path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	words := make([]string, len(m.Vocab))
	for tok, id := range m.Vocab {
		words[id] = tok
	}
	put := func(v any) {
		if err == nil {
			err = binary.Write(w, binary.LittleEndian, v)
		}
	}
	_, err = w.WriteString(magic)
	put(uint32(fileVersion))
	put(uint32(len(m.Name)))
	if err == nil {
		_, err = w.WriteString(m.Name)
	}
	put(uint32(m.Dims))
	put(uint32(len(words)))
	for _, wd := range words {
		put(uint16(len(wd)))
		if err == nil {
			_, err = w.WriteString(wd)
		}
	}
	put(m.Weight)
	put(m.Vec)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("static: save %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// maxVocab and maxDims bound what Load accepts, so that a damaged header
// fails with an error rather than an allocation of its size.
const (
	maxVocab = 4 << 20
	maxDims  = 4096
)

// Load reads a model Save wrote.
func Load(path string) (*Model, error) {
	f, err := openModel(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("static: %s is not a model this version reads (train it again): %w", path, err)
	}
	return m, nil
}

// IDOf is the ModelID of the model file at path, read from its header
// alone: a configuration is checked without loading the vectors.
func IDOf(path string) (string, error) {
	f, err := openModel(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h, err := readHeader(bufio.NewReader(f))
	if err != nil {
		return "", fmt.Errorf("static: %s is not a model this version reads (train it again): %w", path, err)
	}
	return (&Model{Name: h.name}).ModelID(), nil
}

// openModel opens the model file at path, with the remedy in its error.
func openModel(path string) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("static: no model file %s: train one there (cue eval train --out %s) or give the path of one in [embed] model", path, path)
	}
	if err != nil {
		return nil, fmt.Errorf("static: %w", err)
	}
	return f, nil
}

type header struct {
	name    string
	dims, n uint32
}

func readHeader(r io.Reader) (header, error) {
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != magic {
		return header{}, errors.New("no model header")
	}
	var version, nameLen, dims, n uint32
	get := func(v any) error { return binary.Read(r, binary.LittleEndian, v) }
	if err := get(&version); err != nil || version != fileVersion {
		return header{}, fmt.Errorf("version %d", version)
	}
	if err := get(&nameLen); err != nil || nameLen > 1024 {
		return header{}, errors.New("bad name")
	}
	name := make([]byte, nameLen)
	if _, err := io.ReadFull(r, name); err != nil {
		return header{}, err
	}
	if err := get(&dims); err != nil || dims == 0 || dims > maxDims {
		return header{}, fmt.Errorf("bad dimensions %d", dims)
	}
	if err := get(&n); err != nil || n > maxVocab {
		return header{}, fmt.Errorf("bad vocabulary size %d", n)
	}
	return header{name: string(name), dims: dims, n: n}, nil
}

func read(r io.Reader) (*Model, error) {
	h, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	get := func(v any) error { return binary.Read(r, binary.LittleEndian, v) }
	m := &Model{Name: h.name, Dims: int(h.dims), Vocab: make(map[string]int32, h.n)}
	for i := range h.n {
		var l uint16
		if err := get(&l); err != nil {
			return nil, err
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		m.Vocab[string(b)] = int32(i)
	}
	m.Weight = make([]float32, h.n)
	m.Vec = make([]float32, int(h.n)*int(h.dims))
	if err := get(m.Weight); err != nil {
		return nil, err
	}
	if err := get(m.Vec); err != nil {
		return nil, err
	}
	return m, nil
}
