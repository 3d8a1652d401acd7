//go:build !purego

package builtin

import (
	"testing"

	"golang.org/x/sys/cpu"
)

func TestGemmKernels(t *testing.T) {
	saved := kernel
	t.Cleanup(func() { kernel = saved })
	for _, k := range []struct {
		name string
		ok   bool
		fn   func(int, []float32, int, []float32, int, []float32, int)
	}{
		{"go", true, kernelGo},
		{"avx2", cpu.X86.HasAVX2 && cpu.X86.HasFMA, kernelAVX2},
		{"avx512", cpu.X86.HasAVX512F, kernelAVX512},
	} {
		t.Run(k.name, func(t *testing.T) {
			if !k.ok {
				t.Skip("CPU lacks the instructions")
			}
			kernel = k.fn
			testGemm(t)
		})
	}
}

func BenchmarkGemmKernels(b *testing.B) {
	saved := kernel
	b.Cleanup(func() { kernel = saved })
	m, n, k := 128, 1536, 512
	x := make([]float32, m*k)
	w := make([]float32, k*n)
	c := make([]float32, m*n)
	for _, kc := range []struct {
		name string
		ok   bool
		fn   func(int, []float32, int, []float32, int, []float32, int)
	}{
		{"go", true, kernelGo},
		{"avx2", cpu.X86.HasAVX2 && cpu.X86.HasFMA, kernelAVX2},
		{"avx512", cpu.X86.HasAVX512F, kernelAVX512},
	} {
		b.Run(kc.name, func(b *testing.B) {
			if !kc.ok {
				b.Skip("CPU lacks the instructions")
			}
			kernel = kc.fn
			for b.Loop() {
				gemm(m, n, k, x, k, w, n, c, n)
			}
			b.ReportMetric(float64(b.N*m*n*k)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}
