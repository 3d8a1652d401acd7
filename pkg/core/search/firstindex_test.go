package search

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkUpsertFirstIndex indexes the first 5,000 text files of the Go
// standard library's source with the stem cache emptied first, as an
// edge's first index of a repository does: BenchmarkUpsertGoroot's later
// rounds find every stem remembered.
func BenchmarkUpsertFirstIndex(b *testing.B) {
	docs, total := gorootDocs(b, 5000, func(path, data string) bool { return !strings.ContainsRune(data, 0) })
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for i := range stems {
			stems[i].Store(nil)
		}
		ix := NewIndex()
		for _, d := range docs {
			ix.Upsert(d.Path, d)
		}
	}
}

// gorootDocs reads the first n files of the Go standard library's source
// (walk order) that want takes, as documents by their path under src, with
// their bytes in all; it skips the benchmark when there is none.
func gorootDocs(b *testing.B, n int, want func(path, data string) bool) (docs []Fields, total int) {
	root := filepath.Join(runtime.GOROOT(), "src")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(docs) == n {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err == nil && want(p, string(data)) {
				docs = append(docs, Fields{Path: strings.TrimPrefix(p, root+"/"), Body: string(data)})
				total += len(data)
			}
		}
		return nil
	})
	if len(docs) == 0 {
		b.Skip("no Go source under GOROOT:", root)
	}
	return docs, total
}
