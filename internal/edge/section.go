package edge

import (
	"github.com/cuedeck/cuedeck/pkg/core/markdown"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// section returns the lines of content under the heading anchor names, with
// their 1-indexed range (markdown.Section's rules: heading text ignoring
// case, then slug). It uses the headings the indexer recorded, which are
// markdown.Parse's of the same content, so a read costs no re-parse.
func section(content string, hs []events.Heading, anchor string) (text string, start, end int, ok bool) {
	doc := markdown.Document{Headings: make([]markdown.Heading, len(hs))}
	for i, h := range hs {
		doc.Headings[i] = markdown.Heading{Level: h.Level, Text: h.Text, Slug: h.Slug, Line: h.Line, EndLine: h.EndLine, Parent: -1}
	}
	return markdown.Section([]byte(content), doc, anchor)
}
