package edge

import (
	"strings"
	"unicode"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// section returns the lines of content under the heading anchor names, with
// their 1-indexed range, using the headings the indexer recorded.
//
// TODO: replace with markdown.Section when the parse branch provides it;
// this mirrors its rules (heading text ignoring case, then slug).
func section(content string, hs []events.Heading, anchor string) (text string, start, end int, ok bool) {
	anchor = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(anchor), "#"))
	if anchor == "" {
		return "", 0, 0, false
	}
	i := -1
	for j, h := range hs {
		if strings.EqualFold(h.Text, anchor) {
			i = j
			break
		}
	}
	if i < 0 {
		slug := slugOf(anchor)
		for j, h := range hs {
			if slug != "" && h.Slug == slug {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return "", 0, 0, false
	}
	lines := strings.Split(content, "\n")
	first, last := max(hs[i].Line, 1), min(hs[i].EndLine, len(lines))
	for last >= first && strings.TrimSpace(lines[last-1]) == "" {
		last--
	}
	if last < first {
		return "", first, first - 1, true
	}
	return strings.Join(lines[first-1:last], "\n"), first, last, true
}

func slugOf(text string) string {
	var b strings.Builder
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

// countTokens estimates tokens as a quarter of the bytes.
//
// TODO: use pkg/core/tokens.Count when the parse branch provides it.
func countTokens(s string) int { return (len(s) + 3) / 4 }
