//go:build !purego

package vector

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		dotRow = dotF8AVX2
	}
}

// dotF8AVX2 is dotF8 with the widening, conversion and multiply-add done
// eight lanes at a time; the scan is then bound by memory alone.
func dotF8AVX2(a []float32, b []int8) float32 {
	b = b[:len(a)]
	n := len(a) &^ 31
	var s float32
	if n > 0 {
		s = dotF8AVX2Asm(unsafe.SliceData(a), unsafe.SliceData(b), n)
	}
	for i := n; i < len(a); i++ {
		s += a[i] * float32(b[i])
	}
	return s
}

// dotF8AVX2Asm sums a[i]·b[i] for i < n, n a positive multiple of 32.
//
//go:noescape
func dotF8AVX2Asm(a *float32, b *int8, n int) float32
