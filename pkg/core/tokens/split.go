package tokens

import (
	"unicode"
	"unicode/utf8"
)

// splitPieces calls yield with each piece cl100k_base's pre-split pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// matches in s, in order, as a backtracking matcher tries the
// alternatives at each position. It is that pattern written out by hand:
// the encoder's own regexp engine allocates a match per piece and was most
// of the indexer's time, while the pieces themselves repeat endlessly and
// are counted once each (see pieceCount). s must be valid UTF-8 without
// DEL (Count ensures both). TestSplitMatchesRegexp and FuzzSplit compare
// it with the encoder's regexp.
func splitPieces(s string, yield func(piece string)) {
	for i := 0; i < len(s); {
		n := nextPiece(s[i:])
		yield(s[i : i+n])
		i += n
	}
}

// nextPiece returns the length of the piece at the start of s (non-empty).
func nextPiece(s string) int {
	r, size := decode(s, 0)
	// 's 't 're 've 'm 'll 'd, in any case.
	if r == '\'' && len(s) > 1 {
		if n := contraction(s[1:]); n > 0 {
			return 1 + n
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(r) {
		return size + letters(s[size:])
	}
	if r != '\r' && r != '\n' && !isNumber(r) && size < len(s) {
		if r2, _ := decode(s, size); isLetter(r2) {
			return size + letters(s[size:])
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
		n := start
		for n < len(s) {
			r2, sz := decode(s, n)
			if !isSymbol(r2) {
				break
			}
			n += sz
		}
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
		r2, sz := decode(s, end)
		if !isSpace(r2) {
			break
		}
		if r2 == '\r' || r2 == '\n' {
			lastBreak = end
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

// letters returns the length of the run of letters at the start of s.
func letters(s string) int {
	n := 0
	for n < len(s) {
		r, sz := decode(s, n)
		if !isLetter(r) {
			break
		}
		n += sz
	}
	return n
}

func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsNumber(r)
}

// isSpace is the pattern's \s, which the encoder's regexp engine takes
// to be unicode.IsSpace.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || '\t' <= r && r <= '\r'
	}
	return unicode.IsSpace(r)
}

// isSymbol is the pattern's [^\s\p{L}\p{N}].
func isSymbol(r rune) bool { return !isSpace(r) && !isLetter(r) && !isNumber(r) }
