package tokens

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestCountKnownValues(t *testing.T) {
	// Reference counts from OpenAI's tiktoken with cl100k_base.
	tests := map[string]int{
		"":                   0,
		"hello world":        2,
		"Hello, world!":      4,
		"tiktoken is great!": 6,
		"\n\n":               1,
		// tiktoken-go's encoder says 2 here; see the reference in
		// split_test.go.
		"\n\t\n": 1,
	}
	for s, want := range tests {
		if got := Count(s); got != want {
			t.Errorf("Count(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestCountInvalidUTF8CountsAsReplaced(t *testing.T) {
	if got, want := Count("a\xffb\xc3"), Count("a\uFFFDb\uFFFD"); got != want || got == 0 {
		t.Errorf("Count(invalid) = %d, want %d (as with U+FFFD)", got, want)
	}
}

func TestCountDEL(t *testing.T) {
	// tiktoken-go v0.10.0 drops DEL; tiktoken counts "a\x7fb" as 3 tokens.
	if got := Count("a\x7fb"); got != 3 {
		t.Errorf("Count(a DEL b) = %d, want 3", got)
	}
	if got := Count("\x7f"); got != 1 {
		t.Errorf("Count(DEL) = %d, want 1", got)
	}
}

func TestCountLargeTextIsCloseToExact(t *testing.T) {
	c, err := codec()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; b.Len() < 300<<10; i++ {
		b.WriteString("func handler(w http.ResponseWriter, r *http.Request) {\n\tfmt.Fprintf(w, \"hello %d\", 42)\n}\n\n")
	}
	s := b.String()
	exact, err := c.Count(s)
	if err != nil {
		t.Fatal(err)
	}
	got := Count(s)
	// Pieces are cut after newlines, where cl100k rarely merges across, so
	// the count may drift by at most a token per 64 KiB piece.
	if diff := got - exact; diff < -8 || diff > 8 {
		t.Errorf("Count(300 KiB) = %d, exact %d", got, exact)
	}
}

// pathological are inputs that cost the encoder's regexp time quadratic
// in their length when not cut: 256 KiB of " \n" took a hundred times as
// long as as much prose. BenchmarkCountPathological measures them beside
// prose.
func pathological() map[string]string {
	const size = 256 << 10
	return map[string]string{
		"prose":         strings.Repeat("The indexer counts tokens in every chunk.\n", size/42),
		"space-newline": strings.Repeat(" \n", size/2),
		"tab-crlf":      strings.Repeat("\t\r\n", size/3),
		"one long word": strings.Repeat("a", size),
		"newlines":      strings.Repeat("\n", size),
		"no breaks":     strings.Repeat("ab1-", size/4),
	}
}

func TestCountPathologicalInputs(t *testing.T) {
	for name, s := range pathological() {
		if n := Count(s); n <= 0 || n > len(s) {
			t.Errorf("%s: Count = %d for %d bytes", name, n, len(s))
		}
	}
}

func BenchmarkCountPathological(b *testing.B) {
	for name, s := range pathological() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				Count(s)
			}
		})
	}
}

func TestCountConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := Count("hello world"); got != 2 {
				t.Errorf("Count = %d, want 2", got)
			}
		})
	}
	wg.Wait()
}

func TestCut(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{"short", "abc", 3},
		{"long breaks after last newline", strings.Repeat("x", pieceSize-10) + "\n" + strings.Repeat("y", 100), pieceSize - 9},
		{"long without newline breaks after a space", strings.Repeat("x", 100) + " " + strings.Repeat("y", pieceSize), 101},
		{"no break falls on a rune boundary", "a" + strings.Repeat("é", pieceSize), pieceSize - 1},
		{"whitespace run", "ab" + strings.Repeat(" \n", 300), 2 + maxSpaceRun},
	}
	for _, tt := range tests {
		if got := cut(tt.s); got != tt.want {
			t.Errorf("%s: cut = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func FuzzCut(f *testing.F) {
	f.Add("hello\nworld", 3)
	f.Add("é\n \t", 1000)
	f.Fuzz(func(t *testing.T, unit string, n int) {
		if unit == "" || n <= 0 || n > 1<<20/len(unit) {
			return
		}
		s := strings.Repeat(unit, n)
		var pieces []string
		for rest := s; len(rest) > 0; {
			k := cut(rest)
			if k <= 0 || k > pieceSize || k > len(rest) {
				t.Fatalf("cut = %d for %d bytes", k, len(rest))
			}
			if utf8.ValidString(s) && !utf8.ValidString(rest[:k]) {
				t.Fatalf("piece of valid text is not valid UTF-8: %q", rest[:k])
			}
			pieces = append(pieces, rest[:k])
			rest = rest[k:]
		}
		if strings.Join(pieces, "") != s {
			t.Fatal("pieces do not add up to the input")
		}
	})
}

func BenchmarkCount(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("CueDeck indexes a repository's documents so that agents read only the sections they need.\n")
		sb.WriteString("    if err := store.Put(ctx, key, value); err != nil { return fmt.Errorf(\"put %s: %w\", key, err) }\n\n")
	}
	s := sb.String()
	Count("warm up")
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Count(s)
	}
}
