package edge

import (
	"fmt"
	"strings"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/anchor"
	"github.com/cuedeck/cuedeck/pkg/core/markdown"
	"github.com/cuedeck/cuedeck/pkg/core/suggest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// openAnchor returns the part of content, the text of rec, that read_doc's
// anchor names, and its 1-indexed line range. An anchor is tried as a
// heading (text, then slug or explicit id: markdown.FindHeading), then as
// a code symbol (anchor.Find), then as a line range ("L10-L40", "L10-40",
// "10-40", "L12"), which any file has. A heading's section is trimmed as
// it always was; a symbol or a line range keeps its indentation. Failures
// are -32602: an unknown anchor lists the file's headings or symbols with
// a suggestion; an anchor naming several symbols lists them; a line range
// outside the file says how long the file is.
func openAnchor(rec *events.DocRecord, content, a string) (text string, start, end int, err *tools.Error) {
	if len(rec.Headings) > 0 {
		if text, start, end, ok := section(content, rec.Headings, a); ok {
			return strings.TrimSpace(text), start, end, nil
		}
	}
	var syms []anchor.Symbol
	if rec.Kind == events.DocCode {
		syms = anchor.Symbols(rec.Chunks, rec.Language)
	}
	found := anchor.Find(syms, strings.TrimPrefix(strings.TrimSpace(a), "#"))
	if len(found) == 1 {
		lines := anchor.Split(content)
		first, last := found[0].Lines(lines)
		text, start, end := anchor.Cut(lines, first, last)
		return text, start, end, nil
	}
	if first, last, ok := anchor.LineRange(a); ok {
		lines := anchor.Split(content)
		switch {
		case first < 1 || last < first:
			return "", 0, 0, tools.InvalidParams(tools.ReadDoc, fmt.Sprintf("line range %q is empty: give the first and last line, numbered from 1, e.g. L10-L40", a))
		case first > len(lines):
			return "", 0, 0, tools.InvalidParams(tools.ReadDoc, fmt.Sprintf("line range %q starts after the end of %s, which has %d lines", a, rec.Path, len(lines)))
		}
		last = min(last, len(lines))
		return strings.Join(lines[first-1:last], "\n"), first, last, nil
	}
	if len(found) > 1 {
		labels := make([]string, 0, len(found))
		for _, s := range found {
			labels = append(labels, s.Label)
		}
		err := tools.InvalidParams(tools.ReadDoc, fmt.Sprintf("anchor %q names %d symbols of %s: use one of data.symbols, or Type.Name", a, len(found), rec.Path))
		err.Data["path"] = rec.Path
		err.Data["symbols"] = labels[:min(len(labels), maxListedAnchors)]
		return "", 0, 0, err
	}
	return "", 0, 0, unknownAnchor(rec, a, syms)
}

// section returns the lines of content under the heading anchor names, with
// their 1-indexed range (markdown.Section's rules: heading text ignoring
// case, then slug). It uses the headings the indexer recorded, which are
// markdown.Parse's of the same content, so a read costs no re-parse. An
// anchor written with its attribute block ("Receivers {#receivers}", as
// the file has it, or as the chunks of a record indexed before the parser
// read such blocks name the section) is tried without it, then by its id.
func section(content string, hs []events.Heading, anchor string) (text string, start, end int, ok bool) {
	doc := markdown.Document{Headings: make([]markdown.Heading, len(hs))}
	for i, h := range hs {
		doc.Headings[i] = markdown.Heading{Level: h.Level, Text: h.Text, Slug: h.Slug, Line: h.Line, EndLine: h.EndLine, Parent: -1}
	}
	if text, start, end, ok = markdown.Section([]byte(content), doc, anchor); ok {
		return text, start, end, ok
	}
	if plain, id, attrs := markdown.HeadingAttributes(strings.TrimSpace(anchor)); attrs {
		if text, start, end, ok = markdown.Section([]byte(content), doc, plain); !ok && id != "" {
			text, start, end, ok = markdown.Section([]byte(content), doc, id)
		}
	}
	return text, start, end, ok
}

// maxListedAnchors bounds the headings or symbols an anchor error lists.
const maxListedAnchors = 20

// unknownAnchor is the -32602 of an anchor that is no heading, symbol or
// line range of rec: it lists the file's headings, else its symbols (both
// bounded, with data.total when more), and suggests the nearest.
func unknownAnchor(rec *events.DocRecord, a string, syms []anchor.Symbol) *tools.Error {
	var err *tools.Error
	var listed, candidates []string
	key := "headings"
	switch {
	case len(rec.Headings) > 0:
		for _, h := range rec.Headings {
			listed = append(listed, h.Text)
		}
		candidates = listed
		err = tools.InvalidParams(tools.ReadDoc, fmt.Sprintf("anchor %q is not a heading of %s: use one of data.headings, a line range such as L10-L40, or omit anchor to read the whole file", a, rec.Path))
	case len(syms) > 0:
		key = "symbols"
		for i := range syms {
			s := &syms[i]
			listed = append(listed, s.Label)
			candidates = append(candidates, s.Label)
			candidates = append(candidates, s.Names...)
			if s.Qualifier != "" {
				candidates = append(candidates, s.Qualified())
			}
		}
		err = tools.InvalidParams(tools.ReadDoc, fmt.Sprintf("anchor %q is not a symbol of %s: use one of data.symbols (or its name, e.g. Type.Method), a line range such as L10-L40, or omit anchor to read the whole file", a, rec.Path))
	default:
		err = tools.InvalidParams(tools.ReadDoc, fmt.Sprintf("anchor %q: %s has no headings or symbols to name; give a line range such as L1-L%d, or omit anchor to read the whole file", a, rec.Path, max(rec.Lines, 1)))
	}
	err.Data["path"] = rec.Path
	if listed != nil {
		err.Data[key] = listed[:min(len(listed), maxListedAnchors)]
		if len(listed) > maxListedAnchors {
			err.Data["total"] = len(listed)
		}
	}
	if s := suggest.Suggest(strings.TrimPrefix(a, "#"), candidates); s != "" {
		err.Data["suggestion"] = fmt.Sprintf("Did you mean '%s'?", s)
	}
	return err
}

// plainHeadings returns hs with the attribute blocks that records indexed
// before the parser knew them still hold ("Receivers  {#receivers}")
// read as the parser now reads them: the text without the block, the
// explicit id as slug. hs itself is returned when none has one.
func plainHeadings(hs []events.Heading) []events.Heading {
	var out []events.Heading
	for i, h := range hs {
		if !strings.HasSuffix(h.Text, "}") {
			continue
		}
		text, id, ok := markdown.HeadingAttributes(h.Text)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]events.Heading(nil), hs...)
		}
		out[i].Text = text
		if id != "" {
			out[i].Slug = id
		}
	}
	if out == nil {
		return hs
	}
	return out
}

// docAnchors is what read_context lists as a hit's anchors: a document's
// top headings (topAnchors), a code file's top symbols (anchor.Top).
func docAnchors(rec *events.DocRecord) []string {
	if len(rec.Headings) > 0 || rec.Kind != events.DocCode {
		return topAnchors(rec.Headings, 3)
	}
	return anchor.Top(anchor.Symbols(rec.Chunks, rec.Language), 3)
}
