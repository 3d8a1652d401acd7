package docparse

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/markdown"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// checkChunks fails t unless rec's chunks keep the promises of BuildWith
// for content under a budget of maxTokens.
func checkChunks(t *testing.T, content string, rec events.DocRecord, maxTokens int) {
	t.Helper()
	if !utf8.ValidString(content) {
		content = strings.ToValidUTF8(content, "\uFFFD")
	}
	lines := newLines(content)
	from := 1 // markdown frontmatter is in no chunk
	if rec.Kind == events.DocMarkdown || rec.Kind == events.DocCard {
		from = markdown.Parse([]byte(content)).BodyStart
	}
	texts := ChunkTexts(content, rec.Chunks)
	covered := 0
	prevEnd := 0
	for i, c := range rec.Chunks {
		if c.StartLine <= prevEnd || c.EndLine < c.StartLine || c.EndLine > rec.Lines {
			t.Fatalf("chunk %d spans %d-%d after %d, of %d lines", i, c.StartLine, c.EndLine, prevEnd, rec.Lines)
		}
		for l := prevEnd + 1; l < c.StartLine; l++ {
			if l >= from && !lines.blank(content, l) {
				t.Fatalf("line %d %q is in no chunk", l, lines.text(content, l, l))
			}
		}
		if lines.blank(content, c.StartLine) || lines.blank(content, c.EndLine) {
			t.Fatalf("chunk %d (%d-%d) starts or ends with a blank line", i, c.StartLine, c.EndLine)
		}
		if c.StartLine < from {
			t.Fatalf("chunk %d starts at %d, in the frontmatter", i, c.StartLine)
		}
		text := lines.text(content, c.StartLine, c.EndLine)
		if c.Tokens <= 0 || c.Tokens != tokens.Count(text) {
			t.Fatalf("chunk %d has Tokens %d, its text %d", i, c.Tokens, tokens.Count(text))
		}
		if texts[i] != headingPrefix(c.HeadingPath)+text {
			t.Fatalf("ChunkText of chunk %d = %q", i, texts[i])
		}
		if n := tokens.Count(texts[i]); n > maxTokens && c.StartLine != c.EndLine {
			t.Fatalf("chunk %d (%d-%d, %v) embeds %d tokens, over %d", i, c.StartLine, c.EndLine, c.HeadingPath, n, maxTokens)
		}
		covered += c.EndLine - c.StartLine + 1
		prevEnd = c.EndLine
	}
	for l := prevEnd + 1; l <= rec.Lines; l++ {
		if l >= from && !lines.blank(content, l) {
			t.Fatalf("line %d %q after the last chunk", l, lines.text(content, l, l))
		}
	}
}

type span struct {
	start, end int
	path       string // the heading path joined by " > "
}

func spans(chunks []events.Chunk) []span {
	s := make([]span, len(chunks))
	for i, c := range chunks {
		s[i] = span{c.StartLine, c.EndLine, strings.Join(c.HeadingPath, " > ")}
	}
	return s
}

func TestChunkText(t *testing.T) {
	content := "# Auth\n\n## Login\nSend the form.\r\nThen wait.\r\n"
	rec := Build("r", "docs.md", content)
	texts := ChunkTexts(content, rec.Chunks)
	want := []string{"Auth\n# Auth", "Auth > Login\n## Login\nSend the form.\r\nThen wait."}
	if !reflect.DeepEqual(texts, want) {
		t.Fatalf("ChunkTexts = %q, want %q", texts, want)
	}
	if got := ChunkText(content, rec.Chunks[1]); got != want[1] {
		t.Errorf("ChunkText = %q", got)
	}
	if got := ChunkText("a\xffb\n", events.Chunk{StartLine: 1, EndLine: 1}); got != "a\uFFFDb" {
		t.Errorf("ChunkText of invalid UTF-8 = %q", got)
	}
	if got := ChunkText("a\n", events.Chunk{StartLine: 3, EndLine: 9, HeadingPath: []string{"x"}}); got != "x\n" {
		t.Errorf("ChunkText past the end = %q", got)
	}
}

func TestMarkdownUnderBudget(t *testing.T) {
	para := func(n int) string {
		return strings.TrimSpace(strings.Repeat("The indexer cuts sections into chunks. ", n))
	}
	fence := "```go\nfunc a() {}\n\nfunc b() {}\n```"
	content := strings.Join([]string{
		"# Guide", // 1
		para(2),
		"",
		"## Setup", // 4
		para(10),   // 5: 70 tokens
		"",
		para(10), // 7
		"",
		fence, // 9-13: one piece although it holds a blank line
		"",
		para(10),                 // 15
		strings.Repeat("x ", 20), // 16: lines of one paragraph
		para(8),                  // 17
		"",
		"## Long line", // 19
		"",
		para(40), // 21: one line over the budget
		"",
	}, "\n")
	const budget = 128
	rec := BuildWith("r", "guide.md", content, ChunkOptions{MaxTokens: budget})
	checkChunks(t, content, rec, budget)
	want := []span{
		{1, 2, "Guide"},
		{4, 5, "Guide > Setup"},
		{7, 13, "Guide > Setup"},
		{15, 16, "Guide > Setup"},
		{17, 17, "Guide > Setup"},
		{19, 19, "Guide > Long line"},
		{21, 21, "Guide > Long line"},
	}
	if got := spans(rec.Chunks); !reflect.DeepEqual(got, want) {
		t.Errorf("chunks:\n got %v\nwant %v", got, want)
	}
	if n := tokens.Count(ChunkText(content, rec.Chunks[len(rec.Chunks)-1])); n <= budget {
		t.Errorf("the long line embeds %d tokens; the test wants it over %d", n, budget)
	}

	// A fence over the budget is cut at its lines like any paragraph.
	var big strings.Builder
	big.WriteString("# Code\n```\n")
	for i := range 60 {
		fmt.Fprintf(&big, "call(%d, \"argument\")\n", i)
	}
	big.WriteString("```\n")
	rec = BuildWith("r", "code.md", big.String(), ChunkOptions{MaxTokens: budget})
	checkChunks(t, big.String(), rec, budget)
	if len(rec.Chunks) < 3 {
		t.Errorf("a fence of ~%d tokens makes %d chunks", tokens.Count(big.String()), len(rec.Chunks))
	}
}

func TestFenceLines(t *testing.T) {
	content := strings.Join([]string{
		"a",
		"```go", // 2: opens
		"",
		"~~~",  // 4: another marker
		"````", // 5: closes, being as long or longer
		"",
		"~~~~", // 7: opens
		"",
		"~~~",            // 9: too short to close
		"~~~~~",          // 10: closes
		"```x``` inline", // 11: inline code, no fence
		"",
		"  ```", // 13: opens, never closed
		"",
		"code",
	}, "\n")
	lines := newLines(content)
	var got []int
	for l, g := range fenceLines(content, lines, 1) {
		if g {
			got = append(got, l)
		}
	}
	if want := []int{3, 4, 5, 8, 9, 10, 14, 15}; !reflect.DeepEqual(got, want) {
		t.Errorf("glued lines = %v, want %v", got, want)
	}
}

func TestBuildWithDefaultBudget(t *testing.T) {
	content := "# A\n" + strings.Repeat("word ", 200) + "\n"
	if a, b := Build("r", "a.md", content), BuildWith("r", "a.md", content, ChunkOptions{MaxTokens: -1}); !reflect.DeepEqual(a, b) {
		t.Errorf("Build and BuildWith a zero budget differ:\n%+v\n%+v", a, b)
	}
}

const goSource = `// Package demo shows how Go is chunked.
package demo

import (
	"fmt"
	"strings"
)

// Limit caps things.
const Limit = 3

const (
	A = iota
	B
	C
	D
)

// Index finds things.
type Index[K comparable] struct {
	items map[K]string
}

// Search returns matches.
func (ix *Index[K]) Search(q string) []string {
	var out []string
	for _, v := range ix.items {
		if strings.Contains(v, q) {
			out = append(out, v)
		}
	}
	return out
}

// helpers below

func (ix Index[K]) Len() int { return len(ix.items) }

var x, y = 1, 2

func main() {
	fmt.Println(Limit)
}

// trailing comment
`

func TestGoChunks(t *testing.T) {
	rec := Build("r", "demo.go", goSource)
	checkChunks(t, goSource, rec, MaxChunkTokens)
	want := []span{
		{1, 7, "package demo"},
		{9, 10, "const Limit"},
		{12, 17, "const (A, B, C, …)"},
		{19, 22, "type Index"},
		{24, 33, "func (*Index).Search"},
		{35, 37, "func (Index).Len"},
		{39, 39, "var (x, y)"},
		{41, 45, "func main"},
	}
	if got := spans(rec.Chunks); !reflect.DeepEqual(got, want) {
		t.Errorf("chunks:\n got %v\nwant %v", got, want)
	}

	// Over the budget, a declaration is cut at blank lines, then lines;
	// each piece keeps its name.
	var b strings.Builder
	b.WriteString("package big\n\nfunc Long() {\n")
	for i := range 80 {
		fmt.Fprintf(&b, "\tv%d := compute(%d)\n", i, i)
		if i%10 == 9 {
			b.WriteString("\n")
		}
	}
	b.WriteString("}\n")
	rec = BuildWith("r", "big.go", b.String(), ChunkOptions{MaxTokens: 128})
	checkChunks(t, b.String(), rec, 128)
	if len(rec.Chunks) < 5 {
		t.Fatalf("chunks = %v", spans(rec.Chunks))
	}
	for _, c := range rec.Chunks[1:] {
		if !reflect.DeepEqual(c.HeadingPath, []string{"func Long"}) {
			t.Errorf("piece %d-%d is labelled %v", c.StartLine, c.EndLine, c.HeadingPath)
		}
	}
}

func TestGoChunksFallBackOnParseError(t *testing.T) {
	content := "package broken\n\n// F does.\nfunc F() {\n\treturn (\n}\n\ntype T struct{}\n"
	rec := Build("r", "broken.go", content)
	checkChunks(t, content, rec, MaxChunkTokens)
	want := []span{{1, 1, ""}, {3, 6, "func F() {"}, {8, 8, "type T struct{}"}}
	if got := spans(rec.Chunks); !reflect.DeepEqual(got, want) {
		t.Errorf("chunks:\n got %v\nwant %v", got, want)
	}
}

func TestHeuristicChunks(t *testing.T) {
	tests := []struct {
		path, content string
		want          []span
	}{
		{"a.py", "import os\n\n\n@cache\ndef f(x):\n    return x\n\nclass C:\n    \"\"\"Doc.\"\"\"\n\n    # m does\n    def m(self):\n        def inner():\n            pass\n\n    async def n(self):\n        pass\n\nX = 1\n\ndef g():\n    def nested():\n        pass\n",
			[]span{{1, 1, ""}, {4, 6, "def f(x):"}, {8, 9, "class C:"}, {11, 14, "class C: > def m(self):"}, {16, 19, "class C: > async def n(self):"}, {21, 23, "def g():"}}},
		{"a.ts", "import x from 'x'\n\n/** Doc. */\nexport async function f() {\n  return 1\n}\n\nexport class C {\n  constructor() {}\n\n  private async m(a: string): void {\n    if (a) {\n    }\n  }\n}\nconst y = 2\n",
			[]span{{1, 1, ""}, {3, 6, "export async function f() {"}, {8, 8, "export class C {"}, {9, 9, "export class C { > constructor() {}"}, {11, 15, "export class C { > private async m(a: string): void {"}, {16, 16, "const y = 2"}}},
		{"a.rs", "use std::io;\n\n/// Doc.\n#[derive(Debug)]\npub struct S;\n\nimpl S {\n    pub fn new() -> S {\n        S\n    }\n}\n\nfn main() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n",
			[]span{{1, 1, ""}, {3, 5, "pub struct S;"}, {7, 7, "impl S {"}, {8, 11, "impl S { > pub fn new() -> S {"}, {13, 13, "fn main() {}"}, {15, 16, "mod tests {"}, {17, 19, "mod tests { > fn t() {}"}}},
		{"min.js", "const x = " + strings.Repeat("1+", 100) + "1\n",
			[]span{{1, 1, "const x = " + strings.Repeat("1+", 55) + "…"}}},
		{"A.java", "package a;\n\npublic class A {\n    private int n;\n\n    /** Doc. */\n    @Override\n    public String toString() {\n        return \"\";\n    }\n}\n",
			[]span{{1, 1, ""}, {3, 4, "public class A {"}, {6, 11, "public class A { > public String toString() {"}}},
		{"a.c", "#include <stdio.h>\n\nint helper(int);\n\n/* main runs. */\nint main(void)\n{\n    return helper(1);\n}\n\nstruct point { int x; };\n",
			[]span{{1, 3, ""}, {5, 9, "int main(void)"}, {11, 11, "struct point { int x; };"}}},
		{"a.rb", "require 'x'\n\nmodule M\n  # Doc.\n  def self.f\n  end\nend\n",
			[]span{{1, 1, ""}, {3, 3, "module M"}, {4, 7, "module M > def self.f"}}},
		{"a.sh", "#!/bin/sh\nset -e\n\n# greet says hi\ngreet() {\n  echo hi\n}\n\nfunction bye {\n  echo bye\n}\ngreet\n",
			[]span{{1, 2, ""}, {4, 7, "greet() {"}, {9, 12, "function bye {"}}},
		{"a.kt", "fun main() {}\n\nfun other() {}\n", []span{{1, 3, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := Build("r", tt.path, tt.content)
			checkChunks(t, tt.content, rec, MaxChunkTokens)
			if got := spans(rec.Chunks); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("chunks:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestTextParagraphsUnderBudget(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "Paragraph %d has a few words in it.\nAnd a second line.\n\n", i)
	}
	rec := BuildWith("r", "notes.txt", b.String(), ChunkOptions{MaxTokens: 64})
	checkChunks(t, b.String(), rec, 64)
	lines := strings.Split(b.String(), "\n")
	for i, c := range rec.Chunks {
		if lines[c.EndLine] != "" {
			t.Errorf("chunk %d ends at %d, inside a paragraph", i, c.EndLine)
		}
	}
}

func TestChunksNeverPanic(t *testing.T) {
	huge := strings.Repeat("a", 100<<10)
	for _, tc := range []struct{ path, content string }{
		{"a.go", "package p\nfunc \xff() {}\n"},
		{"a.go", "//line foo.go:100\npackage p\n\nfunc f() {}\n"},
		{"a.md", "```\n\n\n"},
		{"a.md", "# " + huge + "\ntext\n"},
		{"a.py", huge},
		{"a.txt", huge + "\n\n" + huge},
		{"a.c", "\n\n\n"},
	} {
		for _, budget := range []int{1, 16, 128} {
			rec := BuildWith("r", tc.path, tc.content, ChunkOptions{MaxTokens: budget})
			checkChunks(t, tc.content, rec, budget)
		}
	}
}

// TestGoChunksOfRealSource chunks a file of the standard library that the
// toolchain ships, when it is there, under the built-in model's budget.
func TestGoChunksOfRealSource(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(build.Default.GOROOT, "src", "go", "parser", "parser.go"))
	if err != nil {
		t.Skip(err)
	}
	content := string(data)
	rec := BuildWith("r", "parser.go", content, ChunkOptions{MaxTokens: 128})
	checkChunks(t, content, rec, 128)
	names := map[string]bool{}
	for _, c := range rec.Chunks {
		if len(c.HeadingPath) != 1 {
			t.Fatalf("chunk %d-%d has heading path %q", c.StartLine, c.EndLine, c.HeadingPath)
		}
		names[c.HeadingPath[0]] = true
	}
	for _, want := range []string{"package parser", "type parser", "func (*parser).parseFile", "func (*parser).init"} {
		if !names[want] {
			t.Errorf("no chunk named %q", want)
		}
	}
}
