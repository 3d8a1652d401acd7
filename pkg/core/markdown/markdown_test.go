package markdown

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseHeadings(t *testing.T) {
	src := strings.Join([]string{
		"# Guide", // 1
		"",
		"Intro.",
		"",
		"## Install", // 5
		"",
		"```sh",
		"# not a heading",
		"```",
		"",            // 10
		"### Linux",   // 11
		"apt install", // 12
		"",
		"Usage *now*", // 14
		"-----------",
		"",
		"    # indented code, not a heading", // 17
		"",
		"# Appendix ##", // 19
		"last line",
	}, "\n") + "\n"
	got := Parse([]byte(src)).Headings
	want := []Heading{
		{Level: 1, Text: "Guide", Slug: "guide", Line: 1, EndLine: 18, Parent: -1},
		{Level: 2, Text: "Install", Slug: "install", Line: 5, EndLine: 13, Parent: 0},
		{Level: 3, Text: "Linux", Slug: "linux", Line: 11, EndLine: 13, Parent: 1},
		{Level: 2, Text: "Usage now", Slug: "usage-now", Line: 14, EndLine: 18, Parent: 0},
		{Level: 1, Text: "Appendix", Slug: "appendix", Line: 19, EndLine: 20, Parent: -1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headings:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseHeadingEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Heading
	}{
		{"empty", "", nil},
		{"no final newline", "# A\ntext", []Heading{{Level: 1, Text: "A", Slug: "a", Line: 1, EndLine: 2, Parent: -1}}},
		{"crlf", "# A\r\n\r\n## B\r\nx\r\n", []Heading{
			{Level: 1, Text: "A", Slug: "a", Line: 1, EndLine: 4, Parent: -1},
			{Level: 2, Text: "B", Slug: "b", Line: 3, EndLine: 4, Parent: 0},
		}},
		{"deeper level first", "### C\n# A\n", []Heading{
			{Level: 3, Text: "C", Slug: "c", Line: 1, EndLine: 1, Parent: -1},
			{Level: 1, Text: "A", Slug: "a", Line: 2, EndLine: 2, Parent: -1},
		}},
		{"skipped level nests under nearest higher", "# A\n### C\n## B\n", []Heading{
			{Level: 1, Text: "A", Slug: "a", Line: 1, EndLine: 3, Parent: -1},
			{Level: 3, Text: "C", Slug: "c", Line: 2, EndLine: 2, Parent: 0},
			{Level: 2, Text: "B", Slug: "b", Line: 3, EndLine: 3, Parent: 0},
		}},
		{"repeated text gets numbered slugs", "# Usage\n# Usage\n# Usage-1\n", []Heading{
			{Level: 1, Text: "Usage", Slug: "usage", Line: 1, EndLine: 1, Parent: -1},
			{Level: 1, Text: "Usage", Slug: "usage-1", Line: 2, EndLine: 2, Parent: -1},
			{Level: 1, Text: "Usage-1", Slug: "usage-1-1", Line: 3, EndLine: 3, Parent: -1},
		}},
		{"empty atx heading", "#\ntext\n", []Heading{{Level: 1, Line: 1, EndLine: 2, Parent: -1}}},
		{"multi-line setext", "Two\nlines\n===\n", []Heading{{Level: 1, Text: "Two lines", Slug: "two-lines", Line: 1, EndLine: 3, Parent: -1}}},
		{"inline markup stripped", "## Use `cue` with [links](x.md) and <b>html</b>\n", []Heading{
			{Level: 2, Text: "Use cue with links and html", Slug: "use-cue-with-links-and-html", Line: 1, EndLine: 1, Parent: -1},
		}},
		{"heading in block quote is not a section", "> # Quoted\n# Real\n", []Heading{
			{Level: 1, Text: "Real", Slug: "real", Line: 2, EndLine: 2, Parent: -1},
		}},
		{"tilde fence", "~~~\n# no\n~~~\n## yes\n", []Heading{
			{Level: 2, Text: "yes", Slug: "yes", Line: 4, EndLine: 4, Parent: -1},
		}},
		{"unclosed fence swallows the rest", "```\n# no\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse([]byte(tt.src)).Headings
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseLines(t *testing.T) {
	for src, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "a\n\n": 2, "\n": 1} {
		if got := Parse([]byte(src)).Lines; got != want {
			t.Errorf("Parse(%q).Lines = %d, want %d", src, got, want)
		}
	}
}

func TestParseLinks(t *testing.T) {
	src := strings.Join([]string{
		"# Links",
		"See [the API](docs/api.md#Login) and [home](https://example.com/a#b).", // 2
		"Mail [me](mailto:a@example.com), or <https://auto.example>.",           // 3
		"Jump to [below](#usage); read @doc/api#Login and @notes/todo.",         // 4
		"Ask @alice or write to bob@example.com; open @design.md or @api#Auth.", // 5
		"Not refs: `@doc/api#Login` and",                                        // 6
		"```",
		"@doc/in-code",
		"```",
		"[spaced](my%20doc.md) [ref link][r] ![img](pic.png) [@x/y](z.md)", // 10
		"",
		"[r]: docs/ref.md#Top",
	}, "\n")
	got := Parse([]byte(src)).Links
	want := []Link{
		{Target: "docs/api.md", Anchor: "Login", Text: "the API", Line: 2, Kind: KindLink},
		{Target: "https://example.com/a#b", Text: "home", Line: 2, Kind: KindExternal},
		{Target: "mailto:a@example.com", Text: "me", Line: 3, Kind: KindExternal},
		{Target: "https://auto.example", Text: "https://auto.example", Line: 3, Kind: KindExternal},
		{Anchor: "usage", Text: "below", Line: 4, Kind: KindLink},
		{Target: "doc/api", Anchor: "Login", Line: 4, Kind: KindRef},
		{Target: "notes/todo", Line: 4, Kind: KindRef},
		{Target: "design.md", Line: 5, Kind: KindRef},
		{Target: "api", Anchor: "Auth", Line: 5, Kind: KindRef},
		{Target: "my doc.md", Text: "spaced", Line: 10, Kind: KindLink},
		{Target: "docs/ref.md", Anchor: "Top", Text: "ref link", Line: 10, Kind: KindLink},
		{Target: "z.md", Text: "@x/y", Line: 10, Kind: KindLink},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseFrontmatter(t *testing.T) {
	src := "---\ntitle: Login flow\ntags: [auth, api]\nwhen: !!timestamp 2024-03-01\nat: !!timestamp 2024-03-01T10:20:30+02:00\nnested:\n  deep: {a: 1}\n  7: seven\nratio: .nan\n---\n# Login\n\n[x](y.md)\n"
	doc := Parse([]byte(src))
	if doc.FrontmatterErr != nil {
		t.Fatalf("FrontmatterErr = %v", doc.FrontmatterErr)
	}
	want := map[string]any{
		"title":  "Login flow",
		"tags":   []any{"auth", "api"},
		"when":   "2024-03-01",
		"at":     "2024-03-01T10:20:30+02:00",
		"nested": map[string]any{"deep": map[string]any{"a": 1}, "7": "seven"},
		"ratio":  ".nan",
	}
	if !reflect.DeepEqual(doc.Frontmatter, want) {
		t.Errorf("frontmatter:\n got %#v\nwant %#v", doc.Frontmatter, want)
	}
	if _, err := json.Marshal(doc.Frontmatter); err != nil {
		t.Errorf("frontmatter does not encode as JSON: %v", err)
	}
	if doc.BodyStart != 11 {
		t.Errorf("BodyStart = %d, want 11", doc.BodyStart)
	}
	if len(doc.Headings) != 1 || doc.Headings[0].Line != 11 {
		t.Errorf("headings = %+v, want Login at line 11", doc.Headings)
	}
	if len(doc.Links) != 1 || doc.Links[0].Line != 13 {
		t.Errorf("links = %+v, want one at line 13", doc.Links)
	}
}

func TestParseFrontmatterIsNotMarkdown(t *testing.T) {
	// Without frontmatter handling "title: x" over "---" is a setext heading.
	doc := Parse([]byte("---\ntitle: x\n---\nbody\n"))
	if len(doc.Headings) != 0 {
		t.Errorf("headings = %+v, want none", doc.Headings)
	}
	if doc.Frontmatter["title"] != "x" {
		t.Errorf("frontmatter = %v", doc.Frontmatter)
	}
}

func TestParseFrontmatterVariants(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		want      map[string]any
		bodyStart int
	}{
		{"none", "# A\n", nil, 1},
		{"empty block", "---\n---\n# A\n", map[string]any{}, 3},
		{"comment only", "---\n# just a comment\n---\n", map[string]any{}, 4},
		{"crlf and trailing space", "---  \r\na: 1\r\n--- \r\n", map[string]any{"a": 1}, 4},
		{"byte order mark", "\uFEFF---\na: 1\n---\n", map[string]any{"a": 1}, 4},
		{"not at the top", "\n---\na: 1\n---\n", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Parse([]byte(tt.src))
			if doc.FrontmatterErr != nil {
				t.Fatalf("FrontmatterErr = %v", doc.FrontmatterErr)
			}
			if !reflect.DeepEqual(doc.Frontmatter, tt.want) {
				t.Errorf("frontmatter = %#v, want %#v", doc.Frontmatter, tt.want)
			}
			if doc.BodyStart != tt.bodyStart {
				t.Errorf("BodyStart = %d, want %d", doc.BodyStart, tt.bodyStart)
			}
		})
	}
}

func TestParseFrontmatterErrors(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		line     int
		msg      string // substring
		headings int    // the body still parses
	}{
		{"broken flow", "---\ntitle: ok\ntags: [a, b\n---\n# Body\n", 3, "did not find expected ',' or ']'", 1},
		{"missing colon", "---\na: 1\nb: 2\nc 2\nd: 3\n---\n# Body\n", 4, "could not find expected ':'", 1},
		{"duplicate key names both lines in the file", "---\na: 1\na: 2\n---\n# Body\n", 3, `mapping key "a" already defined at line 2`, 1},
		{"a list", "---\n- a\n- b\n---\n# Body\n", 2, "must be a mapping of keys to values (key: value lines), not a list", 1},
		{"a scalar", "---\njust text\n---\n# Body\n", 2, "not a single value", 1},
		{"tab indentation", "---\na:\n\tb: 1\n---\n# Body\n", 3, "not tabs", 1},
		// yaml finds the map unclosed where the block ends.
		{"unclosed flow map on the first line", "---\na: {x\n---\n# Body\n", 3, "did not find expected ',' or '}'", 1},
		{"unterminated string", "---\na: 1\nb: \"x\n---\n# Body\n", 3, "found unexpected end of stream", 1},
		{"mapping in a value", "---\na: 1\nb: c: d\n---\n# Body\n", 3, "mapping values are not allowed", 1},
		{"never closed", "---\ntitle: x\n\n# Body\n", 1, "frontmatter opened at line 1 is never closed with ---", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Parse([]byte(tt.src))
			err := doc.FrontmatterErr
			if err == nil {
				t.Fatalf("FrontmatterErr = nil, want line %d %q", tt.line, tt.msg)
			}
			if err.Line != tt.line || !strings.Contains(err.Msg, tt.msg) {
				t.Errorf("FrontmatterErr = {Line: %d, Msg: %q}, want line %d containing %q", err.Line, err.Msg, tt.line, tt.msg)
			}
			if strings.HasPrefix(err.Msg, "yaml:") || strings.HasPrefix(err.Msg, "line ") {
				t.Errorf("Msg %q repeats the prefix Error adds", err.Msg)
			}
			if doc.Frontmatter != nil {
				t.Errorf("Frontmatter = %v, want nil on error", doc.Frontmatter)
			}
			if len(doc.Headings) != tt.headings {
				t.Errorf("headings = %+v, want %d", doc.Headings, tt.headings)
			}
		})
	}
	e := &FrontmatterError{Line: 4, Msg: "bad"}
	if got := e.Error(); got != "frontmatter: line 4: bad" {
		t.Errorf("Error() = %q", got)
	}
}

func TestJSONable(t *testing.T) {
	in := map[string]any{
		"t":   time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		"m":   map[any]any{1: []any{map[any]any{true: "x"}}},
		"inf": []any{1.5, -1 / zero()},
		"b":   []byte("raw"),
	}
	got := jsonable(in)
	want := map[string]any{
		"t":   "2024-01-02T03:04:05Z",
		"m":   map[string]any{"1": []any{map[string]any{"true": "x"}}},
		"inf": []any{1.5, "-.inf"},
		"b":   "raw",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jsonable:\n got %#v\nwant %#v", got, want)
	}
}

func zero() float64 { return 0 }

func TestSlug(t *testing.T) {
	tests := map[string]string{
		"Hello World":             "hello-world",
		"  Trimmed  ":             "trimmed",
		"API v2.0 (beta)!":        "api-v20-beta",
		"snake_case and-dash":     "snake_case-and-dash",
		"Two  spaces":             "two--spaces",
		"Ünïcödé Straße":          "ünïcödé-straße",
		"日本語 見出し":                 "日本語-見出し",
		"emoji 🚀 rocket":          "emoji--rocket",
		"C++ & Go":                "c--go",
		"":                        "",
		"what's `new`?":           "whats-new",
		string([]byte{0xff, 'a'}): "a",
	}
	for in, want := range tests {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSection(t *testing.T) {
	src := []byte(strings.Join([]string{
		"---",
		"title: API",
		"---",
		"# API", // 4
		"",
		"## Login", // 6
		"Send a token.",
		"",
		"### Errors", // 9
		"401 when expired.",
		"",
		"",
		"## Error Codes", // 13
		"- E1",
		"## Login", // 15, a second Login: slug login-1
		"again",
	}, "\n") + "\n")
	doc := Parse(src)
	tests := []struct {
		anchor     string
		text       string
		start, end int
	}{
		{"Login", "## Login\nSend a token.\n\n### Errors\n401 when expired.", 6, 10},
		{"login", "## Login\nSend a token.\n\n### Errors\n401 when expired.", 6, 10},
		{"#Login", "## Login\nSend a token.\n\n### Errors\n401 when expired.", 6, 10},
		{"errors", "### Errors\n401 when expired.", 9, 10},
		{"error-codes", "## Error Codes\n- E1", 13, 14},
		{"ERROR CODES", "## Error Codes\n- E1", 13, 14},
		{"login-1", "## Login\nagain", 15, 16},
		{"api", strings.Join(strings.Split(string(src), "\n")[3:16], "\n"), 4, 16},
	}
	for _, tt := range tests {
		text, start, end, ok := Section(src, doc, tt.anchor)
		if !ok || text != tt.text || start != tt.start || end != tt.end {
			t.Errorf("Section(%q) = %q, %d, %d, %v\nwant %q, %d, %d, true", tt.anchor, text, start, end, ok, tt.text, tt.start, tt.end)
		}
	}
	for _, anchor := range []string{"", "#", "Logout", "!!!"} {
		if _, _, _, ok := Section(src, doc, anchor); ok {
			t.Errorf("Section(%q) ok = true, want false", anchor)
		}
	}
}

func TestSectionTextMatchBeatsSlugMatch(t *testing.T) {
	// "a-b" is the text of the second heading and the slug of the first.
	src := []byte("# A B\none\n# a-b\ntwo\n")
	text, start, _, ok := Section(src, Parse(src), "a-b")
	if !ok || start != 3 || text != "# a-b\ntwo" {
		t.Errorf("Section(a-b) = %q from line %d (ok %v), want the heading whose text is a-b", text, start, ok)
	}
}

func TestSectionEmptyAndCRLF(t *testing.T) {
	src := []byte("# A\r\nx\r\n\r\n# B\r\n")
	text, start, end, ok := Section(src, Parse(src), "A")
	if !ok || text != "# A\r\nx" || start != 1 || end != 2 {
		t.Errorf("Section(A) = %q, %d, %d, %v", text, start, end, ok)
	}
	text, start, end, ok = Section(src, Parse(src), "B")
	if !ok || text != "# B" || start != 4 || end != 4 {
		t.Errorf("Section(B) = %q, %d, %d, %v", text, start, end, ok)
	}
}

func TestParseInvalidUTF8(t *testing.T) {
	src := []byte("# Caf\xe9 \xff\n[l\xfe](d\xfd.md)\n@x/\xc3(#a\n\n---\n")
	doc := Parse(src)
	if len(doc.Headings) != 1 || doc.Headings[0].Slug != "caf-" {
		t.Errorf("headings = %+v", doc.Headings)
	}
	if len(doc.Links) != 2 {
		t.Errorf("links = %+v", doc.Links)
	}
}

func TestParseIsConcurrencySafe(t *testing.T) {
	src := []byte("# A\n## B\n[x](y.md)\n")
	want := Parse(src)
	t.Run("group", func(t *testing.T) {
		for range 8 {
			t.Run("p", func(t *testing.T) {
				t.Parallel()
				if got := Parse(src); !reflect.DeepEqual(got, want) {
					t.Errorf("Parse = %+v, want %+v", got, want)
				}
			})
		}
	})
}

func TestParseLargeInput(t *testing.T) {
	src := largeDoc(5 << 20)
	start := time.Now()
	doc := Parse(src)
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Errorf("Parse of 5 MB took %v", elapsed)
	}
	if doc.Lines != bytes.Count(src, []byte{'\n'}) {
		t.Errorf("Lines = %d, want %d", doc.Lines, bytes.Count(src, []byte{'\n'}))
	}
	last := doc.Headings[len(doc.Headings)-1]
	if last.EndLine != doc.Lines {
		t.Errorf("last heading ends at %d, want %d", last.EndLine, doc.Lines)
	}
}

func TestParsePathologicalInputsAreBounded(t *testing.T) {
	// goldmark is quadratic in a paragraph's length on these; unbounded,
	// 512 KiB of the first took minutes. What bounds the time is that
	// goldmark never sees a paragraph longer than maxParagraph: check that
	// on what it is given (BenchmarkParsePathological measures the time).
	const size = 512 << 10
	for _, unit := range pathologicalUnits {
		src := []byte(strings.Repeat(unit, size/len(unit)))
		bounded, _ := boundParagraphs(src, false)
		if len(bounded) != len(src) || strings.Count(string(bounded), "\n") != strings.Count(string(src), "\n") {
			t.Errorf("%q: bounding changed the length or the lines, and so the offsets", unit)
		}
		if run := longestParagraph(bounded); run > maxParagraph {
			t.Errorf("%q x %d: goldmark would parse a paragraph of %d bytes (bound %d)", unit, size/len(unit), run, maxParagraph)
			continue // and take minutes over it
		}
		if unbounded := longestParagraph(src); unbounded <= maxParagraph {
			t.Errorf("%q x %d: the input is not pathological (longest paragraph %d bytes)", unit, size/len(unit), unbounded)
		}
		Parse(src)
	}
}

var pathologicalUnits = []string{"[a](", "[a](\n", "[x]: y\n", "[a](<", ">", "**_["}

// longestParagraph is the most bytes, line endings included, of a run of
// non-blank lines none of which can open a block: what goldmark parses as
// one paragraph at most.
func longestParagraph(body []byte) int {
	longest, run := 0, 0
	for _, line := range strings.SplitAfter(string(body), "\n") {
		text := strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(text) == "" || (len(text) <= maxParagraph && opensBlock([]byte(text))) {
			run = 0
			continue
		}
		run += len(text) + 1
		longest = max(longest, run)
	}
	return longest
}

func BenchmarkParsePathological(b *testing.B) {
	const size = 512 << 10
	for _, unit := range pathologicalUnits {
		src := []byte(strings.Repeat(unit, size/len(unit)))
		b.Run(fmt.Sprintf("%q", unit), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				Parse(src)
			}
		})
	}
}

func TestParseKeepsStructureAroundHugeParagraphs(t *testing.T) {
	para := strings.Repeat("word [x](y.md) ", 1000) // one 15 KB line
	src := strings.Join([]string{
		"# First", // 1
		strings.Repeat("line of a long paragraph\n", 2000) + "[after](a.md)", // 2-2002
		"```", // 2003
		strings.Repeat("# code line in a long fence\n", 2000) + "```", // 2004-4004
		para,                   // 4005
		"## Second [ok](b.md)", // 4006
	}, "\n")
	doc := Parse([]byte(src))
	var got []string
	for _, h := range doc.Headings {
		got = append(got, fmt.Sprintf("%d:%s", h.Line, h.Text))
	}
	if want := []string{"1:First", "4006:Second ok"}; !reflect.DeepEqual(got, want) {
		t.Errorf("headings = %v, want %v", got, want)
	}
	var links []string
	for _, l := range doc.Links {
		if l.Target != "y.md" {
			links = append(links, fmt.Sprintf("%d:%s", l.Line, l.Target))
		}
	}
	if want := []string{"2002:a.md", "4006:b.md"}; !reflect.DeepEqual(links, want) {
		t.Errorf("links = %v, want %v", links, want)
	}
}

// largeDoc returns about size bytes of markdown with headings, links, refs
// and code.
func largeDoc(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		b.WriteString("## Section heading number\n\nSome text with a [link](docs/page.md#anchor) and a ref to @doc/api#Login here.\n")
		b.WriteString("More prose, *emphasis*, `code` and a list:\n\n- one\n- two\n\n```go\n# not a heading\nfunc main() {}\n```\n\n")
		if i%10 == 0 {
			b.WriteString("# Top level\n\n")
		}
	}
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	src := largeDoc(5 << 20)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Parse(src)
	}
}

func BenchmarkSection(b *testing.B) {
	src := largeDoc(1 << 20)
	doc := Parse(src)
	b.ResetTimer()
	for b.Loop() {
		if _, _, _, ok := Section(src, doc, "Top level"); !ok {
			b.Fatal("no section")
		}
	}
}

func TestHeadingAttributes(t *testing.T) {
	tests := []struct {
		in, text, id string
		ok           bool
	}{
		{"Receivers {#receivers}", "Receivers", "receivers", true},
		{"Receivers  {#receivers}", "Receivers", "receivers", true},
		{"Setup {#setup .wide}", "Setup", "setup", true},
		{"Setup {.wide #setup}", "Setup", "setup", true},
		{"Notes {: #notes}", "Notes", "notes", true},
		{"Notes {:#notes .x}", "Notes", "notes", true},
		{"Styled {.wide}", "Styled", "", true},
		{`Titled {#t title="a b" data-x=1}`, "Titled", "t", true},
		{"Ids {#a.b:c_d-e}", "Ids", "a.b:c_d-e", true},
		{"Trailing {#x}  \r", "Trailing", "x", true},
		{"{#only}", "", "only", true},
		{"Set {a, b}", "Set {a, b}", "", false},
		{"Empty {}", "Empty {}", "", false},
		{"Bare {#}", "Bare {#}", "", false},
		{"Escaped \\{#x}", "Escaped \\{#x}", "", false},
		{"Not last {#x} here", "Not last {#x} here", "", false},
		{"Glued {#a#b}", "Glued {#a#b}", "", false},
		{`Open quote {t="x}`, `Open quote {t="x}`, "", false},
		{"Plain", "Plain", "", false},
	}
	for _, tt := range tests {
		text, id, ok := HeadingAttributes(tt.in)
		if text != tt.text || id != tt.id || ok != tt.ok {
			t.Errorf("HeadingAttributes(%q) = %q, %q, %v; want %q, %q, %v", tt.in, text, id, ok, tt.text, tt.id, tt.ok)
		}
	}
}

func TestParseHeadingAttributes(t *testing.T) {
	src := strings.Join([]string{
		"# Collector {#top}", // 1
		"## Receivers {#receivers}",
		"text",
		"## Exporters {: #exp .wide}", // 4
		"## Processors {.note}",
		"## Why_not_emphasis {#why_not_emphasis_x}", // 6
		"Setext {#setext}",
		"----------------",
		"## Closed ## {#closed}", // 9
		"## Receivers",           // 10: its generated slug avoids the explicit id
		"```",
		"## In a fence {#fenced}",
		"```",
		"",
	}, "\n")
	got := Parse([]byte(src)).Headings
	want := []Heading{
		{Level: 1, Text: "Collector", ID: "top", Slug: "top", Line: 1, EndLine: 13, Parent: -1},
		{Level: 2, Text: "Receivers", ID: "receivers", Slug: "receivers", Line: 2, EndLine: 3, Parent: 0},
		{Level: 2, Text: "Exporters", ID: "exp", Slug: "exp", Line: 4, EndLine: 4, Parent: 0},
		{Level: 2, Text: "Processors", Slug: "processors", Line: 5, EndLine: 5, Parent: 0},
		{Level: 2, Text: "Why_not_emphasis", ID: "why_not_emphasis_x", Slug: "why_not_emphasis_x", Line: 6, EndLine: 6, Parent: 0},
		{Level: 2, Text: "Setext", ID: "setext", Slug: "setext", Line: 7, EndLine: 8, Parent: 0},
		{Level: 2, Text: "Closed", ID: "closed", Slug: "closed", Line: 9, EndLine: 9, Parent: 0},
		{Level: 2, Text: "Receivers", Slug: "receivers-1", Line: 10, EndLine: 13, Parent: 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("headings:\n got %+v\nwant %+v", got, want)
	}
	doc := Parse([]byte(src))
	for anchor, line := range map[string]int{"Receivers": 2, "receivers": 2, "#receivers": 2, "exp": 4, "Exporters": 4, "processors": 5, "receivers-1": 10} {
		if _, start, _, ok := Section([]byte(src), doc, anchor); !ok || start != line {
			t.Errorf("Section(%q) starts at %d (ok %v), want line %d", anchor, start, ok, line)
		}
	}
	// An explicit id keeps its case; the anchor as written finds it.
	mixed := []byte("# Intro {#Getting-Started}\n")
	if _, start, _, ok := Section(mixed, Parse(mixed), "Getting-Started"); !ok || start != 1 {
		t.Errorf("mixed-case id: ok %v, start %d", ok, start)
	}
}

// BenchmarkParseHeadingAttributes parses headings made of unclosed
// attribute blocks, which goldmark's own attribute parser takes quadratic
// time over.
func BenchmarkParseHeadingAttributes(b *testing.B) {
	line := "# h " + strings.Repeat("{a=", 2700) + "}\n"
	src := []byte(strings.Repeat(line, 100))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Parse(src)
	}
}
