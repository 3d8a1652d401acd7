package outline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// realSources are files of this repository: what a scene would hold.
var realSources = []string{
	"outline.go", "golang.go", "heuristic.go",
	"../scene/pack.go", "../scene/sandwich.go", "../tokens/tokens.go",
	"../../../docs/bench.md",
}

// TestSavingsOnRealSources logs tokens whole and as outline for files of
// this repository, and checks that each outline is under half its file:
// on code with bodies the outline is the signatures, not the work.
func TestSavingsOnRealSources(t *testing.T) {
	sumWhole, sumOutline := 0, 0
	for _, p := range realSources {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := Render(filepath.Base(p), src)
		if !ok {
			t.Fatalf("%s not outlined", p)
		}
		whole, out := tokens.Count(string(src)), tokens.Count(o)
		sumWhole += whole
		sumOutline += out
		t.Logf("%-28s %6d tokens whole, %5d as outline (%.0f%%)", p, whole, out, 100*float64(out)/float64(whole))
		if out*2 > whole {
			t.Errorf("%s: outline %d tokens is over half the file's %d", p, out, whole)
		}
	}
	t.Logf("total: %d → %d tokens (%.1fx)", sumWhole, sumOutline, float64(sumWhole)/float64(sumOutline))
}

func BenchmarkRenderGo(b *testing.B) {
	src, err := os.ReadFile("../scene/sandwich.go")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Render("sandwich.go", src)
	}
}

func BenchmarkRenderTypeScriptHeuristic(b *testing.B) {
	src, err := os.ReadFile("testdata/fetch.ts")
	if err != nil {
		b.Fatal(err)
	}
	for range 6 {
		src = append(src, src...)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Render("a.ts", src)
	}
}
