package builtin

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGemm(t *testing.T) { testGemm(t) }

// testGemm checks gemm, with whichever kernel is installed, against a
// float64 product.
func testGemm(t *testing.T) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	m, n, k := 8, 32, 300
	a := make([]float32, m*k)
	b := make([]float32, k*n)
	for i := range a {
		a[i] = r.Float32() - 0.5
	}
	for i := range b {
		b[i] = r.Float32() - 0.5
	}
	got := make([]float32, m*n)
	gemm(m, n, k, a, k, b, n, got, n)
	want := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			want[i*n+j] = float32(s)
		}
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-4 {
			t.Fatalf("c[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}

func TestGemmParallelMatchesGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m, n, k := 40, 5*tileCols, 70
	a := make([]float32, m*k)
	b := make([]float32, k*n)
	for i := range a {
		a[i] = r.Float32() - 0.5
	}
	for i := range b {
		b[i] = r.Float32() - 0.5
	}
	want := make([]float32, m*n)
	gemm(m, n, k, a, k, b, n, want, n)
	for par := 1; par <= 6; par++ {
		got := make([]float32, m*n)
		gemmParallel(par, nil, m, n, k, a, k, b, n, got, n)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("par %d: c[%d] = %g, want %g", par, i, got[i], want[i])
			}
		}
	}
}
