package delta

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDiff diffs a 2,000-line Go-like file against a copy with a few
// edits: a changed line, an inserted block, a deleted block and an append.
func BenchmarkDiff(b *testing.B) {
	ls := make([]string, 2000)
	for i := range ls {
		switch i % 5 {
		case 0:
			ls[i] = fmt.Sprintf("func f%d(x int) int {", i)
		case 1:
			ls[i] = "\tif x < 0 {"
		case 2:
			ls[i] = "\t\treturn 0"
		case 3:
			ls[i] = "\t}"
		default:
			ls[i] = fmt.Sprintf("\treturn x * %d\n}", i)
		}
	}
	old := strings.Join(ls, "\n") + "\n"
	ed := append([]string(nil), ls...)
	ed[42] = "\treturn x + 1 // changed"
	ed = append(ed[:900], append([]string{"// inserted", "func g() {}", ""}, ed[900:]...)...)
	ed = append(ed[:1500], ed[1510:]...)
	ed = append(ed, "// appended")
	new := strings.Join(ed, "\n") + "\n"
	b.ReportAllocs()
	b.SetBytes(int64(len(old) + len(new)))
	for b.Loop() {
		d := Diff(old, new)
		if !d.Changed() {
			b.Fatal("no change found")
		}
	}
}
