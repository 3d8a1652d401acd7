package guard

import "strings"

// RedactKeepingLines runs the default guard (New(Options{})) and keeps
// text's line count; see Guard.RedactKeepingLines.
func RedactKeepingLines(text string) (string, []Finding) {
	return defaultGuard.RedactKeepingLines(text)
}

// RedactKeepingLines is Redact, except that a secret spanning several lines
// (a PEM private key) leaves its newlines after its marker. Line numbers
// that refer to text (a section's line range, a diff) then still point at
// the same lines of the result.
func (g *Guard) RedactKeepingLines(text string) (string, []Finding) {
	out, found := g.Redact(text)
	multiline := false
	for _, f := range found {
		if strings.IndexByte(text[f.Start:f.End], '\n') >= 0 {
			multiline = true
			break
		}
	}
	if !multiline {
		return out, found
	}
	rule := make(map[string]int, len(g.ids))
	for r, id := range g.ids {
		rule[id] = r
	}
	var b strings.Builder
	b.Grow(len(out) + len(text)/64)
	at := 0
	for _, f := range found {
		b.WriteString(text[at:f.Start])
		b.WriteString(g.markers[rule[f.Rule]])
		b.WriteString(strings.Repeat("\n", strings.Count(text[f.Start:f.End], "\n")))
		at = f.End
	}
	b.WriteString(text[at:])
	return b.String(), found
}
