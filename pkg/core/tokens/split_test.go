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

// encoderCount is the encoder's own count of s, cut as Count cuts it: what
// Count returned before it split pieces by hand.
func encoderCount(t testing.TB, s string) int {
	c, err := codec()
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\x7f", "\x1f")
	total := 0
	for len(s) > 0 {
		part := s[:cut(s)]
		s = s[len(part):]
		n, _ := c.Count(part)
		total += n
	}
	return total
}

// tricky holds runes on the edges of the pattern's classes: each kind of
// space and line break, letters and marks of several scripts, numbers
// that are not digits, symbols, apostrophes and the contraction letters.
var tricky = []rune{
	' ', ' ', ' ', '\t', '\n', '\r', '\v', '\f', 0x85, 0xa0, 0x1680, 0x2000, 0x2028, 0x2029, 0x202f, 0x3000, 0x200b, 0xfeff,
	'a', 'b', 'Z', 's', 'S', 't', 'T', 'r', 'e', 'E', 'v', 'm', 'l', 'L', 'd', 'D', 'é', 'ß', 'ſ', 'K', 'İ', 'ı', 'Ж', 'ж', 'λ', '中', '文', 'あ', 'ア', 'ー', '가', 'ا', 'ب', 0x0301, 0x0308, 0x093f, 'ǅ', 'ʰ',
	'0', '1', '9', '٣', '४', 'Ⅻ', '½', '²', '①',
	'\'', '’', '"', '(', ')', '{', '}', '.', ',', ';', ':', '-', '_', '/', '\\', '#', '@', '$', '%', '&', '*', '+', '=', '<', '>', '|', '~', '`', '^', '!', '?', '[', ']',
	'€', '©', '→', '✓', '😀', '👍', 0x1f3fd, 0x200d, 0xe000, 0x1, 0x1b, 0x1f, 0x7f,
}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		switch r.IntN(10) {
		case 0: // a word, so contractions and letter runs are common
			b.WriteString([]string{"don't", "I'm", "we'LL", "it's", "they've", "you'd", "'re", "''s", " hello", "\tfunc", "x1", "ID3"}[r.IntN(12)])
		case 1: // a run of spaces and breaks
			for k := r.IntN(6); k >= 0; k-- {
				b.WriteRune([]rune{' ', ' ', '\n', '\r', '\t'}[r.IntN(5)])
			}
		default:
			b.WriteRune(tricky[r.IntN(len(tricky))])
		}
	}
	return b.String()
}

func TestCountMatchesEncoderOnRandomText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		s := randomText(r, 1+r.IntN(120))
		if got, want := Count(s), encoderCount(t, s); got != want {
			t.Fatalf("text %d %q: Count = %d, the encoder counts %d", i, s, got, want)
		}
	}
}

// TestCountMatchesEncoderOnSource counts real files: the Go tree's code,
// docs and test data, which hold every language and oddity CueDeck meets.
func TestCountMatchesEncoderOnSource(t *testing.T) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree at %s: %v", root, err)
	}
	files, bytes := 0, 0
	limit := 400
	if testing.Short() {
		limit = 60
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || files >= limit {
			return err
		}
		// Every 23rd file: a spread over the tree that stays quick.
		if len(p)%23 != 0 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) > 256<<10 {
			return nil
		}
		files++
		bytes += len(data)
		if got, want := Count(string(data)), encoderCount(t, string(data)); got != want {
			t.Errorf("%s: Count = %d, the encoder counts %d", p, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("only %d files compared", files)
	}
	t.Logf("%d files, %d bytes compared", files, bytes)
}

func FuzzCountMatchesEncoder(f *testing.F) {
	for _, s := range []string{"hello world", "don't 'S 'll", "  \n\n  x", "a\u00a0\u2028b", "123456 ①②", "'sfoo", "\t(x)\r\n", "é\u0301'Re"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		if got, want := Count(s), encoderCount(t, s); got != want {
			t.Fatalf("%q: Count = %d, the encoder counts %d", s, got, want)
		}
	})
}

// spaceRunEndByScan is spaceRunEnd the plain way: every byte looked at.
func spaceRunEndByScan(s string) int {
	run := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			if run++; run == maxSpaceRun {
				return i + 1
			}
		default:
			run = 0
		}
	}
	return 0
}

func TestSpaceRunEndFindsTheFirstLongRun(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		var b strings.Builder
		for b.Len() < 2000 {
			if r.IntN(4) == 0 {
				b.WriteString(strings.Repeat(string(" \t\n\r\v\f"[r.IntN(6)]), 1+r.IntN(300)))
			} else {
				b.WriteString([]string{"x", "é", "\b", "ab", " y"}[r.IntN(5)])
			}
		}
		s := b.String()
		if got, want := spaceRunEnd(s), spaceRunEndByScan(s); got != want {
			t.Fatalf("text %d: spaceRunEnd = %d, want %d", i, got, want)
		}
	}
}

func FuzzSpaceRunEnd(f *testing.F) {
	f.Add("ab" + strings.Repeat(" ", 300))
	f.Add(strings.Repeat(" \n", 200))
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := spaceRunEnd(s), spaceRunEndByScan(s); got != want {
			t.Fatalf("spaceRunEnd = %d, want %d", got, want)
		}
	})
}
