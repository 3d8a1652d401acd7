package events_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// BenchmarkDecodeDocRecord decodes the records of net/http's Go files as
// an edge decodes what indexers put in cue_docs: text and chunks.
func BenchmarkDecodeDocRecord(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src", "net", "http")
	entries, err := os.ReadDir(root)
	if err != nil {
		b.Skip("no Go source under GOROOT:", err)
	}
	var encoded [][]byte
	size := 0
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".go" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		rec := docparse.Build("r", e.Name(), string(data))
		rec.Content = string(data)
		rec.SourceSeq = 1
		rec.SHA256 = fmt.Sprintf("%064x", len(data))
		v, err := events.Encode(rec)
		if err != nil {
			b.Fatal(err)
		}
		encoded = append(encoded, v)
		size += len(v)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, v := range encoded {
			if _, err := events.DecodeDocRecord(v); err != nil {
				b.Fatal(err)
			}
		}
	}
}
