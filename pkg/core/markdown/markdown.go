// Package markdown reads the structure CueDeck needs from a markdown file:
// its headings and the line ranges of their sections, its links and @doc
// references, and its YAML frontmatter. The indexer (internal/docparse)
// turns the result into a DocRecord; read_doc uses Section to answer an
// anchor such as @doc/api#Login.
//
// The package is pure: it reads bytes and returns values, and imports no
// NATS, Badger, network or filesystem code.
package markdown

import (
	"bytes"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Document is the structure of one markdown file. Line numbers are 1-indexed
// and count every line of the file, frontmatter included.
type Document struct {
	// Lines is the number of lines in the file; a final newline does not
	// start another line.
	Lines int
	// BodyStart is the first line after the frontmatter block, or 1 when
	// the file has none.
	BodyStart int
	// Headings are the document's top-level headings (not those inside
	// block quotes or lists) in file order.
	Headings []Heading
	// Links are markdown links and @doc references in file order.
	Links []Link
	// Frontmatter is the YAML block between the leading --- lines, holding
	// only JSON-encodable values (see the frontmatter doc). It is nil when
	// the file has no frontmatter or it is broken.
	Frontmatter map[string]any
	// FrontmatterErr says why the frontmatter could not be read; the rest
	// of the document is parsed all the same.
	FrontmatterErr *FrontmatterError
}

// Heading is one heading and the section it opens.
type Heading struct {
	Level int
	// Text is the heading's text with inline markup removed, and without
	// an attribute block at its end ("## Receivers {#receivers}" has the
	// text "Receivers"; see HeadingAttributes).
	Text string
	// ID is the id the heading's attribute block gives it, or "".
	ID string
	// Slug is the heading's anchor: its ID when it has one, else the
	// GitHub-style slug of its text, made unique within the document the
	// way GitHub does it ("usage", "usage-1", ...).
	Slug string
	// Line is the heading's line (for a setext heading, its first text line).
	Line int
	// EndLine is the last line of the section: the line before the next
	// heading of the same or a higher level, or the last line of the file.
	EndLine int
	// Parent is the index in Document.Headings of the nearest preceding
	// heading of a higher level, or -1 when there is none.
	Parent int
}

// LinkKind classifies a Link.
type LinkKind string

// The kinds of Link.
const (
	// KindLink is a markdown link to a path in the repository, or to an
	// anchor of the same document when Target is empty.
	KindLink LinkKind = "link"
	// KindExternal is a markdown link with a URL scheme (https:, mailto:, ...)
	// or a protocol-relative URL (//host/...).
	KindExternal LinkKind = "external"
	// KindRef is an @doc reference in text, such as @doc/api#Login. Its
	// Target is written as the author wrote it and may omit ".md".
	KindRef LinkKind = "ref"
)

// Link is a reference from the document to another document or a section.
type Link struct {
	// Target is the link's destination without its #fragment. For KindLink
	// it is percent-decoded.
	Target string
	// Anchor is the fragment after '#', if any.
	Anchor string
	// Text is the link text (empty for a ref).
	Text string
	Line int
	Kind LinkKind
}

// mdParser is built on first use, not at package init, so that importing
// the package costs nothing; goldmark parsers are safe for concurrent use.
var mdParser = sync.OnceValue(func() parser.Parser { return goldmark.DefaultParser() })

// Parse reads the structure of a markdown file. It never fails: broken
// frontmatter is reported in Document.FrontmatterErr and everything else
// parses as CommonMark does, invalid UTF-8 included. To keep its time linear,
// a line that would make a paragraph longer than 8 KiB is not parsed, so
// links on it are missed; headings and code fences are always found.
func Parse(src []byte) Document {
	lines := newLineIndex(src)
	doc := Document{Lines: lines.count(), BodyStart: 1}

	body, owned := src, false
	if fm, ok := splitFrontmatter(src); ok {
		doc.Frontmatter, doc.FrontmatterErr = fm.decode()
		if fm.closeLine > 0 {
			doc.BodyStart = fm.closeLine + 1
			// Blank out the block rather than cut it, so that byte offsets
			// and line numbers of the body stay those of the file and the
			// YAML cannot be read as markdown (key: value\n--- would be a
			// setext heading).
			body, owned = bytes.Clone(src), true
			for i := 0; i < fm.bodyOffset; i++ {
				if body[i] != '\n' && body[i] != '\r' {
					body[i] = ' '
				}
			}
		}
	}

	body, owned = boundParagraphs(body, owned)
	body, ids := blankHeadingAttributes(body, owned)
	root := mdParser().Parse(text.NewReader(body))
	w := walker{src: body, lines: lines, ids: ids}
	w.collect(root)
	doc.Headings = w.headings
	doc.Links = w.sortedLinks()
	finishHeadings(doc.Headings, doc.Lines)
	return doc
}

// maxParagraph bounds the bytes goldmark parses as one paragraph. Its
// inline and link-definition parsers take time quadratic in a paragraph's
// length on unclosed constructs: 200 KB of "[a](" took 24 s, 5 MB would take
// hours. Real paragraphs are far shorter.
const maxParagraph = 8 << 10

// boundParagraphs blanks a line (keeping its line ending, so offsets hold)
// wherever a run of non-blank lines would grow past maxParagraph, and any
// longer line. Lines that can open or close a block (headings, setext
// underlines, thematic breaks, code fences) end a run and are never blanked,
// so headings and code blocks come out as without it. The text of a blanked
// line is lost to the parse; it is there only in adversarial or generated
// files. body is copied before its first change unless owned is true; the
// result is owned when body was or a copy was made.
func boundParagraphs(body []byte, owned bool) ([]byte, bool) {
	run := 0
	for off := 0; off < len(body); {
		line, next := nextLine(body, off)
		switch {
		case len(bytes.TrimSpace(line)) == 0:
			run = 0
		case len(line) <= maxParagraph && opensBlock(line):
			run = 0
		default:
			run += len(line) + 1
			if run > maxParagraph {
				if !owned {
					body, owned = bytes.Clone(body), true
				}
				for i := off; i < off+len(line); i++ {
					if body[i] != '\r' {
						body[i] = ' '
					}
				}
				run = 0
			}
		}
		off = next
	}
	return body, owned
}

// opensBlock reports whether line may be an ATX heading, a setext underline,
// a thematic break or a code fence.
func opensBlock(line []byte) bool {
	t := bytes.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) == 0 {
		return false
	}
	switch t[0] {
	case '#':
		return true
	case '`', '~':
		return bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~"))
	case '=', '-', '*', '_':
		return len(bytes.Trim(t, " \t\r=-*_")) == 0
	}
	return false
}

// walker gathers headings, links and the text runs that may hold refs.
type walker struct {
	src      []byte
	lines    lineIndex
	headings []Heading
	links    []linkAt
	runs     []text.Segment
	// ids are the explicit heading ids by the line of their attribute
	// block (blankHeadingAttributes).
	ids map[int]string
}

// linkAt is a Link and the byte offset that orders it among the others.
type linkAt struct {
	Link
	off int
}

func (w *walker) collect(root ast.Node) {
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			if n.Parent() != nil && n.Parent().Kind() == ast.KindDocument {
				line := w.lines.lineOf(w.offsetOf(n))
				// The attribute block is on the heading's last text line.
				last := line
				if k := n.Lines().Len(); k > 0 {
					last = w.lines.lineOf(n.Lines().At(k - 1).Start)
				}
				w.headings = append(w.headings, Heading{
					Level: n.Level,
					Text:  inlineText(n, w.src),
					ID:    w.ids[last],
					Line:  line,
				})
			}
		case *ast.Link:
			w.addLink(string(n.Destination), inlineText(n, w.src), w.offsetOf(n))
			// Refs inside link text would repeat the link.
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			w.addLink(string(n.URL(w.src)), string(n.Label(w.src)), w.offsetOf(n))
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan, *ast.Image, *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			w.addRun(n.Segment)
		}
		return ast.WalkContinue, nil
	})
	w.findRefs()
}

// sortedLinks returns the links in the order they appear in the file.
func (w *walker) sortedLinks() []Link {
	sort.SliceStable(w.links, func(i, j int) bool { return w.links[i].off < w.links[j].off })
	out := make([]Link, len(w.links))
	for i, l := range w.links {
		out[i] = l.Link
	}
	return out
}

// offsetOf returns the byte offset where n starts, falling back to its first
// line or its block when goldmark recorded no position.
func (w *walker) offsetOf(n ast.Node) int {
	for ; n != nil; n = n.Parent() {
		if p := n.Pos(); p >= 0 {
			return p
		}
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return n.Lines().At(0).Start
		}
	}
	return 0
}

func (w *walker) addLink(dest, label string, offset int) {
	target, anchor, _ := strings.Cut(dest, "#")
	kind := KindLink
	if isExternal(target) {
		kind, target, anchor = KindExternal, dest, ""
	} else {
		if t, err := url.PathUnescape(target); err == nil {
			target = t
		}
		// [x](otel.md#Tail%20Sampling) names the heading "Tail Sampling".
		if a, err := url.PathUnescape(anchor); err == nil {
			anchor = a
		}
	}
	if target == "" && anchor == "" {
		return
	}
	w.links = append(w.links, linkAt{Link{
		Target: target,
		Anchor: anchor,
		Text:   label,
		Line:   w.lines.lineOf(offset),
		Kind:   kind,
	}, offset})
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

func isExternal(target string) bool {
	return schemeRE.MatchString(target) || strings.HasPrefix(target, "//")
}

// addRun records a text segment, joining it to the previous one when they
// touch, so that a ref split by the inline parser is seen whole.
func (w *walker) addRun(s text.Segment) {
	if k := len(w.runs) - 1; k >= 0 && w.runs[k].Stop == s.Start {
		w.runs[k].Stop = s.Stop
		return
	}
	w.runs = append(w.runs, s)
}

// refRE matches @path[#anchor]; what may precede the @ is checked by hand
// (an e-mail address is not a ref).
var refRE = regexp.MustCompile(`@([\p{L}\p{N}_./~-]+)(#[\p{L}\p{N}_.-]+)?`)

func (w *walker) findRefs() {
	for _, run := range w.runs {
		s := w.src[run.Start:run.Stop]
		if bytes.IndexByte(s, '@') < 0 {
			continue
		}
		for _, m := range refRE.FindAllSubmatchIndex(s, -1) {
			if m[0] > 0 {
				r, _ := utf8.DecodeLastRune(s[:m[0]])
				if isRefByte(r) {
					continue
				}
			}
			target := string(s[m[2]:m[3]])
			var anchor string
			if m[4] >= 0 {
				anchor = strings.TrimRight(string(s[m[4]+1:m[5]]), ".")
				if whole, ok := w.lineAnchor(run.Start+m[0], run.Start+m[4]+1); ok {
					anchor = whole
				}
			} else if q, ok := quotedAnchor(s[m[1]:]); ok {
				anchor = q
			} else {
				// A sentence may end right after a ref.
				target = strings.TrimRight(target, ".")
			}
			if !looksLikeDoc(target, anchor) {
				continue
			}
			off := run.Start + m[0]
			w.links = append(w.links, linkAt{Link{
				Target: target,
				Anchor: anchor,
				Line:   w.lines.lineOf(off),
				Kind:   KindRef,
			}, off})
		}
	}
}

// quotedAnchor reads the anchor of a ref written @path#"Heading with
// spaces": rest follows the path, and the closing quote is on its line.
func quotedAnchor(rest []byte) (string, bool) {
	q, ok := bytes.CutPrefix(rest, []byte(`#"`))
	if !ok {
		return "", false
	}
	end := bytes.IndexAny(q, "\"\n")
	if end <= 0 || q[end] != '"' {
		return "", false
	}
	anchor := strings.TrimSpace(string(q[:end]))
	return anchor, anchor != ""
}

// spacedAnchor is what may follow a ref's anchor on its line for the
// rest of the line to be the anchor: words, no markup.
var spacedAnchor = regexp.MustCompile(`^[\p{L}\p{N}_.\- \t]*$`)

// lineAnchor reads the anchor of a ref alone on its line, as in a list of
// references ("- @docs/otel.md#Tail Sampling"): then every word after the
// '#' is the heading's, the line's end being where the ref ends. ref is
// the offset of the '@' and anchor of the anchor's first byte. Elsewhere a
// space ends the anchor, since prose follows (@doc/api#Login for details).
func (w *walker) lineAnchor(ref, anchor int) (string, bool) {
	start := bytes.LastIndexByte(w.src[:ref], '\n') + 1
	end := len(w.src)
	if i := bytes.IndexByte(w.src[anchor:], '\n'); i >= 0 {
		end = anchor + i
	}
	if strings.TrimLeft(string(w.src[start:ref]), " \t-*+>0123456789.)") != "" {
		return "", false
	}
	rest := bytes.TrimRight(w.src[anchor:end], " \t\r.")
	if !bytes.ContainsAny(rest, " \t") || !spacedAnchor.Match(rest) {
		return "", false
	}
	return string(rest), true
}

// isRefByte reports whether r, just before an @, makes it part of a word
// (an e-mail address, a path) rather than the start of a ref.
func isRefByte(r rune) bool {
	return r == '@' || r == '/' || r == '.' || r == '_' || r == '-' ||
		unicode.IsLetter(r) || unicode.IsDigit(r)
}

// looksLikeDoc tells a doc ref from a mention: @alice is a person,
// @doc/api, @api.md and @api#Login are documents.
func looksLikeDoc(target, anchor string) bool {
	if strings.Trim(target, "./") == "" {
		return false
	}
	return anchor != "" || strings.Contains(target, "/") ||
		strings.HasSuffix(strings.ToLower(target), ".md")
}

// inlineText returns the plain text of n's inline children.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	var add func(ast.Node)
	add = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Value(src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(c.Value)
			case *ast.AutoLink:
				b.Write(c.Label(src))
			case *ast.RawHTML:
			default:
				add(c)
			}
		}
	}
	add(n)
	return strings.TrimSpace(b.String())
}

// finishHeadings sets EndLine, Parent and slugs. A heading's section
// runs until the next heading of the same or a higher level (a smaller or
// equal Level): the stack holds the headings whose sections are still open.
// Explicit ids are slugs as written; generated slugs avoid them.
func finishHeadings(hs []Heading, lastLine int) {
	var open []int
	slugs := newSlugger(len(hs))
	for _, h := range hs {
		if h.ID != "" {
			slugs.taken[h.ID] = true
		}
	}
	for i := range hs {
		h := &hs[i]
		for len(open) > 0 && hs[open[len(open)-1]].Level >= h.Level {
			hs[open[len(open)-1]].EndLine = h.Line - 1
			open = open[:len(open)-1]
		}
		h.Parent = -1
		if len(open) > 0 {
			h.Parent = open[len(open)-1]
		}
		open = append(open, i)
		if h.ID != "" {
			h.Slug = h.ID
		} else {
			h.Slug = slugs.unique(Slug(h.Text))
		}
	}
	for _, i := range open {
		hs[i].EndLine = lastLine
	}
}

// lineIndex maps byte offsets to 1-indexed line numbers.
type lineIndex struct {
	starts []int // byte offset of the start of each line
	size   int
	// final is the length of the line ending of the last line, if any.
	final int
}

func newLineIndex(src []byte) lineIndex {
	starts := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for i, c := range src {
		if c == '\n' && i+1 < len(src) {
			starts = append(starts, i+1)
		}
	}
	final := 0
	if bytes.HasSuffix(src, []byte{'\n'}) {
		final = 1
	}
	return lineIndex{starts: starts, size: len(src), final: final}
}

func (li lineIndex) count() int {
	if li.size == 0 {
		return 0
	}
	return len(li.starts)
}

func (li lineIndex) lineOf(offset int) int {
	return sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > offset })
}

// span returns the byte range of lines first..last (1-indexed, inclusive),
// without the newline that ends the last one.
func (li lineIndex) span(first, last int) (start, end int) {
	start = li.starts[first-1]
	end = li.size - li.final
	if last < len(li.starts) {
		end = li.starts[last] - 1
	}
	return start, end
}
