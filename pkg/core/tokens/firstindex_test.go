package tokens

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// gorootFiles reads the first n text files of the Go standard library's
// source, in walk order.
func gorootFiles(b *testing.B, n int) []string {
	root := filepath.Join(runtime.GOROOT(), "src")
	var files []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(files) == n {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err == nil && !strings.ContainsRune(string(data), 0) {
				files = append(files, string(data))
			}
		}
		return nil
	})
	if len(files) == 0 {
		b.Skip("no Go source under GOROOT:", root)
	}
	return files
}

// BenchmarkCounterFirstIndex counts 5,000 GOROOT files with the piece
// table emptied first, as a first index of a repository does: most pieces
// are met for the first time and merged, where BenchmarkCount's repeated
// text finds them remembered.
func BenchmarkCounterFirstIndex(b *testing.B) {
	files := gorootFiles(b, 5000)
	n := 0
	for _, f := range files {
		n += len(f)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		for i := range pieceCounts {
			pieceCounts[i].Store(0)
		}
		for _, f := range files {
			NewCounter(f).Release()
		}
	}
}
