// Package docparse derives what the indexer stores about a file: its kind
// and language, line and token counts, title, headings, links, frontmatter
// and the chunks search scores on their own. The indexer calls Build (or
// BuildWith, to set the chunk budget) for each FileUpserted and adds the
// fields that come from the event itself; it embeds ChunkText of each chunk.
//
// Chunks follow the file's structure and keep under a token budget
// (ChunkOptions.MaxTokens, which bounds ChunkText: heading path line plus
// the chunk's lines):
//
//   - Markdown: one chunk per section, from its heading to the next heading
//     of any level, with the heading path (["Auth", "Login"]); the text
//     before the first heading has none, frontmatter is in no chunk.
//     Sections are not merged, so each chunk names its own section.
//   - Go: the package clause and imports as one chunk (["package name"]),
//     then one per top-level declaration with its doc comment, named as
//     "func (*Index).Search", "type Config" or "const (A, B, C, …)". A file
//     that go/parser rejects is cut as below.
//   - Python, TypeScript, JavaScript, Rust, Java, C, C++, Ruby, shell and
//     unparsable Go: at lines that look like declarations, unindented or,
//     inside a class, impl or module, one level in; comments, decorators
//     and attributes right above go with them. The heading path is the
//     declaration's trimmed line, under its container's for a member.
//   - Anything else: paragraphs packed under the budget.
//
// A piece over the budget is split at blank lines (a markdown code fence
// stays whole when it fits), then at lines; each piece keeps the heading
// path. Chunks hold whole lines, so a single line over the budget is a
// chunk over the budget.
package docparse

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/markdown"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// MaxChunkTokens is the token budget of a chunk when ChunkOptions do not
// set one: roomy enough for keyword search to score a whole section.
const MaxChunkTokens = 512

// Warning texts that are not built from a message.
const (
	WarnInvalidUTF8    = "invalid UTF-8 replaced"
	WarnTitleNotString = "frontmatter: title is not a string; quote it to use it as the title"
)

// CardsDir holds task cards; markdown files under it are DocCard.
const CardsDir = ".cuedeck/cards/"

// Build derives a DocRecord from a file's content. It fills Repo, Path, Kind,
// Language, Tokens, Lines, Title, Headings, Links, Frontmatter, Chunks and
// Warnings; the caller sets SHA256, Size, ModTime, SourceSeq, Content and
// IndexedAt. A code file's Links are its imports (Kind LinkImport). Build
// never fails: what it cannot read it reports in Warnings.
// Invalid UTF-8 is replaced by U+FFFD before parsing, so line numbers and
// chunks refer to the repaired text. Build chunks with the default
// ChunkOptions; see BuildWith.
func Build(repo, path, content string) events.DocRecord {
	return BuildWith(repo, path, content, ChunkOptions{})
}

// BuildWith is Build with chunks cut to opt. Chunks follow the file's
// structure (see the package doc): they are in file order, do not overlap,
// and together hold every non-blank line of the file except a markdown
// file's frontmatter. A chunk's Tokens counts its lines alone; the budget
// bounds ChunkText, which adds the heading path.
func BuildWith(repo, path, content string, opt ChunkOptions) events.DocRecord {
	rec := events.DocRecord{Repo: repo, Path: path}
	if !utf8.ValidString(content) {
		// Ingest repairs content before it travels and says so with a
		// flag the indexer turns into this warning; U+FFFD in valid text
		// is the file's own (six SciFact abstracts hold it) and no repair.
		content = strings.ToValidUTF8(content, "\uFFFD")
		rec.Warnings = append(rec.Warnings, WarnInvalidUTF8)
	}
	rec.Kind, rec.Language = Classify(path)
	lines := newLines(content)
	rec.Lines = lines.count()
	counter := tokens.NewCounter(content)
	defer counter.Release()
	rec.Tokens = counter.Total()
	rec.Title = baseName(path)

	c := newChunker(content, lines, counter, opt.maxTokens())
	switch rec.Kind {
	case events.DocMarkdown, events.DocCard:
		buildMarkdown(&rec, c)
	case events.DocCode:
		rec.Chunks = codeChunks(c, rec.Language)
		rec.Links = imports(content, rec.Language)
	default:
		rec.Chunks = c.region(1, lines.count(), nil)
	}
	return rec
}

func buildMarkdown(rec *events.DocRecord, c *chunker) {
	content := c.content
	doc := markdown.Parse([]byte(content))
	if doc.FrontmatterErr != nil {
		rec.Warnings = append(rec.Warnings, doc.FrontmatterErr.Error())
	}
	if len(doc.Frontmatter) > 0 {
		rec.Frontmatter = doc.Frontmatter
	}
	rec.Title = title(doc, rec.Title, &rec.Warnings)

	if len(doc.Headings) > 0 {
		rec.Headings = make([]events.Heading, len(doc.Headings))
		for i, h := range doc.Headings {
			rec.Headings[i] = events.Heading{
				Level:     h.Level,
				Text:      h.Text,
				Slug:      h.Slug,
				Line:      h.Line,
				EndLine:   h.EndLine,
				ParentIdx: h.Parent,
			}
		}
	}
	if len(doc.Links) > 0 {
		rec.Links = make([]events.Link, len(doc.Links))
		for i, l := range doc.Links {
			rec.Links[i] = events.Link{Target: l.Target, Anchor: l.Anchor, Text: l.Text, Line: l.Line, Kind: string(l.Kind)}
		}
	}
	rec.Chunks = sectionChunks(c, doc)
}

// title is the frontmatter's title if it is a string, else the text of the
// first level-1 heading, else fallback.
func title(doc markdown.Document, fallback string, warnings *[]string) string {
	if t, ok := doc.Frontmatter["title"]; ok {
		switch t := t.(type) {
		case string:
			if t = strings.TrimSpace(t); t != "" {
				return t
			}
		case nil:
		default:
			*warnings = append(*warnings, WarnTitleNotString)
		}
	}
	for _, h := range doc.Headings {
		if h.Level == 1 && h.Text != "" {
			return h.Text
		}
	}
	return fallback
}

// baseName is the fallback title; a path's bytes are not checked for
// UTF-8 upstream, and a title is shown.
func baseName(p string) string {
	if p == "" {
		return ""
	}
	return strings.ToValidUTF8(path.Base(p), "\uFFFD")
}

// sectionChunks makes a chunk of the text before the first heading and one
// of each heading's own lines (up to the next heading of any level), each
// labelled with its heading path and split if it is over the budget. Code
// fences are kept whole when they fit. Small sections are not merged: each
// chunk keeps the heading path of its own section.
func sectionChunks(c *chunker, doc markdown.Document) []events.Chunk {
	c.glued = fenceLines(c.content, c.lines, doc.BodyStart)
	var chunks []events.Chunk
	firstHeading := doc.Lines + 1
	if len(doc.Headings) > 0 {
		firstHeading = doc.Headings[0].Line
	}
	chunks = append(chunks, c.region(doc.BodyStart, firstHeading-1, nil)...)
	for i, h := range doc.Headings {
		end := doc.Lines
		if i+1 < len(doc.Headings) {
			end = doc.Headings[i+1].Line - 1
		}
		chunks = append(chunks, c.region(h.Line, end, headingPath(doc.Headings, i))...)
	}
	return chunks
}

// fenceLines marks the lines after a code fence opens, up to and including
// the line that closes it (or the end of the file), so that a blank line in
// a fence does not end a paragraph. It returns nil when there is no fence.
func fenceLines(content string, lines lineIndex, from int) []bool {
	var glued []bool
	var fence string // the open fence's marker, "" when none is open
	for l := from; l <= lines.count(); l++ {
		t := strings.TrimLeft(lines.text(content, l, l), " \t")
		if fence != "" {
			if glued == nil {
				glued = make([]bool, lines.count()+1)
			}
			glued[l] = true
			if strings.HasPrefix(t, fence) && strings.TrimRight(t, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			n := len(t) - len(strings.TrimLeft(t, t[:1]))
			if t[0] == '`' && strings.Contains(t[n:], "`") {
				continue // inline code: a backtick fence's info has none
			}
			fence = t[:n]
		}
	}
	return glued
}

func headingPath(hs []markdown.Heading, i int) []string {
	var p []string
	for ; i >= 0; i = hs[i].Parent {
		p = append(p, hs[i].Text)
	}
	for l, r := 0, len(p)-1; l < r; l, r = l+1, r-1 {
		p[l], p[r] = p[r], p[l]
	}
	return p
}

// Prose reports whether a document of kind at p is written to be read as
// text: markdown, task cards, and plain-text documents (.txt, .rst, .adoc,
// .asciidoc, .org, .tex, .text, and names without an extension such as
// README or NOTICE). Code, data, certificates, test outputs and dot files
// (settings) are not.
func Prose(kind events.DocKind, p string) bool {
	switch kind {
	case events.DocMarkdown, events.DocCard:
		return true
	case events.DocText:
		base := path.Base(p)
		return !strings.HasPrefix(base, ".") && proseExtensions[strings.ToLower(path.Ext(base))]
	}
	return false
}

var proseExtensions = map[string]bool{"": true, ".txt": true, ".rst": true, ".adoc": true, ".asciidoc": true, ".org": true, ".tex": true, ".text": true}

// Classify returns a file's kind and, for code and markdown, its language,
// from its path: markdown under CardsDir is a card.
func Classify(p string) (events.DocKind, string) {
	base := path.Base(p)
	ext := strings.ToLower(path.Ext(base))
	switch ext {
	case ".md", ".markdown", ".mdx":
		if strings.HasPrefix(p, CardsDir) || strings.Contains(p, "/"+CardsDir) {
			return events.DocCard, "markdown"
		}
		return events.DocMarkdown, "markdown"
	}
	if lang, ok := languages[ext]; ok {
		return events.DocCode, lang
	}
	if lang, ok := fileNames[base]; ok {
		return events.DocCode, lang
	}
	if strings.HasPrefix(base, "Dockerfile.") || strings.HasSuffix(base, ".Dockerfile") {
		return events.DocCode, "dockerfile"
	}
	return events.DocText, ""
}

var languages = map[string]string{
	".go": "go", ".py": "python", ".pyi": "python",
	".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
	".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
	".cs": "csharp", ".rb": "ruby", ".php": "php", ".pl": "perl", ".lua": "lua", ".r": "r",
	".scala": "scala", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell",
	".ml": "ocaml", ".mli": "ocaml", ".clj": "clojure", ".dart": "dart", ".zig": "zig",
	".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "fish", ".ps1": "powershell",
	".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".json": "json", ".jsonc": "json",
	".sql": "sql", ".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sass": "sass",
	".vue": "vue", ".svelte": "svelte", ".xml": "xml", ".proto": "protobuf",
	".graphql": "graphql", ".gql": "graphql", ".tf": "hcl", ".hcl": "hcl", ".nix": "nix",
	".cue": "cue", ".mk": "make", ".cmake": "cmake", ".gradle": "groovy", ".groovy": "groovy",
}

var fileNames = map[string]string{
	"Makefile": "make", "GNUmakefile": "make", "makefile": "make",
	"Dockerfile": "dockerfile", "Containerfile": "dockerfile",
	"CMakeLists.txt": "cmake", "Jenkinsfile": "groovy", "Rakefile": "ruby", "Gemfile": "ruby",
}

// lineIndex holds the byte offset where each line of a text starts.
type lineIndex struct {
	starts []int
	size   int
}

func newLines(s string) lineIndex {
	starts := make([]int, 1, strings.Count(s, "\n")+1)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && i+1 < len(s) {
			starts = append(starts, i+1)
		}
	}
	return lineIndex{starts: starts, size: len(s)}
}

func (li lineIndex) count() int {
	if li.size == 0 {
		return 0
	}
	return len(li.starts)
}

// text returns lines a..b (1-indexed, inclusive) without the final line
// ending.
func (li lineIndex) text(s string, a, b int) string {
	x, y := li.span(s, a, b)
	return s[x:y]
}

// span is where text(s, a, b) starts and ends in s.
func (li lineIndex) span(s string, a, b int) (x, y int) {
	y = li.size
	if b < len(li.starts) {
		y = li.starts[b]
	}
	x = li.starts[a-1]
	if y > x && s[y-1] == '\n' {
		y--
	}
	if y > x && s[y-1] == '\r' {
		y--
	}
	return x, y
}

func (li lineIndex) blank(s string, l int) bool {
	return strings.TrimSpace(li.text(s, l, l)) == ""
}

// trim narrows a..b to drop blank lines at either end; ok is false if
// nothing is left.
func (li lineIndex) trim(s string, a, b int) (int, int, bool) {
	a, b = max(a, 1), min(b, li.count())
	for a <= b && li.blank(s, a) {
		a++
	}
	for b >= a && li.blank(s, b) {
		b--
	}
	return a, b, a <= b
}
