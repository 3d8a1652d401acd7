package outline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuedeck/cuedeck/pkg/core/markdown"
)

// markdownOutline lists the frontmatter's keys (short values shown) and
// every heading with the first sentence of the text it opens, before its
// first subheading.
func markdownOutline(o *out, src []byte) {
	doc := markdown.Parse(src)
	lines := splitLines(string(src))
	if len(doc.Frontmatter) > 0 {
		keys := make([]string, 0, len(doc.Frontmatter))
		for k := range doc.Frontmatter {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			switch v := doc.Frontmatter[k].(type) {
			case string, bool, float64, int, int64:
				if s := fmt.Sprint(v); len(s) <= 40 && !strings.Contains(s, "\n") {
					keys[i] = k + ": " + s
				}
			}
		}
		o.add(entry{sig: "frontmatter: " + names(keys), start: 1, end: doc.BodyStart - 1})
	}
	hs := doc.Headings
	// Text before the first heading says what the file is about.
	first := len(lines) + 1
	if len(hs) > 0 {
		first = hs[0].Line
	}
	if s := firstProse(lines, doc.BodyStart, first-1); s != "" {
		o.add(entry{sig: "(preamble)", summary: s, start: doc.BodyStart, end: lastText(lines, doc.BodyStart, first-1)})
	}
	for i, h := range hs {
		stop := h.EndLine
		if i+1 < len(hs) && hs[i+1].Line-1 < stop {
			stop = hs[i+1].Line - 1
		}
		o.add(entry{
			sig:     strings.Repeat("#", max(h.Level, 1)) + " " + h.Text,
			summary: firstProse(lines, h.Line+1, stop),
			start:   h.Line, end: lastText(lines, h.Line, h.EndLine),
		})
	}
}

// firstProse is the first sentence of the first paragraph of lines
// from..to (1-indexed, inclusive), skipping code fences, tables, HTML,
// setext underlines and images; a list's first item counts as prose.
func firstProse(lines []string, from, to int) string {
	var para []string
	fence := ""
	for n := max(from, 1); n <= min(to, len(lines)); n++ {
		t := strings.TrimSpace(lines[n-1])
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			if len(para) > 0 {
				break
			}
			fence = t[:3]
			continue
		}
		if t == "" {
			if len(para) > 0 {
				break
			}
			continue
		}
		if strings.HasPrefix(t, "|") || strings.HasPrefix(t, "<") || strings.HasPrefix(t, "![") ||
			strings.Trim(t, "=-") == "" || strings.HasPrefix(t, "#") {
			if len(para) > 0 {
				break
			}
			continue
		}
		for _, p := range []string{"- ", "* ", "+ ", "> "} {
			t = strings.TrimPrefix(t, p)
		}
		para = append(para, t)
		if len(para) > 12 {
			break
		}
	}
	return firstSentence(strings.Join(para, " "))
}

// lastText is the last line of from..to that is not blank, or from: a
// range without the blank lines before the next heading.
func lastText(lines []string, from, to int) int {
	to = min(to, len(lines))
	for to > from && strings.TrimSpace(lines[to-1]) == "" {
		to--
	}
	return max(to, from)
}
