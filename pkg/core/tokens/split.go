package tokens

import (
	"unicode"
	"unicode/utf8"
)

// nextPiece returns the length of the first piece of s (non-empty) that
// cl100k_base's pre-split pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// matches, as a backtracking matcher tries the alternatives. It is that
// pattern written out by hand: the encoder's own regexp engine allocates a
// match per piece and was most of the indexer's time, while the pieces
// themselves repeat endlessly and are counted once each (pieceTable). s
// must be valid UTF-8 without DEL (Count ensures both). The tests compare
// its pieces with the pattern's, run by Go's regexp, on random text over
// the pattern's class edges, on the Go tree's files, and by fuzzing. (The
// encoder's own engine differs in one place: it splits a whitespace run
// holding two line breaks, "\n\t\n", at the first; the pattern, and
// OpenAI's tiktoken, keep it one piece.)
func nextPiece(s string) int {
	if c := s[0]; c < utf8.RuneSelf && asciiClass[c] == classLetter {
		return run(s, 1, classLetter, unicode.IsLetter) // most pieces: a word
	}
	r, size := decode(s, 0)
	// 's 't 're 've 'm 'll 'd, in any case.
	if r == '\'' && len(s) > 1 {
		if n := contraction(s[1:]); n > 0 {
			return 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(r) {
		return run(s, size, classLetter, unicode.IsLetter)
	}
	if r != '\r' && r != '\n' && !isNumber(r) && size < len(s) {
		if r2, _ := decode(s, size); isLetter(r2) {
			return run(s, size, classLetter, unicode.IsLetter)
		}
	}
	// \p{N}{1,3}
	if isNumber(r) {
		n := size
		for k := 1; k < 3 && n < len(s); k++ {
			r2, sz := decode(s, n)
			if !isNumber(r2) {
				break
			}
			n += sz
		}
		return n
	}
	// ' '?[^\s\p{L}\p{N}]+[\r\n]*
	start := 0
	if r == ' ' && size < len(s) {
		if r2, _ := decode(s, size); isSymbol(r2) {
			start = size
		}
	}
	if start > 0 || isSymbol(r) {
		n := run(s, start, classSymbol, isWideSymbol)
		for n < len(s) && (s[n] == '\r' || s[n] == '\n') {
			n++
		}
		return n
	}
	// What is left starts with whitespace: r is \s here, as every rune is
	// a letter, a number, a symbol or a space.
	end, lastBreak, lastStart := size, -1, 0
	if r == '\r' || r == '\n' {
		lastBreak = 0
	}
	for end < len(s) {
		c := s[end]
		if c < utf8.RuneSelf {
			if asciiClass[c] != classSpace {
				break
			}
			if c == '\r' || c == '\n' {
				lastBreak = end
			}
			lastStart = end
			end++
			continue
		}
		r2, sz := utf8.DecodeRuneInString(s[end:])
		if !unicode.IsSpace(r2) {
			break
		}
		lastStart = end
		end += sz
	}
	switch {
	case lastBreak >= 0: // \s*[\r\n]+: up to the run's last line break
		return lastBreak + 1
	case end == len(s): // \s+(?!\S) at the end of the text
		return end
	case lastStart > 0: // \s+(?!\S): all but the space before the next word
		return lastStart
	}
	return end // \s+
}

// run returns the end of the run of characters from s[n:] that are of
// class, for ASCII, or satisfy wide, beyond it.
func run(s string, n int, class uint8, wide func(rune) bool) int {
	for n < len(s) {
		if c := s[n]; c < utf8.RuneSelf {
			if asciiClass[c] != class {
				break
			}
			n++
			continue
		}
		r, sz := utf8.DecodeRuneInString(s[n:])
		if !wide(r) {
			break
		}
		n += sz
	}
	return n
}

// contraction returns the length of s, or of the contraction suffix that
// follows an apostrophe at its start (s, t, re, ve, m, ll, d in any case),
// or 0.
func contraction(s string) int {
	lower := func(i int) byte {
		if i < len(s) && 'A' <= s[i] && s[i] <= 'Z' {
			return s[i] + 'a' - 'A'
		}
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	switch lower(0) {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if lower(1) == 'e' {
			return 2
		}
	case 'l':
		if lower(1) == 'l' {
			return 2
		}
	}
	return 0
}

func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// Classes of ASCII characters under the pattern's \p{L}, \p{N} and \s.
const (
	classSymbol = iota
	classLetter
	classNumber
	classSpace
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			t[c] = classLetter
		case '0' <= c && c <= '9':
			t[c] = classNumber
		case c == ' ' || '\t' <= c && c <= '\r':
			t[c] = classSpace
		}
	}
	return t
}()

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == classLetter
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == classNumber
	}
	return unicode.IsNumber(r)
}

// isSpace is the pattern's \s, which the encoder's regexp engine takes
// to be unicode.IsSpace.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == classSpace
	}
	return unicode.IsSpace(r)
}

// isSymbol is the pattern's [^\s\p{L}\p{N}].
func isSymbol(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r] == classSymbol
	}
	return isWideSymbol(r)
}

func isWideSymbol(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}
