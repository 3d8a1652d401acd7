package markdown

import (
	"bytes"
	"strings"
)

// HeadingAttributes splits the attribute block that Hugo, kramdown and
// pandoc allow at the end of a heading ("Receivers {#receivers}",
// "Setup {#setup .wide}", "Notes {: #notes}") from the heading's text:
// text is what comes before the block, trailing spaces removed; id is the
// block's explicit id, "" when it sets only classes or key=value pairs.
// ok is false, and text is s unchanged, when s does not end with a
// well-formed block: "{a, b}" and "{}" are text.
//
// It is linear in len(s): only the last '{' is tried. (goldmark's own
// parser.WithHeadingAttribute retries every '{' of the line and took 50 s
// to parse 800 KB of headings made of "{a=".)
func HeadingAttributes(s string) (text, id string, ok bool) {
	start, id, ok := attributeBlock(s)
	if !ok {
		return s, "", false
	}
	return strings.TrimRight(s[:start], " \t"), id, true
}

// attributeBlock finds the attribute block at the end of s (trailing
// spaces and '\r' allowed) and returns the offset of its '{' and its id.
func attributeBlock(s string) (start int, id string, ok bool) {
	t := strings.TrimRight(s, " \t\r")
	if !strings.HasSuffix(t, "}") {
		return 0, "", false
	}
	open := strings.LastIndexByte(t, '{')
	if open < 0 || open > 0 && t[open-1] == '\\' {
		return 0, "", false
	}
	inner := t[open+1 : len(t)-1]
	inner = strings.TrimPrefix(inner, ":") // kramdown's inline attribute list
	id, ok = parseAttributeList(inner)
	return open, id, ok
}

// parseAttributeList reads "#id .class key=value key2=\"v w\"" and returns
// the first id. An empty list, or any token that is none of those, is not
// an attribute list.
func parseAttributeList(s string) (id string, ok bool) {
	tokens := 0
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return id, tokens > 0
		}
		var n int
		switch s[0] {
		case '#', '.':
			n = 1 + strings.IndexFunc(s[1:], func(r rune) bool { return strings.ContainsRune(" \t#\"'{}", r) })
			if n == 0 { // to the end
				n = len(s)
			}
			if n == 1 {
				return "", false // a bare '#' or '.'
			}
			if s[0] == '#' && id == "" {
				id = s[1:n]
			}
		default:
			var valid bool
			if n, valid = keyValueLen(s); !valid {
				return "", false
			}
		}
		s = s[n:]
		tokens++
		if s != "" && s[0] != ' ' && s[0] != '\t' {
			return "", false // tokens are separated by spaces
		}
	}
}

// keyValueLen is the length of a key=value token at the start of s: the
// key a name, the value quoted or a run without spaces.
func keyValueLen(s string) (int, bool) {
	i := 0
	for i < len(s) && (isNameByte(s[i]) || i > 0 && (s[i] >= '0' && s[i] <= '9' || s[i] == '-' || s[i] == '.')) {
		i++
	}
	if i == 0 || i == len(s) || s[i] != '=' {
		return 0, false
	}
	i++
	if i == len(s) {
		return 0, false
	}
	if q := s[i]; q == '"' || q == '\'' {
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			return 0, false
		}
		return i + 1 + end + 1, true
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" \t\"'{}", rune(s[j])) {
		j++
	}
	return j, j > i
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
}

// blankHeadingAttributes blanks, with spaces, the attribute block at the
// end of each line that can hold a heading's text (an ATX heading line, or
// the line above a setext underline), so that goldmark parses the heading
// without it, and returns the explicit ids by line (1-indexed). Lines and
// byte offsets are kept. A line blanked that is not a heading after all
// (one in a code fence) costs nothing: the parse reads no text from it,
// and sections are cut from the original source. body is copied before
// its first change unless owned is true.
func blankHeadingAttributes(body []byte, owned bool) ([]byte, map[int]string) {
	var ids map[int]string
	blank := func(line []byte, off, lineNo int) {
		if bytes.IndexByte(line, '{') < 0 {
			return
		}
		start, id, ok := attributeBlock(string(line))
		if !ok {
			return
		}
		if !owned {
			body, owned = bytes.Clone(body), true
		}
		end := len(bytes.TrimRight(line, " \t\r"))
		for i := off + start; i < off+end; i++ {
			body[i] = ' '
		}
		if id != "" {
			if ids == nil {
				ids = make(map[int]string)
			}
			ids[lineNo] = id
		}
	}
	prevOff, prevLen := -1, 0
	for off, lineNo := 0, 1; off < len(body); lineNo++ {
		line, next := nextLine(body, off)
		switch {
		case isATXHeading(line):
			blank(line, off, lineNo)
			prevOff = -1
		case prevOff >= 0 && isSetextUnderline(line):
			blank(body[prevOff:prevOff+prevLen], prevOff, lineNo-1)
			prevOff = -1
		case len(bytes.TrimSpace(line)) == 0:
			prevOff = -1
		default:
			prevOff, prevLen = off, len(line)
		}
		off = next
	}
	return body, ids
}

// isATXHeading reports whether line opens with 1-6 '#' after at most three
// spaces, followed by a space or the end of the line.
func isATXHeading(line []byte) bool {
	t := bytes.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(t) || t[n] == ' ' || t[n] == '\t' || t[n] == '\r')
}

// isSetextUnderline reports whether line is a run of '=' or of '-' after at
// most three spaces, with only spaces after it.
func isSetextUnderline(line []byte) bool {
	t := bytes.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	t = bytes.TrimRight(t, " \t\r")
	return len(t) > 0 && (len(bytes.Trim(t, "=")) == 0 || len(bytes.Trim(t, "-")) == 0)
}
