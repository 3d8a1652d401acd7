//go:build !purego

package builtin

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		kernel = kernelAVX2
	}
}

func kernelAVX2(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	kernel4x16AVX2(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, unsafe.SliceData(c), ldc)
}

// kernel4x16AVX2 is kernelGo with eight YMM accumulators and fused
// multiply-adds. gemm has checked the extents.
//
//go:noescape
func kernel4x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
