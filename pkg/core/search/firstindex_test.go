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
	root := filepath.Join(runtime.GOROOT(), "src")
	var docs []Fields
	total := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(docs) == 5000 {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err == nil && !strings.ContainsRune(string(data), 0) {
				docs = append(docs, Fields{Path: strings.TrimPrefix(p, root+"/"), Body: string(data)})
				total += len(data)
			}
		}
		return nil
	})
	if len(docs) == 0 {
		b.Skip("no Go source under GOROOT:", root)
	}
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
