package search

import (
	"strings"
	"unicode/utf8"
)

// eachToken calls fn with Tokenize's tokens of s, in order, and with the
// stopwords Tokenize drops among them: the caller drops those, once per
// distinct word (analyzeFields keeps what it found in its words map), where
// a stopword lookup per token was a tenth of indexing a document. joined
// tells a compound's parts joined, which Tokenize keeps even when they
// spell a stopword. A token that is a lower-case run of s comes as tok,
// sharing s's memory; one eachToken had to lower or join comes as scratch,
// bytes in *buf that the next token overwrites, with tok empty: a caller
// looks a scratch token up with m[string(scratch)], which does not
// allocate, and copies it only to keep it. Lowered and joined identifiers
// were three quarters of the allocations of indexing code.
func eachToken(s string, buf *[]byte, fn tokenFunc) {
	var parts []string // reused by compounds that are not plain ASCII
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiWord[c] == 0 {
				i++
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(s[i:]); !isWordRune(r) {
			i += size
			continue
		}
		// A compound runs over word runes and joiners.
		j, ascii := i, true
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if asciiWord[c] == 0 {
					break
				}
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) {
				break
			}
			ascii = false
			j += size
		}
		if ascii {
			asciiCompound(s[i:j], buf, fn)
		} else {
			parts = splitCompound(s[i:j], parts[:0])
			emitParts(parts, fn)
		}
		i = j
	}
}

// emitParts is Tokenize's emission of a compound's parts, stopwords too
// (eachToken's caller drops them): each, then the parts joined when there
// are several.
func emitParts(parts []string, fn tokenFunc) {
	for _, p := range parts {
		fn(p, nil, false)
	}
	if len(parts) > 1 {
		fn(strings.Join(parts, ""), nil, true)
	}
}

// tokenFunc receives eachToken's tokens: tok, or, when tok is empty,
// scratch (see eachToken).
type tokenFunc func(tok string, scratch []byte, joined bool)

// asciiWord marks the ASCII bytes that make up compounds: letters, digits
// and the joiners '_' and '-'.
var asciiWord = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' {
			t[c] = 1
		}
	}
	return t
}()

func asciiUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func asciiLower(c byte) bool { return 'a' <= c && c <= 'z' }
func asciiDigit(c byte) bool { return '0' <= c && c <= '9' }

// asciiCompound is splitCompound and Tokenize's emission for a compound of
// ASCII letters, digits and joiners, with the same case boundaries.
func asciiCompound(c string, buf *[]byte, fn tokenFunc) {
	plain := true // no joiner or capital: parts are substrings, the whole is c
	var parts [16][2]int
	n := 0
	start := 0
	add := func(end int) {
		if end <= start {
			return
		}
		if n == len(parts) {
			// A compound of more than 16 parts: rare enough to take the
			// general path.
			n = -1
			return
		}
		if n >= 0 {
			parts[n] = [2]int{start, end}
			n++
		}
	}
	for k := 0; k < len(c); k++ {
		b := c[k]
		switch {
		case b == '_' || b == '-':
			plain = false
			add(k)
			start = k + 1
		case asciiUpper(b):
			plain = false
			if k > start && asciiBoundary(c, k) {
				add(k)
				start = k
			}
		}
	}
	add(len(c))
	if n < 0 {
		emitParts(splitCompound(c, nil), fn)
		return
	}
	if plain {
		if n == 1 {
			fn(c, nil, false)
		}
		return
	}
	// The parts, lowered, one after another in buf: each part is a stretch
	// of it and the whole is all of it.
	whole := (*buf)[:0]
	for _, p := range parts[:n] {
		for k := p[0]; k < p[1]; k++ {
			b := c[k]
			if asciiUpper(b) {
				b += 'a' - 'A'
			}
			whole = append(whole, b)
		}
	}
	*buf = whole
	at := 0
	for _, p := range parts[:n] {
		size := p[1] - p[0]
		if part := c[p[0]:p[1]]; !hasASCIIUpper(part) {
			fn(part, nil, false)
		} else {
			fn("", whole[at:at+size:at+size], false)
		}
		at += size
	}
	if n > 1 {
		fn("", whole, true)
	}
}

func hasASCIIUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if asciiUpper(s[i]) {
			return true
		}
	}
	return false
}

// asciiBoundary is caseBoundary for ASCII: a new part starts at c[k], a
// capital, after a lower-case letter or digit, or as the last capital of
// an acronym followed by at least two lower-case letters.
func asciiBoundary(c string, k int) bool {
	prev := c[k-1]
	if asciiLower(prev) || asciiDigit(prev) {
		return true
	}
	if !asciiUpper(prev) {
		return false
	}
	m := k + 1
	for m < len(c) && asciiLower(c[m]) {
		m++
	}
	return m-(k+1) >= 2
}
