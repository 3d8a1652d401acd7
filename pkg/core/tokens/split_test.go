package tokens

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The reference for nextPiece: cl100k_base's pre-split pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// run by Go's regexp one alternative at a time, in order, the lookahead
// of the sixth done by hand (RE2 has none), with \s spelled out as the
// Unicode whitespace the encoder means. Not the encoder's own regexp
// engine: its code backtracks \s*[\r\n]+ to the first line break of a
// whitespace run instead of the last, splitting "\n\t\n" in two where the
// pattern (and OpenAI's tiktoken, and Python's re) keep one piece, one
// token.
const space = `[\t\n\v\f\r \x{85}\p{Z}]`

var alternatives = []*regexp.Regexp{
	regexp.MustCompile(`^(?i:'s|'t|'re|'ve|'m|'ll|'d)`),
	regexp.MustCompile(`^[^\r\n\p{L}\p{N}]?\p{L}+`),
	regexp.MustCompile(`^\p{N}{1,3}`),
	regexp.MustCompile(`^ ?[^\t\n\v\f\r \x{85}\p{Z}\p{L}\p{N}]+[\r\n]*`),
	regexp.MustCompile(`^` + space + `*[\r\n]+`),
}

var spaces = regexp.MustCompile(`^` + space + `+`)

func referencePiece(s string) int {
	for _, re := range alternatives {
		if loc := re.FindStringIndex(s); loc != nil {
			return loc[1]
		}
	}
	w := spaces.FindStringIndex(s)
	if w == nil {
		panic(fmt.Sprintf("no alternative matches %q", s))
	}
	if w[1] == len(s) {
		return w[1] // \s+(?!\S) at the end
	}
	if _, last := utf8.DecodeLastRuneInString(s[:w[1]]); w[1]-last > 0 {
		return w[1] - last // \s+(?!\S): all but the space before the next word
	}
	return w[1] // \s+
}

// patternPieces are the pattern's matches in s, cut as Count cuts it.
func patternPieces(t testing.TB, s string) []string {
	var out []string
	for len(s) > 0 {
		part := s[:cut(s)]
		s = s[len(part):]
		for len(part) > 0 {
			n := referencePiece(part)
			out = append(out, part[:n])
			part = part[n:]
		}
	}
	return out
}

func ourPieces(s string) []string {
	var out []string
	for len(s) > 0 {
		part := s[:cut(s)]
		s = s[len(part):]
		for len(part) > 0 {
			n := nextPiece(part)
			out = append(out, part[:n])
			part = part[n:]
		}
	}
	return out
}

// checkText compares nextPiece's pieces of s with the pattern's, and the
// count of each piece with the encoder's where the encoder's code splits
// it as the pattern does (all but whitespace holding two line breaks).
func checkText(t testing.TB, name, s string) {
	t.Helper()
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x7f", "\x1f")
	want := patternPieces(t, s)
	got := ourPieces(s)
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("%s: piece %d is %q, the pattern's %q", name, i, got[i], want[i])
			}
		}
		t.Fatalf("%s: %d pieces, the pattern has %d", name, len(got), len(want))
	}
	c, err := codec()
	if err != nil {
		t.Fatal(err)
	}
	Count("") // loads the ranks
	ranks()
	for _, p := range got {
		if strings.TrimSpace(p) == "" && strings.Count(p, "\n")+strings.Count(p, "\r") > 1 {
			continue
		}
		want, _ := c.Count(p)
		var n int
		if len(p) > maxMergedPiece {
			n = want // the encoder merges these itself
		} else if len(p) == 1 {
			n = 1
		} else {
			n = mergeCount(p)
		}
		if n != want {
			t.Fatalf("%s: piece %q merges into %d tokens, the encoder's %d", name, p, n, want)
		}
	}
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

func TestPiecesAndMergesOnRandomText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		checkText(t, fmt.Sprintf("text %d", i), randomText(r, 1+r.IntN(120)))
	}
}

// TestPiecesAndMergesOnSource checks real files: the Go tree's code, docs
// and test data, which hold every language and oddity CueDeck meets.
func TestPiecesAndMergesOnSource(t *testing.T) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree at %s: %v", root, err)
	}
	files, bytes := 0, 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || files >= 150 {
			return err
		}
		// Every 61st file: a spread over the tree that stays quick.
		if len(p)%61 != 0 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) > 128<<10 {
			return nil
		}
		files++
		bytes += len(data)
		checkText(t, p, string(data))
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

// TestCountIsTheSumOfItsPieces ties Count to the pieces checked above.
func TestCountIsTheSumOfItsPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		s := randomText(r, 200)
		want := 0
		for _, p := range ourPieces(strings.ReplaceAll(s, "\x7f", "\x1f")) {
			if len(p) == 1 {
				want++
			} else {
				want += mergeCount(p)
			}
		}
		if got := Count(s); got != want {
			t.Fatalf("%q: Count = %d, its pieces add up to %d", s, got, want)
		}
	}
}

func FuzzPiecesAndMerges(f *testing.F) {
	for _, s := range []string{"hello world", "don't 'S 'll", "  \n\n  x", "a\u00a0\u2028b", "123456 ①②", "'sfoo", "\t(x)\r\n", "é\u0301'Re", "\n\t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		checkText(t, "fuzz", s)
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

// The rank table answers for every token and only for tokens: keys packed
// in a word must not let a 7-byte string pass for an 8-byte token whose
// last byte happens to equal 7, or a shorter string for a longer one.
func TestRankTableKnowsTokensAndNothingElse(t *testing.T) {
	c, err := codec()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ranks()
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[string]int32)
	for id := range 100256 {
		if tok, err := c.Decode([]uint{uint(id)}); err == nil && tok != "" {
			want[tok] = int32(id)
		}
	}
	check := func(s string) {
		r, ok := rs.lookup(s)
		w, wok := want[s]
		if ok != wok || r != w {
			t.Fatalf("lookup(%q) = %d, %v; the vocabulary says %d, %v", s, r, ok, w, wok)
		}
	}
	for tok := range want {
		check(tok)
		for n := 1; n < len(tok) && n <= 9; n++ {
			check(tok[:n])
			check(tok[:n] + string(rune(n)))
			check(tok[:n] + "\x00")
		}
	}
}
