package builtin

import (
	"fmt"
	"github.com/cuedeck/cuedeck/internal/cpumeter"
	"sync"
)

// Block sizes of the matrix product: the micro-kernel computes an 8×32 tile
// of C, and the shared dimension is cut into slices of kBlock so that the
// 32-column strip of B being reused (16 KiB) stays in L1 cache.
const (
	tileRows = 8
	tileCols = 32
	kBlock   = 128

	// minParallelRows is the fewest rows worth sharing a product for.
	minParallelRows = 32
)

// gemm adds A·B to C, where A is m×k with row stride lda, B is k×n with row
// stride ldb and C is m×n with row stride ldc, all row-major. m must be a
// multiple of tileRows and n of tileCols; callers pad their buffers.
func gemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m%tileRows != 0 || n%tileCols != 0 {
		panic(fmt.Sprintf("gemm: %d×%d is not a multiple of the %d×%d tile", m, n, tileRows, tileCols))
	}
	if m == 0 || n == 0 || k == 0 {
		return
	}
	// The kernel reads through pointers, so check the extents here once.
	if len(a) < (m-1)*lda+k || len(b) < (k-1)*ldb+n || len(c) < (m-1)*ldc+n {
		panic("gemm: slice too short")
	}
	for k0 := 0; k0 < k; k0 += kBlock {
		kc := min(kBlock, k-k0)
		for j := 0; j < n; j += tileCols {
			for i := 0; i < m; i += tileRows {
				kernel(kc, a[i*lda+k0:], lda, b[k0*ldb+j:], ldb, c[i*ldc+j:], ldc)
			}
		}
	}
}

// gemmParallel is gemm with the columns of C shared between up to par
// goroutines, for a group that would otherwise leave cores idle. Every
// element of C is computed as gemm computes it. The goroutines it starts
// run their share through meter (the caller's share is the caller's to
// meter).
func gemmParallel(par int, meter *cpumeter.Meter, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	strips := n / tileCols
	par = min(par, strips)
	// A few rows are done before a second goroutine would be scheduled.
	if par <= 1 || m < minParallelRows {
		gemm(m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	var wg sync.WaitGroup
	next := 0
	for p := range par {
		lo, hi := next, (p+1)*strips/par*tileCols
		run := func() { gemm(m, hi-lo, k, a, lda, b[lo:], ldb, c[lo:], ldc) }
		if p < par-1 {
			wg.Go(func() { meter.Do(run) })
		} else {
			run()
		}
		next = hi
	}
	wg.Wait()
}

// kernel adds the product of an 8×k slice of A and a k×32 slice of B to
// an 8×32 tile of C. It is replaced by an assembly version where the CPU
// allows.
var kernel = kernelGo

func kernelGo(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for r := range tileRows {
		ar := a[r*lda : r*lda+k]
		cr := c[r*ldc : r*ldc+tileCols : r*ldc+tileCols]
		var acc [tileCols]float32
		copy(acc[:], cr)
		for p, av := range ar {
			br := b[p*ldb : p*ldb+tileCols : p*ldb+tileCols]
			for q := range acc {
				acc[q] += av * br[q]
			}
		}
		copy(cr, acc[:])
	}
}
