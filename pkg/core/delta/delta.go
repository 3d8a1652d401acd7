// Package delta computes line-based deltas between two versions of a text
// and applies them (seed 000 §5, strategy 2: an agent that read a file at
// one hash receives only what changed since). A Delta is the list of hunks
// that turn the old text into the new one: runs of unchanged old lines and
// replaced ranges of old lines with their new lines. The edge's read_doc
// (since_hash) and the scenes use it; it is pure and has no dependencies
// beyond the standard library.
//
// Lines are the text split at "\n": a "\r" before it stays part of the line
// and a text that ends in "\n" has a last, empty line, so joining the lines
// with "\n" gives back the text byte for byte, whatever its line endings,
// trailing newline or encoding.
package delta

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Hunk is one step of a Delta. Either Unchanged > 0: the next Unchanged
// lines of the old text are kept; or the old lines Start..End (1-based,
// inclusive) are replaced by Lines. End is Start-1 when Lines are inserted
// before old line Start without replacing any; Lines is empty when the old
// lines are deleted.
type Hunk struct {
	Unchanged int      `json:"unchanged,omitempty"`
	Start     int      `json:"start,omitempty"`
	End       int      `json:"end,omitempty"`
	Lines     []string `json:"lines,omitempty"`
}

// MarshalJSON writes an unchanged run as {"unchanged": n} and a
// replacement with all three fields, so that an insertion's "end" (one
// before "start") and a deletion's empty "lines" are explicit.
func (h Hunk) MarshalJSON() ([]byte, error) {
	if h.Unchanged > 0 {
		return json.Marshal(struct {
			Unchanged int `json:"unchanged"`
		}{h.Unchanged})
	}
	lines := h.Lines
	if lines == nil {
		lines = []string{}
	}
	return json.Marshal(struct {
		Start int      `json:"start"`
		End   int      `json:"end"`
		Lines []string `json:"lines"`
	}{h.Start, h.End, lines})
}

// Delta turns one text into another: its hunks cover every old line in
// order, each exactly once.
type Delta struct {
	Hunks []Hunk `json:"hunks"`
}

// Lines splits s at "\n"; strings.Join(Lines(s), "\n") == s.
func Lines(s string) []string { return strings.Split(s, "\n") }

// Diff returns the delta from old to new. Equal texts give a delta of one
// unchanged run.
func Diff(old, new string) Delta {
	a, b := Lines(old), Lines(new)
	var d Delta
	line := 1 // next old line, 1-based
	keep := func(n int) {
		if n > 0 {
			d.Hunks = append(d.Hunks, Hunk{Unchanged: n})
			line += n
		}
	}
	replace := func(oldN int, lines []string) {
		if oldN == 0 && len(lines) == 0 {
			return
		}
		if len(lines) == 0 {
			lines = nil
		}
		d.Hunks = append(d.Hunks, Hunk{Start: line, End: line + oldN - 1, Lines: lines})
		line += oldN
	}
	i, j := 0, 0
	for _, m := range matches(a, b) {
		replace(m.a-i, b[j:m.b])
		keep(m.n)
		i, j = m.a+m.n, m.b+m.n
	}
	replace(len(a)-i, b[j:])
	return d
}

// ErrMismatch is returned by Apply when a delta does not fit the text it is
// applied to.
type ErrMismatch struct {
	Hunk   int // index of the hunk that does not fit
	Detail string
}

func (e *ErrMismatch) Error() string {
	return fmt.Sprintf("delta: hunk %d does not fit the text: %s", e.Hunk, e.Detail)
}

// Apply returns the text d makes of old. A delta made by Diff(old, x)
// gives x exactly. A delta that does not cover old's lines in order is an
// *ErrMismatch.
func Apply(old string, d Delta) (string, error) {
	a := Lines(old)
	out := make([]string, 0, len(a))
	line := 1
	for i, h := range d.Hunks {
		if h.Unchanged > 0 {
			if h.Start != 0 || h.End != 0 || len(h.Lines) != 0 {
				return "", &ErrMismatch{Hunk: i, Detail: "an unchanged run also replaces lines"}
			}
			if line-1+h.Unchanged > len(a) {
				return "", &ErrMismatch{Hunk: i, Detail: fmt.Sprintf("keeps %d lines from line %d of %d", h.Unchanged, line, len(a))}
			}
			out = append(out, a[line-1:line-1+h.Unchanged]...)
			line += h.Unchanged
			continue
		}
		if h.Start != line {
			return "", &ErrMismatch{Hunk: i, Detail: fmt.Sprintf("starts at line %d, expected %d", h.Start, line)}
		}
		if h.End < h.Start-1 || h.End > len(a) {
			return "", &ErrMismatch{Hunk: i, Detail: fmt.Sprintf("replaces lines %d-%d of %d", h.Start, h.End, len(a))}
		}
		out = append(out, h.Lines...)
		line = h.End + 1
	}
	if line-1 != len(a) {
		return "", &ErrMismatch{Hunk: len(d.Hunks), Detail: fmt.Sprintf("covers %d of %d lines", line-1, len(a))}
	}
	return strings.Join(out, "\n"), nil
}

// Changed reports whether d changes anything.
func (d Delta) Changed() bool {
	for _, h := range d.Hunks {
		if h.Unchanged == 0 {
			return true
		}
	}
	return false
}

// Text renders d compactly, as seed 000 shows it: "L42: line" for one line
// replaced by one, "L10-15:" followed by the new lines indented by two
// spaces, "L7-9: (deleted)", "after L7:" or "at start:" with the inserted
// lines, and "[200 lines unchanged]" between. It is for reading; Apply
// needs the hunks.
func (d Delta) Text() string {
	var sb strings.Builder
	for _, h := range d.Hunks {
		if h.Unchanged > 0 {
			if h.Unchanged == 1 {
				sb.WriteString("[1 line unchanged]\n")
			} else {
				fmt.Fprintf(&sb, "[%d lines unchanged]\n", h.Unchanged)
			}
			continue
		}
		switch {
		case h.End < h.Start && h.Start == 1:
			sb.WriteString("at start:\n")
		case h.End < h.Start:
			fmt.Fprintf(&sb, "after L%d:\n", h.End)
		case len(h.Lines) == 0 && h.End == h.Start:
			fmt.Fprintf(&sb, "L%d: (deleted)\n", h.Start)
			continue
		case len(h.Lines) == 0:
			fmt.Fprintf(&sb, "L%d-%d: (deleted)\n", h.Start, h.End)
			continue
		case h.End == h.Start && len(h.Lines) == 1:
			fmt.Fprintf(&sb, "L%d: %s\n", h.Start, h.Lines[0])
			continue
		case h.End == h.Start:
			fmt.Fprintf(&sb, "L%d:\n", h.Start)
		default:
			fmt.Fprintf(&sb, "L%d-%d:\n", h.Start, h.End)
		}
		for _, l := range h.Lines {
			sb.WriteString("  ")
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}
