package docparse

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		path string
		kind events.DocKind
		lang string
	}{
		{"README.md", events.DocMarkdown, "markdown"},
		{"docs/Guide.MARKDOWN", events.DocMarkdown, "markdown"},
		{"site/page.mdx", events.DocMarkdown, "markdown"},
		{".cuedeck/cards/0001-login.md", events.DocCard, "markdown"},
		{"sub/.cuedeck/cards/x.md", events.DocCard, "markdown"},
		{".cuedeck/cards/notes.txt", events.DocText, ""},
		{"docs/.cuedeck-cards/x.md", events.DocMarkdown, "markdown"},
		{"cmd/cue/main.go", events.DocCode, "go"},
		{"a/b.py", events.DocCode, "python"},
		{"web/App.tsx", events.DocCode, "typescript"},
		{"web/app.mjs", events.DocCode, "javascript"},
		{"src/lib.rs", events.DocCode, "rust"},
		{"Main.java", events.DocCode, "java"},
		{"x.c", events.DocCode, "c"},
		{"x.hpp", events.DocCode, "cpp"},
		{"Gemfile", events.DocCode, "ruby"},
		{"scripts/run.sh", events.DocCode, "shell"},
		{".github/ci.yml", events.DocCode, "yaml"},
		{"Cargo.toml", events.DocCode, "toml"},
		{"package.json", events.DocCode, "json"},
		{"db/schema.SQL", events.DocCode, "sql"},
		{"Makefile", events.DocCode, "make"},
		{"build/Dockerfile.dev", events.DocCode, "dockerfile"},
		{"LICENSE", events.DocText, ""},
		{"notes.txt", events.DocText, ""},
		{".md", events.DocMarkdown, "markdown"},
	}
	for _, tt := range tests {
		kind, lang := Classify(tt.path)
		if kind != tt.kind || lang != tt.lang {
			t.Errorf("Classify(%q) = %q, %q, want %q, %q", tt.path, kind, lang, tt.kind, tt.lang)
		}
	}
}

func TestBuildMarkdown(t *testing.T) {
	content := strings.Join([]string{
		"---", // 1
		"title: Login flow",
		"tags: [auth]",
		"---",
		"Intro before any heading, see @doc/api#Tokens.", // 5
		"",
		"# Login", // 7
		"Send [the form](forms.md#login).",
		"",
		"## Errors", // 10
		"401 when the token expired.",
		"",
		"## Retry", // 13
		"Back off; see <https://example.com/backoff>.",
		"",
		"",
	}, "\n")
	rec := Build("demo", "docs/login.md", content)

	if rec.Repo != "demo" || rec.Path != "docs/login.md" {
		t.Errorf("Repo, Path = %q, %q", rec.Repo, rec.Path)
	}
	if rec.Kind != events.DocMarkdown || rec.Language != "markdown" {
		t.Errorf("Kind, Language = %q, %q", rec.Kind, rec.Language)
	}
	if rec.Lines != 15 { // the final newline ends line 15
		t.Errorf("Lines = %d, want 15", rec.Lines)
	}
	if want := tokens.Count(content); rec.Tokens != want {
		t.Errorf("Tokens = %d, want %d", rec.Tokens, want)
	}
	if rec.Title != "Login flow" {
		t.Errorf("Title = %q", rec.Title)
	}
	if len(rec.Warnings) != 0 {
		t.Errorf("Warnings = %q", rec.Warnings)
	}
	wantFM := map[string]any{"title": "Login flow", "tags": []any{"auth"}}
	if !reflect.DeepEqual(rec.Frontmatter, wantFM) {
		t.Errorf("Frontmatter = %#v", rec.Frontmatter)
	}
	wantHeadings := []events.Heading{
		{Level: 1, Text: "Login", Slug: "login", Line: 7, EndLine: 15, ParentIdx: -1},
		{Level: 2, Text: "Errors", Slug: "errors", Line: 10, EndLine: 12, ParentIdx: 0},
		{Level: 2, Text: "Retry", Slug: "retry", Line: 13, EndLine: 15, ParentIdx: 0},
	}
	if !reflect.DeepEqual(rec.Headings, wantHeadings) {
		t.Errorf("Headings:\n got %+v\nwant %+v", rec.Headings, wantHeadings)
	}
	wantLinks := []events.Link{
		{Target: "doc/api", Anchor: "Tokens", Line: 5, Kind: "ref"},
		{Target: "forms.md", Anchor: "login", Text: "the form", Line: 8, Kind: "link"},
		{Target: "https://example.com/backoff", Text: "https://example.com/backoff", Line: 14, Kind: "external"},
	}
	if !reflect.DeepEqual(rec.Links, wantLinks) {
		t.Errorf("Links:\n got %+v\nwant %+v", rec.Links, wantLinks)
	}
	wantChunks := []events.Chunk{
		{StartLine: 5, EndLine: 5},
		{StartLine: 7, EndLine: 8, HeadingPath: []string{"Login"}},
		{StartLine: 10, EndLine: 11, HeadingPath: []string{"Login", "Errors"}},
		{StartLine: 13, EndLine: 14, HeadingPath: []string{"Login", "Retry"}},
	}
	lines := strings.Split(content, "\n")
	for i := range wantChunks {
		c := &wantChunks[i]
		c.Tokens = tokens.Count(strings.Join(lines[c.StartLine-1:c.EndLine], "\n"))
	}
	if !reflect.DeepEqual(rec.Chunks, wantChunks) {
		t.Errorf("Chunks:\n got %+v\nwant %+v", rec.Chunks, wantChunks)
	}
	for _, field := range []bool{rec.SHA256 != "", rec.Size != 0, !rec.ModTime.IsZero(), rec.SourceSeq != 0, rec.Content != "", !rec.IndexedAt.IsZero()} {
		if field {
			t.Errorf("Build set a field the caller owns: %+v", rec)
			break
		}
	}
}

func TestBuildTitle(t *testing.T) {
	tests := []struct {
		name, path, content, want string
		warnings                  []string
	}{
		{"frontmatter wins", "a.md", "---\ntitle: From FM\n---\n# From H1\n", "From FM", nil},
		{"first H1", "a.md", "## Sub\n# First\n# Second\n", "First", nil},
		{"base name without H1", "docs/a.md", "## Only sub\n", "a.md", nil},
		{"non-string title falls back and warns", "a.md", "---\ntitle: 2024\n---\n# H\n", "H", []string{WarnTitleNotString}},
		{"blank title falls back", "a.md", "---\ntitle: \"  \"\n---\n# H\n", "H", nil},
		{"code file", "cmd/cue/main.go", "# not markdown\npackage main\n", "main.go", nil},
		{"card", ".cuedeck/cards/c1.md", "---\ntitle: Fix login\nstatus: todo\n---\n", "Fix login", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := Build("r", tt.path, tt.content)
			if rec.Title != tt.want {
				t.Errorf("Title = %q, want %q", rec.Title, tt.want)
			}
			if !reflect.DeepEqual(rec.Warnings, tt.warnings) {
				t.Errorf("Warnings = %q, want %q", rec.Warnings, tt.warnings)
			}
		})
	}
}

func TestBuildWarnings(t *testing.T) {
	rec := Build("r", "a.md", "---\ntitle: x\ntags: [a\n---\n# Still parsed\n")
	if want := []string{"frontmatter: line 3: did not find expected ',' or ']'"}; !reflect.DeepEqual(rec.Warnings, want) {
		t.Errorf("Warnings = %q, want %q", rec.Warnings, want)
	}
	if len(rec.Headings) != 1 || rec.Title != "Still parsed" || rec.Frontmatter != nil {
		t.Errorf("body not parsed after a frontmatter error: %+v", rec)
	}

	rec = Build("r", "a.md", "---\ntitle: x\n# never closed\n")
	if len(rec.Warnings) != 1 || !strings.HasPrefix(rec.Warnings[0], "frontmatter: line 1: frontmatter opened at line 1 is never closed with ---") {
		t.Errorf("Warnings = %q", rec.Warnings)
	}

	rec = Build("r", "a.txt", "ok \xff bytes\n")
	if !reflect.DeepEqual(rec.Warnings, []string{WarnInvalidUTF8}) {
		t.Errorf("invalid UTF-8: Warnings = %q, want %q", rec.Warnings, WarnInvalidUTF8)
	}
	// A replacement character in valid text is the file's own: ingest
	// flags its repairs, and the indexer warns on the flag.
	if rec = Build("r", "a.txt", "the file says \uFFFD itself\n"); len(rec.Warnings) != 0 {
		t.Errorf("valid text holding U+FFFD: Warnings = %q, want none", rec.Warnings)
	}
}

func TestBuildFrontmatterEncodesAsJSON(t *testing.T) {
	content := strings.Join([]string{
		"---",
		"title: Dates",
		"plain_date: 2024-05-06",
		"stamp: !!timestamp 2024-05-06",
		"moment: !!timestamp 2024-05-06T07:08:09.5Z",
		"nested:",
		"  owner: {name: ada, since: !!timestamp 2020-01-01}",
		"  2024: numbered key",
		"  true: bool key",
		"  list: [1, 2.5, null, {k: v}]",
		"odd: [.nan, .inf, -.inf]",
		"bin: !!binary aGVsbG8=",
		"---",
		"# Dates",
	}, "\n")
	rec := Build("r", "dates.md", content)
	if len(rec.Warnings) != 0 {
		t.Fatalf("Warnings = %q", rec.Warnings)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatalf("json.Marshal(record): %v", err)
	}
	var back events.DocRecord
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"title":      "Dates",
		"plain_date": "2024-05-06",
		"stamp":      "2024-05-06",
		"moment":     "2024-05-06T07:08:09.5Z",
		"nested": map[string]any{
			"owner": map[string]any{"name": "ada", "since": "2020-01-01"},
			"2024":  "numbered key",
			"true":  "bool key",
			"list":  []any{1.0, 2.5, nil, map[string]any{"k": "v"}},
		},
		"odd": []any{".nan", ".inf", "-.inf"},
		"bin": "hello",
	}
	if !reflect.DeepEqual(back.Frontmatter, want) {
		t.Errorf("frontmatter after a JSON round trip:\n got %#v\nwant %#v", back.Frontmatter, want)
	}
}

func TestBuildSplitsLongSections(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Big\n\n")
	for i := range 120 {
		fmt.Fprintf(&b, "Paragraph %d says something about the indexer and its chunks, at some length.\n", i)
		if i%7 == 6 {
			b.WriteString("\n")
		}
	}
	b.WriteString("## Small\nshort\n")
	content := b.String()
	rec := Build("r", "big.md", content)

	var big []events.Chunk
	for _, c := range rec.Chunks {
		if reflect.DeepEqual(c.HeadingPath, []string{"Big"}) {
			big = append(big, c)
		}
	}
	if len(big) < 3 {
		t.Fatalf("section of ~%d tokens split into %d chunks, want >= 3: %+v", tokens.Count(content), len(big), rec.Chunks)
	}
	lines := strings.Split(content, "\n")
	for i, c := range big {
		if c.Tokens > MaxChunkTokens {
			t.Errorf("chunk %d has %d tokens, limit %d", i, c.Tokens, MaxChunkTokens)
		}
		if i > 0 && c.StartLine <= big[i-1].EndLine {
			t.Errorf("chunk %d starts at %d, before chunk %d ends at %d", i, c.StartLine, i-1, big[i-1].EndLine)
		}
		// Pieces end at a blank line when one is at hand: the line after a
		// piece (before the next one starts) is blank, or the next starts
		// right after.
		if i+1 < len(big) && strings.TrimSpace(lines[c.EndLine]) != "" && big[i+1].StartLine != c.EndLine+1 {
			t.Errorf("chunk %d ends at %d but chunk %d starts at %d", i, c.EndLine, i+1, big[i+1].StartLine)
		}
	}
	// 2 lines of heading, 120 paragraphs and 17 blank lines.
	if big[0].StartLine != 1 || big[len(big)-1].EndLine != 139 {
		t.Errorf("Big chunks span %d-%d, want 1-139", big[0].StartLine, big[len(big)-1].EndLine)
	}
	blankEnds := 0
	for _, c := range big[:len(big)-1] {
		if strings.TrimSpace(lines[c.EndLine]) == "" {
			blankEnds++
		}
	}
	if blankEnds != len(big)-1 {
		t.Errorf("%d of %d pieces end before a blank line, want all", blankEnds, len(big)-1)
	}
	last := rec.Chunks[len(rec.Chunks)-1]
	if !reflect.DeepEqual(last.HeadingPath, []string{"Big", "Small"}) || last.StartLine != 140 || last.EndLine != 141 {
		t.Errorf("last chunk = %+v", last)
	}
}

func TestBuildCodeWindows(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		if i%25 == 0 {
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "\tx%d := compute(%d)\n", i, i)
	}
	rec := Build("r", "main.go", b.String())
	want := []struct{ start, end int }{{1, 49}, {51, 99}, {101, 149}, {151, 199}}
	if len(rec.Chunks) != len(want) {
		t.Fatalf("chunks = %+v, want spans %v", rec.Chunks, want)
	}
	for i, c := range rec.Chunks {
		if c.StartLine != want[i].start || c.EndLine != want[i].end || c.Tokens <= 0 || c.HeadingPath != nil {
			t.Errorf("chunk %d = %+v, want lines %d-%d", i, c, want[i].start, want[i].end)
		}
	}
	if rec.Headings != nil || rec.Links != nil || rec.Frontmatter != nil {
		t.Errorf("code file has markdown structure: %+v", rec)
	}
}

func TestBuildCodeWithoutBlankLinesCutsAtLines(t *testing.T) {
	content := strings.Repeat("x = 1\n", 130)
	rec := Build("r", "a.py", content)
	if len(rec.Chunks) != 2 || rec.Chunks[0].StartLine != 1 || rec.Chunks[1].EndLine != 130 || rec.Chunks[1].StartLine != rec.Chunks[0].EndLine+1 {
		t.Fatalf("chunks = %+v, want two covering lines 1-130", rec.Chunks)
	}
	for i, c := range rec.Chunks {
		want := tokens.Count(strings.TrimSuffix(strings.Repeat("x = 1\n", c.EndLine-c.StartLine+1), "\n"))
		if c.Tokens != want || c.Tokens > MaxChunkTokens || c.HeadingPath != nil {
			t.Errorf("chunk %d = %+v, want %d tokens at most %d", i, c, want, MaxChunkTokens)
		}
	}
}

func TestBuildEmpty(t *testing.T) {
	for _, path := range []string{"empty.md", "empty.go", "empty"} {
		rec := Build("r", path, "")
		if rec.Lines != 0 || rec.Tokens != 0 || rec.Chunks != nil || rec.Warnings != nil || rec.Title != path {
			t.Errorf("Build(%q, \"\") = %+v", path, rec)
		}
	}
	rec := Build("r", "blank.md", "\n\n  \n")
	if rec.Lines != 3 || rec.Chunks != nil {
		t.Errorf("blank file: %+v", rec)
	}
}

func TestBuildFrontmatterOnlyIsNotAChunk(t *testing.T) {
	rec := Build("r", ".cuedeck/cards/c.md", "---\ntitle: Card\n---\n\nBody text.\n")
	if rec.Kind != events.DocCard {
		t.Errorf("Kind = %q", rec.Kind)
	}
	if len(rec.Chunks) != 1 || rec.Chunks[0].StartLine != 5 || rec.Chunks[0].EndLine != 5 {
		t.Errorf("chunks = %+v, want one for line 5", rec.Chunks)
	}
}

// benchMarkdown and benchGo are about 1 MB of markdown and of Go that
// parses, with sections and declarations of typical sizes.
func benchMarkdown() string {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "## Section %d\n\nText with a [link](docs/page.md#anchor) and @doc/api#Login.\n\n```go\nfunc f() {}\n```\n\n", i)
		if i%10 == 0 {
			for j := range 12 {
				fmt.Fprintf(&sb, "Paragraph %d of a longer section, which the chunker must split at blank lines.\n\n", j)
			}
		}
	}
	return sb.String()
}

func benchGo() string {
	var sb strings.Builder
	sb.WriteString("// Package big is generated.\npackage big\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\n")
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "// Handler%d serves a request.\nfunc (s *Server) Handler%d(w http.ResponseWriter, r *http.Request) {\n", i, i)
		for j := range 8 + i%40 {
			fmt.Fprintf(&sb, "\tfmt.Fprintln(w, r.URL, %d)\n", j)
			if j%6 == 5 {
				sb.WriteString("\n")
			}
		}
		fmt.Fprintf(&sb, "}\n\n// Config%d holds settings.\ntype Config%d struct {\n\tName string\n\tSize int\n}\n\n", i, i)
	}
	return sb.String()
}

// benchmarkBuild also times tokens.Count of the whole content, the floor
// under Build, which counts the file once and its chunks at least once.
func benchmarkBuild(b *testing.B, path, content string) {
	b.Run("count-only", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			tokens.Count(content)
		}
	})
	for _, budget := range []int{MaxChunkTokens, 128} {
		b.Run(fmt.Sprintf("max=%d", budget), func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				BuildWith("r", path, content, ChunkOptions{MaxTokens: budget})
			}
		})
	}
}

func BenchmarkBuildMarkdown(b *testing.B) { benchmarkBuild(b, "big.md", benchMarkdown()) }

func BenchmarkBuildGo(b *testing.B) { benchmarkBuild(b, "big.go", benchGo()) }

// BenchmarkBuildCode is Go without a package clause, which go/parser
// rejects: the line heuristic cuts it.
func BenchmarkBuildCode(b *testing.B) {
	benchmarkBuild(b, "big.go", strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) {\n\tfmt.Fprintln(w, r.URL)\n}\n\n", 12000))
}

// BenchmarkBuildGoroot builds the records of the Go standard library's
// own .go files (the first 2,000 in walk order), as the indexer does when
// `cue bench --repo goroot` runs: real code rather than a repeated
// sample, so piece caches and parsers meet the variety users have.
func BenchmarkBuildGoroot(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src")
	var files []string
	total := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(files) == 2000 {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			data, err := os.ReadFile(p)
			if err == nil {
				files = append(files, string(data))
				total += len(data)
			}
		}
		return nil
	})
	if len(files) == 0 {
		b.Skip("no Go source under GOROOT:", root)
	}
	b.SetBytes(int64(total))
	for b.Loop() {
		for i, content := range files {
			Build("r", fmt.Sprintf("f%d.go", i), content)
		}
	}
}

func TestProse(t *testing.T) {
	for p, want := range map[string]bool{
		"docs/guide.md": true, ".cuedeck/cards/abc123.md": true, "README": true, "NOTICE": true,
		"docs/notes.txt": true, "docs/index.rst": true, "manual.adoc": true,
		"main.go": false, "config.yaml": false, "src/asm_amd64.s": false, "testdata/out.golden": false,
		"certs/ca.crt": false, ".gitignore": false, "Makefile": false,
	} {
		kind, _ := Classify(p)
		if got := Prose(kind, p); got != want {
			t.Errorf("Prose(%s, %q) = %v, want %v", kind, p, got, want)
		}
	}
}
