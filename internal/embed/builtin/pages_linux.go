package builtin

import (
	"os"
	"syscall"
	"unsafe"
)

// releasePages tells the kernel the pages wholly inside s, which lives in
// the executable's read-only data, are not needed: they leave the
// process's resident set and, if read again, are read back from the
// executable unchanged (MADV_DONTNEED on a file mapping never written).
func releasePages(s string) {
	if len(s) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	first := int((page - start%page) % page)
	last := int((start+uintptr(len(s)))&^(page-1) - start)
	if last <= first {
		return
	}
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	// Advice only: on failure the pages stay resident, as without it.
	_ = syscall.Madvise(b[first:last], syscall.MADV_DONTNEED)
}
