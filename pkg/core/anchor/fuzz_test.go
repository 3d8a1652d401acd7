package anchor

import (
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// FuzzFind reads symbols from arbitrary heading paths and finds arbitrary
// anchors among them: nothing panics, every symbol is found by its (trimmed) label,
// Short finds the symbol it names, and spans stay inside their chunks.
func FuzzFind(f *testing.F) {
	for _, s := range []struct{ labels, anchor, lang string }{
		{"func (*Index).Search\ntype Index\nfunc New", "(*Index).Search", "go"},
		{"class A:\n>def f(self):\n>def g(self):\ndef f(x):", "A.f", "python"},
		{"impl<T> X for Y<T> {\n>fn z() {}", "Y::z", "rust"},
		{"export default function () {}\nconst x = (a) => a", "x", "typescript"},
		{"var (a, b, …)\nfunc (s *S) Run(", "func (s *S) Run", "go"},
		{"void A::b(int)\n#define X(", "A::b", "cpp"},
	} {
		f.Add(s.labels, s.anchor, s.lang)
	}
	f.Fuzz(func(t *testing.T, labels, anchor, lang string) {
		// Each line is a chunk of 3 lines; a leading '>' nests it in the
		// previous top-level label.
		var chunks []events.Chunk
		var top string
		for i, l := range strings.Split(labels, "\n") {
			path := []string{l}
			if rest, ok := strings.CutPrefix(l, ">"); ok && top != "" {
				path = []string{top, rest}
			} else {
				top = l
			}
			chunks = append(chunks, events.Chunk{StartLine: 3*i + 1, EndLine: 3*i + 3, HeadingPath: path})
		}
		syms := Symbols(chunks, lang)
		last := chunks[len(chunks)-1].EndLine
		for i := range syms {
			s := &syms[i]
			if s.Start < 1 || s.End > last || s.End < s.Start {
				t.Fatalf("%q spans %d-%d of %d", s.Label, s.Start, s.End, last)
			}
			// docparse's labels are trimmed lines.
			if s.Label != "" && strings.TrimSpace(s.Label) == s.Label {
				if found := Find(syms, s.Label); len(found) != 1 || found[0].Label != s.Label {
					t.Fatalf("label %q finds %v", s.Label, found)
				}
			}
			if a := Short(syms, s); a != s.Label {
				if found := Find(syms, a); len(found) != 1 || found[0] != s {
					t.Fatalf("Short(%q) = %q finds %d symbols", s.Label, a, len(found))
				}
			}
		}
		Find(syms, anchor)
		Top(syms, 3)
		if first, last, ok := LineRange(anchor); ok && (first < 0 || last < 0) {
			t.Fatalf("LineRange(%q) = %d, %d", anchor, first, last)
		}
	})
}
