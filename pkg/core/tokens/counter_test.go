package tokens

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkRanges holds Range to Count on stretches of s that start and end
// at lines, as chunks do, and at any rune boundary.
func checkRanges(t testing.TB, name, s string, r *rand.Rand, samples int) {
	t.Helper()
	c := NewCounter(s)
	// Released, so that the next text's Counter is made in this one's
	// memory, as the indexer's are.
	defer c.Release()
	if c.Total() != Count(s) {
		t.Fatalf("%s: Total = %d, Count = %d", name, c.Total(), Count(s))
	}
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && i+1 < len(s) {
			starts = append(starts, i+1)
		}
	}
	lineEnd := func(l int) int {
		end := len(s)
		if l+1 < len(starts) {
			end = starts[l+1]
		}
		return len(strings.TrimSuffix(strings.TrimSuffix(s[:end], "\n"), "\r"))
	}
	runeAt := func(i int) int {
		for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
			i--
		}
		return i
	}
	for range samples {
		var x, y int
		if r.IntN(3) > 0 {
			a := r.IntN(len(starts))
			b := a + r.IntN(min(len(starts)-a, 40))
			x, y = starts[a], lineEnd(b)
		} else {
			x, y = runeAt(r.IntN(len(s)+1)), runeAt(r.IntN(len(s)+1))
			if x > y {
				x, y = y, x
			}
		}
		if got, want := c.Range(x, y), Count(s[x:y]); got != want {
			t.Fatalf("%s: Range(%d, %d) = %d, Count = %d of %q", name, x, y, got, want, s[x:y])
		}
	}
}

func TestRangeIsCountOfTheStretch(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 300 {
		var b strings.Builder
		for range 1 + r.IntN(30) {
			b.WriteString(randomText(r, r.IntN(60)))
			b.WriteString([]string{"\n", "\r\n", "\n\n", " \n\t", "{\n", ");\n\n", "   \n"}[r.IntN(7)])
		}
		checkRanges(t, "random text", b.String(), r, 60)
		if i%50 == 0 {
			checkRanges(t, "with a long blank run", b.String()+strings.Repeat(" ", 300)+"\nx\n", r, 20)
		}
	}
	checkRanges(t, "invalid UTF-8", "a\xffb\nc d\n", r, 20)
}

func TestRangeIsCountOfTheStretchOnSource(t *testing.T) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree at %s: %v", root, err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	files := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || files >= 60 || len(p)%53 != 0 {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 || len(data) > 200<<10 {
			return nil
		}
		files++
		checkRanges(t, p, string(data), r, 100)
		return nil
	})
	if files < 20 {
		t.Fatalf("only %d files checked", files)
	}
}

func FuzzRange(f *testing.F) {
	f.Add("func f() {\n\treturn x\n}\n", 3, 20)
	f.Add("a   \nb\n", 0, 4)
	f.Fuzz(func(t *testing.T, s string, x, y int) {
		if len(s) > 2000 || x < 0 || y < 0 || x > len(s) || y > len(s) || x > y {
			return
		}
		if got, want := NewCounter(s).Range(x, y), Count(s[x:y]); got != want {
			t.Fatalf("Range(%d, %d) = %d, Count = %d of %q", x, y, got, want, s[x:y])
		}
	})
}
