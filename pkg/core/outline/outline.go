// Package outline renders a source file or a markdown document compactly
// for a language model: seed 000 §5's semantic compression. Go code is
// read with go/parser, go/ast and go/doc: the package clause and imports,
// then every top-level declaration's signature (types with their kind and
// field or method names, consts and vars grouped) with the first sentence
// of its doc comment, or, without one, what its body calls. Python,
// TypeScript/JavaScript, Rust and the Java family are read by declaration
// patterns over lines, with the comment above as the summary; Go that
// does not parse falls back to the same. Markdown becomes its headings with
// the first sentence of each section. Each entry ends with the line range
// the implementation is in ("… L12-40").
//
// read_doc serves it as detail "outline" (internal/edge), and scenes
// (internal/scenes) include a node that does not fit whole as its outline.
// The package is pure: bytes in, text out; it never fails.
package outline

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Kind is the way a file is outlined.
type Kind string

// The kinds of outline. The heuristic kinds are read by declaration
// patterns over lines.
const (
	KindGo         Kind = "go"
	KindMarkdown   Kind = "markdown"
	KindPython     Kind = "python"
	KindTypeScript Kind = "typescript" // JavaScript too
	KindRust       Kind = "rust"
	KindJava       Kind = "java" // Java, Kotlin, C#, Scala, Swift
)

var kinds = map[string]Kind{
	".go": KindGo,
	".md": KindMarkdown, ".markdown": KindMarkdown, ".mdx": KindMarkdown,
	".py": KindPython, ".pyi": KindPython,
	".ts": KindTypeScript, ".tsx": KindTypeScript, ".mts": KindTypeScript, ".cts": KindTypeScript,
	".js": KindTypeScript, ".jsx": KindTypeScript, ".mjs": KindTypeScript, ".cjs": KindTypeScript,
	".rs":   KindRust,
	".java": KindJava, ".kt": KindJava, ".kts": KindJava, ".cs": KindJava, ".scala": KindJava, ".swift": KindJava,
}

// KindOf returns the kind of outline for a file at path p, and false
// when its extension is not one this package outlines.
func KindOf(p string) (Kind, bool) {
	k, ok := kinds[strings.ToLower(path.Ext(p))]
	return k, ok
}

// Limits on what an outline shows: a generated or adversarial file must
// not turn its outline into another huge text.
const (
	// MaxEntries bounds the declarations or headings listed; the rest
	// are counted in a last line.
	MaxEntries = 400
	// maxSignature bounds a signature's runes, maxSummary a summary's.
	maxSignature = 200
	maxSummary   = 160
	// maxNames bounds the names listed for a const group, struct fields
	// or imports.
	maxNames = 12
)

// Render returns the outline of src, the content of the file at path p
// (a section of a markdown file outlines as markdown). ok is false, and
// the text empty, when p's kind is not one KindOf knows. It never fails:
// Go that does not parse is outlined by its declaration patterns, invalid
// UTF-8 is replaced, and an empty file gives a header alone.
func Render(p string, src []byte) (text string, ok bool) {
	k, ok := KindOf(p)
	if !ok {
		return "", false
	}
	return RenderKind(k, p, src), true
}

// RenderFrom is Render for src that starts at line firstLine of the
// file at p, such as a markdown section: line ranges are the file's.
func RenderFrom(p string, src []byte, firstLine int) (text string, ok bool) {
	k, ok := KindOf(p)
	if !ok {
		return "", false
	}
	return renderAt(k, p, src, max(firstLine, 1)), true
}

// RenderKind is Render for a kind chosen by the caller.
func RenderKind(k Kind, p string, src []byte) string {
	return renderAt(k, p, src, 1)
}

func renderAt(k Kind, p string, src []byte, firstLine int) string {
	s := string(src)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	lines := splitLines(s)
	var o out
	note := ""
	switch k {
	case KindGo:
		if !goOutline(&o, src) {
			o = out{}
			note = "; did not parse, outlined by pattern"
			heuristic(&o, goRules(), lines)
		}
	case KindMarkdown:
		markdownOutline(&o, []byte(s))
	default:
		rules := ruleset{}
		if r, ok := rulesFor[k]; ok {
			rules = r()
		}
		heuristic(&o, rules, lines)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "outline of %s", oneLine(p, maxSignature))
	shift := firstLine - 1
	if shift > 0 {
		fmt.Fprintf(&b, " L%d-%d", firstLine, shift+max(len(lines), 1))
	}
	fmt.Fprintf(&b, " (%s, %d lines%s", k, len(lines), note)
	if k != KindMarkdown {
		b.WriteString("; bodies elided: read the lines after …")
	}
	b.WriteString(")\n")
	for i, e := range o.entries {
		if i == MaxEntries {
			fmt.Fprintf(&b, "… %d more not shown\n", len(o.entries)-MaxEntries)
			break
		}
		b.WriteString(strings.Repeat("  ", min(e.depth, 8)))
		b.WriteString(e.sig)
		if e.summary != "" {
			b.WriteString(" — " + e.summary)
		}
		if e.start > 0 {
			if e.end > e.start {
				fmt.Fprintf(&b, " … L%d-%d", e.start+shift, e.end+shift)
			} else {
				fmt.Fprintf(&b, " … L%d", e.start+shift)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// entry is one line of an outline.
type entry struct {
	depth      int // nesting, for members listed under their class
	sig        string
	summary    string
	start, end int // 1-indexed lines; start 0 for none
}

type out struct{ entries []entry }

func (o *out) add(e entry) {
	e.sig = oneLine(e.sig, maxSignature)
	e.summary = oneLine(e.summary, maxSummary)
	o.entries = append(o.entries, e)
}

// splitLines splits s at newlines; a final newline does not start another
// line, and "" has no lines. Carriage returns before newlines are dropped.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// oneLine collapses s's whitespace to single spaces and cuts it at max
// runes, at a word boundary when one is near, marking the cut with "…".
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut := 0
	for i := range s {
		if cut == max {
			s = s[:i]
			break
		}
		cut++
	}
	if i := strings.LastIndexByte(s, ' '); i > len(s)*3/4 {
		s = s[:i]
	}
	return s + "…"
}

// firstSentence returns the first sentence of prose: up to the first '.',
// '!' or '?' followed by a space and not ending a one-letter word or a
// common abbreviation, or the whole text.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
		default:
			continue
		}
		if s[i+1] != ' ' {
			continue
		}
		if s[i] == '.' {
			word := s[strings.LastIndexByte(s[:i], ' ')+1 : i]
			if len(word) == 1 || abbreviations[strings.ToLower(word)] {
				continue
			}
		}
		return s[:i+1]
	}
	return s
}

var abbreviations = map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "approx": true}
