//go:build !unix

package bench

import "io/fs"

func allocatedBytes(fi fs.FileInfo) int64 { return fi.Size() }
