package finder

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Key codes the finder reacts to, as read from a terminal in raw mode.
const (
	keyEnter     = '\r'
	keyNewline   = '\n'
	keyCtrlC     = 0x03
	keyCtrlN     = 0x0e
	keyCtrlP     = 0x10
	keyEsc       = 0x1b
	keyBackspace = 0x7f
	keyCtrlH     = 0x08
)

// Interactive runs the finder on a terminal already in raw mode: typing
// filters, arrows (or Ctrl-N/Ctrl-P) move, Enter chooses, Esc or Ctrl-C
// cancels (ok false). rows is how many matches are shown.
func Interactive(in io.Reader, out io.Writer, entries []Entry, query string, rows int) (chosen Entry, ok bool, err error) {
	r := bufio.NewReader(in)
	sel := 0
	q := []byte(query) // bytes: a multi-byte rune arrives one byte at a time
	for {
		query = string(q)
		matches := Filter(entries, query, rows)
		sel = min(sel, max(len(matches)-1, 0))
		draw(out, query, matches, sel, len(entries))
		b, err := r.ReadByte()
		if err != nil {
			erase(out)
			return Entry{}, false, err
		}
		switch b {
		case keyEnter, keyNewline:
			erase(out)
			if len(matches) == 0 {
				return Entry{}, false, nil
			}
			return matches[sel], true, nil
		case keyCtrlC:
			erase(out)
			return Entry{}, false, nil
		case keyEsc:
			// An arrow key is ESC [ A/B; a lone ESC cancels.
			if r.Buffered() >= 2 {
				seq := make([]byte, 2)
				io.ReadFull(r, seq)
				switch seq[1] {
				case 'A':
					sel = max(sel-1, 0)
				case 'B':
					sel++
				}
				continue
			}
			erase(out)
			return Entry{}, false, nil
		case keyCtrlP:
			sel = max(sel-1, 0)
		case keyCtrlN:
			sel++
		case keyBackspace, keyCtrlH:
			if len(q) > 0 {
				_, size := utf8.DecodeLastRune(q)
				q = q[:len(q)-size]
			}
			sel = 0
		default:
			if b >= 0x20 {
				q = append(q, b)
				sel = 0
			}
		}
	}
}

// draw repaints the finder below the cursor's line.
func draw(out io.Writer, query string, matches []Entry, sel, total int) {
	var b strings.Builder
	b.WriteString("\r\x1b[J") // to column 0, clear below
	fmt.Fprintf(&b, "> %s\r\n", query)
	for i, m := range matches {
		marker := "  "
		if i == sel {
			marker = "\x1b[7m>"
		}
		fmt.Fprintf(&b, "%s %-8s %s\x1b[0m\r\n", marker, m.Kind, m.Label)
	}
	fmt.Fprintf(&b, "  %d/%d  ↑↓ move · Enter open · Esc quit", len(matches), total)
	// Back to the prompt line, after the query.
	fmt.Fprintf(&b, "\x1b[%dA\r\x1b[%dC", len(matches)+1, 2+utf8.RuneCountInString(query))
	io.WriteString(out, b.String())
}

func erase(out io.Writer) { io.WriteString(out, "\r\x1b[J") }
