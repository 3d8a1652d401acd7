package edge

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/vector"
)

// Stored vectors take a quarter of float32s and read back as what the
// index keeps; a store written with float32s still reads.
func TestStoredVectorsAreTheIndexsCodesAndOldOnesRead(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	const dims = 512
	v := &Vectors{Key: "app.a.go", SHA256: "abc"}
	for i := range 20 {
		vec := make([]float32, dims)
		for j := range vec {
			vec[j] = float32(r.NormFloat64())
		}
		v.Chunks = append(v.Chunks, vector.Chunk{StartLine: i*10 + 1, EndLine: i*10 + 9, Vector: vec})
	}
	b, err := encodeVectors(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > len(v.Chunks)*(dims+4)+512 {
		t.Fatalf("%d bytes for %d vectors of %d dimensions", len(b), len(v.Chunks), dims)
	}
	got, err := decodeVectors(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got.Chunks {
		want, have := make([]int8, dims), make([]int8, dims)
		ws, hs := vector.Quantize(want, v.Chunks[i].Vector), vector.Quantize(have, c.Vector)
		if ws != hs || !slices.Equal(want, have) || c.StartLine != v.Chunks[i].StartLine {
			t.Fatalf("chunk %d does not read back as the index's codes", i)
		}
	}

	// The float32 layout of earlier releases.
	head, _ := json.Marshal(vecHeader{Key: v.Key, SHA256: v.SHA256, Dims: dims, Lines: [][2]int{{1, 9}}})
	old := binary.AppendUvarint(nil, uint64(len(head)))
	old = append(old, head...)
	for _, x := range v.Chunks[0].Vector {
		old = binary.LittleEndian.AppendUint32(old, math.Float32bits(x))
	}
	back, err := decodeVectors(old)
	if err != nil || !slices.Equal(back.Chunks[0].Vector, v.Chunks[0].Vector) {
		t.Fatalf("float32 layout: %v", err)
	}
}
