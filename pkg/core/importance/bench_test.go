package importance

import (
	"fmt"
	"testing"
	"time"
)

// benchRepo is a Go repo of n files in n/10 packages, each file importing
// three packages, with a tenth of the files changed recently and a few in
// error stacks: the edge recomputes this after a repo's documents change.
func benchRepo(n int) ([]File, map[string][]time.Time, map[string][]time.Time) {
	files := make([]File, n)
	changes := make(map[string][]time.Time)
	errs := make(map[string][]time.Time)
	pkgs := max(n/10, 1)
	for i := range files {
		p := fmt.Sprintf("internal/p%d/f%d.go", i%pkgs, i)
		f := File{Path: p}
		for k := 1; k <= 3; k++ {
			f.Imports = append(f.Imports, fmt.Sprintf("example.com/m/internal/p%d", (i*7+k)%pkgs), "fmt")
		}
		files[i] = f
		if i%10 == 0 {
			changes[p] = []time.Time{fixtureNow.Add(-time.Duration(i) * time.Hour)}
		}
		if i%97 == 0 {
			errs[p] = []time.Time{fixtureNow.Add(-time.Hour)}
		}
	}
	return files, changes, errs
}

func BenchmarkImportance(b *testing.B) {
	for _, n := range []int{500, 10_000} {
		files, changes, errs := benchRepo(n)
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			for b.Loop() {
				refs := References(files, "example.com/m")
				sig := make(map[string]Signals, len(files))
				for _, f := range files {
					sig[f.Path] = Signals{References: refs[f.Path], Changes: changes[f.Path], Errors: errs[f.Path]}
				}
				Scores(sig, Options{Now: fixtureNow})
			}
		})
	}
}
