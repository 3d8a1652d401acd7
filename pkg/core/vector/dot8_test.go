package vector

import (
	"math"
	"math/rand/v2"
	"testing"
)

func BenchmarkDot8(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	x, y := unit(rng, 512), unit(rng, 512)
	cy := make([]int8, 512)
	Quantize(cy, y)
	b.Run("f32xint8", func(b *testing.B) {
		var s float32
		for b.Loop() {
			s += dotRow(x, cy)
		}
		_ = s
	})
}

// Re-upserting what Get returns stores the same vectors: the edge parks a
// stale document's chunks with Get and restores them later.
func TestQuantisedRoundTripIsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ix := New(64)
	must(t, ix.Upsert("a", randomChunks(rng, 3, 64)))
	first, _ := ix.Get("a")
	must(t, ix.Upsert("a", first))
	second, _ := ix.Get("a")
	for i := range first {
		for j := range first[i].Vector {
			if first[i].Vector[j] != second[i].Vector[j] {
				t.Fatalf("chunk %d dim %d: %v then %v", i, j, first[i].Vector[j], second[i].Vector[j])
			}
		}
	}
	must(t, ix.Upsert("zero", []Chunk{{StartLine: 1, EndLine: 1, Vector: make([]float32, 64)}}))
	if hits := ix.Search(first[0].Vector, 2, nil); len(hits) != 2 || hits[0].ID != "a" || hits[1].Score != 0 {
		t.Fatalf("hits = %+v", hits)
	}
}

// The row kernel in use (assembly where the CPU has it) agrees with the Go
// one for lengths around the 32-lane blocks.
func TestDotRowMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 31, 32, 33, 64, 100, 384, 512, 777} {
		a := make([]float32, n)
		b := make([]int8, n+3) // longer rows are allowed
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = int8(rng.IntN(255) - 127)
		}
		got, want := dotRow(a, b), dotF8(a, b)
		if d := math.Abs(float64(got - want)); d > 1e-4*math.Max(1, math.Abs(float64(want))) {
			t.Errorf("n=%d: dotRow %v, dotF8 %v", n, got, want)
		}
	}
}

func TestScoreAgreesWithSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ix := New(32)
	for i := range 50 {
		must(t, ix.Upsert(string(rune('A'+i)), randomChunks(rng, 1+i%4, 32)))
	}
	q := unit(rng, 32)
	for _, h := range ix.Search(q, 50, nil) {
		got, ok := ix.Score(q, h.ID)
		if !ok || got != h {
			t.Fatalf("Score(%s) = %+v, %v; Search gave %+v", h.ID, got, ok, h)
		}
	}
	if _, ok := ix.Score(q, "missing"); ok {
		t.Fatal("Score of an unknown id")
	}
	if _, ok := ix.Score(q[:3], "A"); ok {
		t.Fatal("Score of a short query")
	}
}
