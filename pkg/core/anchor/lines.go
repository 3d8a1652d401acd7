package anchor

import (
	"regexp"
	"strconv"
	"strings"
)

// lineRangeAnchor is "L10-L40", "L10-40", "10-40" or "L12", as GitHub
// writes them in links (a leading '#' allowed). A bare number is not one:
// "2024" is more likely a heading.
var lineRangeAnchor = regexp.MustCompile(`^#?(?:[Ll](\d{1,9})(?:-[Ll]?(\d{1,9}))?|(\d{1,9})-[Ll]?(\d{1,9}))$`)

// LineRange reads a line range anchor: "L10-L40", "L10-40", "10-40",
// "L12" (a range of one line), spaces ignored. ok is false when anchor is
// not one; first and last are as written, so the caller decides what an
// empty or out-of-file range means.
func LineRange(anchor string) (first, last int, ok bool) {
	m := lineRangeAnchor.FindStringSubmatch(strings.ReplaceAll(strings.TrimSpace(anchor), " ", ""))
	if m == nil {
		return 0, 0, false
	}
	first, _ = strconv.Atoi(m[1] + m[3])
	last = first
	if m[2]+m[4] != "" {
		last, _ = strconv.Atoi(m[2] + m[4])
	}
	return first, last, true
}

// Split splits content into its lines; a final newline does not start
// another line (as markdown.Document.Lines counts).
func Split(content string) []string {
	lines := strings.Split(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Cut returns lines first..last (1-indexed, inclusive, clamped to the
// file) without trailing blank lines or the last line's '\r', and the
// range returned; an empty range is "" from first to first-1.
func Cut(lines []string, first, last int) (text string, start, end int) {
	first, last = max(first, 1), min(last, len(lines))
	for last > first && strings.TrimSpace(lines[last-1]) == "" {
		last--
	}
	if last < first || strings.TrimSpace(lines[last-1]) == "" {
		return "", first, first - 1
	}
	return strings.TrimSuffix(strings.Join(lines[first-1:last], "\n"), "\r"), first, last
}
