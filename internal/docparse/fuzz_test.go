package docparse

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/events"
)

func FuzzBuild(f *testing.F) {
	seeds := []struct{ path, content string }{
		{"a.md", "---\ntitle: T\nwhen: !!timestamp 2024-01-01\nm: {1: x}\n---\nIntro\n# A\n## B\ntext @doc/x#y\n\n[l](z.md)\n"},
		{"a.md", "---\nbroken: [\n---\n# A\n"},
		{"a.md", "---\nnever closed\n"},
		{".cuedeck/cards/c.md", "---\ntitle: 5\n---\n"},
		{"main.go", "package main\n\nfunc main() {}\n"},
		{"notes.txt", "\xff\xfe bad bytes\r\n\r\n"},
		{"x.md", "```\n# in code\n"},
		{"x.md", "# A\n```\ncode\n\nmore\n```\n\n## B\npara\n\npara\n"},
		{"a.go", "package p\n\nimport \"fmt\"\n\n// F does.\nfunc (t *T[K]) F() {\n\tfmt.Println()\n}\n\nvar a, b = 1, 2\n"},
		{"a.go", "package p\nfunc f() {\n"},
		{"a.py", "import x\n@d\nclass C:\n    def m(self):\n        if x:\n            pass\n"},
		{"a.ts", "export class C {\n  m() {}\n}\nexport const f = () => 1\n"},
		{"a.rs", "#[test]\nfn t() {}\nimpl S {\n    fn f() {}\n}\n"},
		{"a.c", "int f(void);\nint f(void)\n{\n}\n"},
	}
	for _, s := range seeds {
		f.Add(s.path, s.content)
	}
	f.Fuzz(func(t *testing.T, path, content string) {
		// A small budget, varied by the input, makes every fallback run.
		budget := 1 + len(content)%150
		checkChunks(t, content, BuildWith("r", path, content, ChunkOptions{MaxTokens: budget}), budget)
		rec := Build("r", path, content)
		checkChunks(t, content, rec, MaxChunkTokens)
		if rec.Lines < 0 || rec.Tokens < 0 || (content == "") != (rec.Lines == 0) {
			t.Fatalf("Lines %d, Tokens %d for %d bytes", rec.Lines, rec.Tokens, len(content))
		}
		prevEnd := 0
		for i, c := range rec.Chunks {
			if c.StartLine <= prevEnd || c.EndLine < c.StartLine || c.EndLine > rec.Lines {
				t.Fatalf("chunk %d spans %d-%d after %d, of %d lines", i, c.StartLine, c.EndLine, prevEnd, rec.Lines)
			}
			if c.Tokens <= 0 {
				t.Fatalf("chunk %d has %d tokens", i, c.Tokens)
			}
			prevEnd = c.EndLine
		}
		for i, h := range rec.Headings {
			if h.Line < 1 || h.EndLine > rec.Lines || h.ParentIdx >= i {
				t.Fatalf("heading %d: %+v of %d lines", i, h, rec.Lines)
			}
		}
		if (rec.Kind == events.DocMarkdown || rec.Kind == events.DocCard) != (rec.Language == "markdown") {
			t.Fatalf("Kind %q with Language %q", rec.Kind, rec.Language)
		}
		if !utf8.ValidString(rec.Title) {
			t.Fatalf("Title %q is not valid UTF-8", rec.Title)
		}
		data, err := json.Marshal(rec)
		if err != nil {
			t.Fatalf("json.Marshal: %v", err)
		}
		var back events.DocRecord
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("json.Unmarshal: %v", err)
		}
	})
}
