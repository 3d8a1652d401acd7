package markdown

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
)

// Slug returns the anchor GitHub gives a heading: lower case, punctuation and
// symbols dropped (letters, marks, digits, '_' and '-' kept), each space
// turned into '-'. It does not make the slug unique; Parse does.
func Slug(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// slugger makes slugs unique the way GitHub numbers repeated headings.
type slugger struct {
	taken map[string]bool
	// next is the suffix to try first for a slug, so that a thousand
	// "## Example" headings cost linear, not quadratic, time.
	next map[string]int
}

func newSlugger(n int) slugger {
	return slugger{taken: make(map[string]bool, n), next: make(map[string]int)}
}

// unique returns s, or s-1, s-2, ... if s is already taken, and marks the
// result taken.
func (sl slugger) unique(s string) string {
	u := s
	n := sl.next[s]
	for sl.taken[u] {
		n++
		u = s + "-" + strconv.Itoa(n)
	}
	sl.next[s] = n
	sl.taken[u] = true
	return u
}

// FindHeading returns the index in doc.Headings of the heading an anchor
// names, or -1. A leading '#' is ignored. The first heading whose text
// equals the anchor ignoring case wins; failing that, the first whose slug
// is the anchor as written (an explicit id such as {#Setup} keeps its
// case), then the first whose slug equals the anchor's slug, so both
// "@api#Error Codes" and "@api#error-codes" find "## Error Codes".
func FindHeading(doc Document, anchor string) int {
	anchor = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(anchor), "#"))
	if anchor == "" {
		return -1
	}
	for i, h := range doc.Headings {
		if strings.EqualFold(h.Text, anchor) {
			return i
		}
	}
	for i, h := range doc.Headings {
		if h.Slug == anchor {
			return i
		}
	}
	slug := Slug(anchor)
	if slug == "" {
		return -1
	}
	for i, h := range doc.Headings {
		if h.Slug == slug {
			return i
		}
	}
	return -1
}

// Section returns the section of src under the heading that anchor names
// (see FindHeading): the lines from the heading to the end of its section,
// without trailing blank lines, and the 1-indexed first and last of those
// lines. doc must be Parse(src). ok is false when no heading matches.
func Section(src []byte, doc Document, anchor string) (text string, start, end int, ok bool) {
	i := FindHeading(doc, anchor)
	if i < 0 {
		return "", 0, 0, false
	}
	text, start, end = lineRange(src, doc.Headings[i].Line, doc.Headings[i].EndLine)
	return text, start, end, true
}

// lineRange returns lines first..last of src (1-indexed, inclusive, clamped to
// the file) without trailing blank lines, and the range actually returned.
// An empty range returns "" and first, first-1.
func lineRange(src []byte, first, last int) (text string, start, end int) {
	li := newLineIndex(src)
	first = max(first, 1)
	last = min(last, li.count())
	for last >= first {
		s, e := li.span(last, last)
		if len(bytes.TrimSpace(src[s:e])) > 0 {
			break
		}
		last--
	}
	if last < first {
		return "", first, first - 1
	}
	s, _ := li.span(first, first)
	_, e := li.span(last, last)
	return string(bytes.TrimSuffix(src[s:e], []byte{'\r'})), first, last
}
