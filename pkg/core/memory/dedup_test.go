package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestHashIsSHA256OfNormalizedContent(t *testing.T) {
	if got, want := Hash("  Use Badger for the cache.  "), sha("use badger for the cache"); got != want {
		t.Fatalf("Hash = %s, want %s", got, want)
	}
	// The well-known digest of "abc" pins the encoding (lowercase hex).
	if got := Hash("ABC"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("Hash(ABC) = %s", got)
	}
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"lowercase and trim", "  Hello World  ", "hello world"},
		{"collapse whitespace", "a \t\n  b", "a b"},
		{"NFKC compatibility forms", "ﬁle ①", "file 1"},
		{"NFKC full-width", "ＡＢＣ", "abc"},
		{"NFKC composes", "e\u0301", "é"},
		{"NBSP is a space after NFKC", "a\u00a0b", "a b"},
		{"full lowercase like JavaScript", "İ", "i\u0307"},
		{"final sigma like JavaScript", "ΟΔΟΣ", "οδος"},
		{"trailing punctuation run", "Done!?!", "done"},
		{"trailing punctuation then space", "done ...", "done"},
		{"internal punctuation kept", "a, b. c", "a, b. c"},
		{"zero-width removed", "ze\u200bro", "zero"},
		{"bidi controls removed", "a\u202eb\u2066c", "abc"},
		{"C0 control that is not space removed", "a\x00b\x07c", "abc"},
		{"C1 controls removed", "a\u0085b\u009fc", "abc"},
		// Step 4 runs before step 5, so whitespace controls and U+FEFF
		// (JavaScript \s) become a space instead of disappearing.
		{"tab becomes a space, not removed", "a\tb", "a b"},
		{"BOM is JavaScript whitespace", "a\ufeffb", "a b"},
		{"leading BOM trimmed", "\ufeffhello", "hello"},
		// U+0085 is no JavaScript whitespace: removed, not a space.
		{"NEL removed", "a\u0085 b", "a b"},
		{"empty", "", ""},
		{"only punctuation", "?!.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Normalize(c.in); got != c.want {
				t.Fatalf("Normalize(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// TestWhitespaceBeforeControlOrder follows the seed's order literally and
// checks what it implies.
func TestWhitespaceBeforeControlOrder(t *testing.T) {
	// A zero-width space touching a space vanishes and leaves one space.
	if Hash("a\u200b b") != Hash("a b") {
		t.Error(`"a\u200b b" and "a b" must hash the same`)
	}
	// Between two letters it joins them: no space is made.
	if Hash("a\u200bb") != Hash("ab") || Hash("a\u200bb") == Hash("a b") {
		t.Error(`"a\u200bb" must hash as "ab"`)
	}
	// Between two spaces, one literal pass leaves them doubled; Normalize
	// repeats the pass, so the result is "a b" as it would be for the
	// same text without the zero-width space.
	if got := normalizeOnce("a \u200b b"); got != "a  b" {
		t.Errorf("one pass gives %q, want the seed's %q", got, "a  b")
	}
	if got := Normalize("a \u200b b"); got != "a b" {
		t.Errorf("Normalize gives %q, want %q", got, "a b")
	}
	// Likewise a punctuation run bared by the final trim.
	if got := normalizeOnce("done. ."); got != "done." {
		t.Errorf("one pass gives %q", got)
	}
	if got := Normalize("done. ."); got != "done" {
		t.Errorf("Normalize gives %q", got)
	}
}

// TestSeedExampleDiffers: seed 003 §9's test claims "Hello, world!" and
// "hello world" hash the same, but its algorithm strips only trailing
// punctuation and "preserves internal punctuation intentionally". The
// algorithm (and its signature) wins: the internal comma makes them differ.
func TestSeedExampleDiffers(t *testing.T) {
	if Normalize("Hello, world!") != "hello, world" {
		t.Fatalf("Normalize = %q", Normalize("Hello, world!"))
	}
	if Hash("Hello, world!") == Hash("hello world") {
		t.Fatal(`"Hello, world!" and "hello world" must differ: the internal comma is kept`)
	}
	if Hash("Hello, world!") != Hash("  HELLO,   world.  ") {
		t.Fatal("case, spacing and trailing punctuation must not matter")
	}
}

// TestHashUsesContentOnly mirrors the seed's excluded fields.
func TestHashUsesContentOnly(t *testing.T) {
	a := Memory{Content: "test", Confidence: 0.8, Kind: KindFact, Rationale: "x", Provider: "ollama", Model: "m1",
		Repo: "r", Session: "s1", Source: Span{1, 2}, CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(2, 0)}
	b := Memory{Content: "Test.", Confidence: 0.9, Kind: KindDecision, Rationale: "y", Provider: "rules", Model: "m2",
		Repo: "q", Session: "s2", Source: Span{3, 4}, FilesTouched: []string{"a.go"}, CreatedAt: time.Unix(3, 0)}
	if a.Hash() != b.Hash() || a.Hash() != Hash("test") {
		t.Fatal("only the content may affect the hash")
	}
}

func TestNormalizeInvalidUTF8(t *testing.T) {
	got := Normalize("ok\xff\xfe done")
	if !utf8.ValidString(got) || got != "ok\ufffd done" {
		t.Fatalf("Normalize = %q", got)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"Hello, world!", "a \u200b b", "done. .", "ΟΔΟΣ", "İstanbul", "ﬁle ①", "\ufeff x \u2060",
		"e\u200b\u0301", "a\u0085\u00a0b", "\xff\xfe", "…!?", "\t\n\r", "ǅ ῼ ﷺ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if !utf8.ValidString(n) {
			t.Fatalf("Normalize(%q) = %q is not valid UTF-8", s, n)
		}
		if again := Normalize(n); again != n {
			t.Fatalf("not idempotent: %q → %q → %q", s, n, again)
		}
		if Hash(n) != Hash(s) {
			t.Fatalf("Hash(Normalize(%q)) != Hash(%q)", s, s)
		}
		if strings.Contains(n, "  ") || n != strings.TrimFunc(n, jsSpace) {
			t.Fatalf("Normalize(%q) = %q keeps extra space", s, n)
		}
	})
}

func BenchmarkHash1KB(b *testing.B) {
	content := strings.Repeat("Decided to use Badger for the edge cache; ", 25)[:1024]
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		Hash(content)
	}
}

func BenchmarkHash1KBUnicode(b *testing.B) {
	content := strings.Repeat("Wir nutzen Badger für den Cache — schnell ", 25)[:1024]
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		Hash(content)
	}
}
