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
	kernel4x32AVX512(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, unsafe.SliceData(c), ldc)
}

func kernelAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	kernel4x16AVX2(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, unsafe.SliceData(c), ldc)
	kernel4x16AVX2(k, unsafe.SliceData(a), lda, unsafe.SliceData(b[16:]), ldb, unsafe.SliceData(c[16:]), ldc)
}

// kernel4x16AVX2 adds a 4×k by k×16 product to C with eight YMM
// accumulators and fused multiply-adds. gemm has checked the extents.
//
//go:noescape
func kernel4x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// kernel4x32AVX512 is kernel4x16AVX2 twice as wide, on ZMM registers.
//
//go:noescape
func kernel4x32AVX512(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
