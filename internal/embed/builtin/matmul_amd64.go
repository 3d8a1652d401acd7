//go:build !purego

package builtin

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

func init() {
	switch {
	case cpu.X86.HasAVX512F:
		kernel = kernelAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		kernel = kernelAVX2
	}
}

func kernelAVX512(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	kernel8x32AVX512(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, unsafe.SliceData(c), ldc)
}

// kernelAVX2 covers the 8×32 tile with four 4×16 kernels.
func kernelAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for r := 0; r < tileRows; r += 4 {
		for q := 0; q < tileCols; q += 16 {
			kernel4x16AVX2(k, unsafe.SliceData(a[r*lda:]), lda, unsafe.SliceData(b[q:]), ldb, unsafe.SliceData(c[r*ldc+q:]), ldc)
		}
	}
}

// kernel4x16AVX2 adds a 4×k by k×16 product to C with eight YMM
// accumulators and fused multiply-adds. gemm has checked the extents.
//
//go:noescape
func kernel4x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// kernel8x32AVX512 adds a 8×k by k×32 product to C with sixteen ZMM
// accumulators.
//
//go:noescape
func kernel8x32AVX512(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
