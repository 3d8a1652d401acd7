package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// Hash is the dedup key of a memory's content (seed 003 §9): the hex
// SHA-256 of Normalize(content) in UTF-8. Two memories are duplicates if
// and only if their hashes are equal; no other field takes part.
func Hash(content string) string {
	sum := sha256.Sum256([]byte(Normalize(content)))
	return hex.EncodeToString(sum[:])
}

// maxPasses bounds the repetition in Normalize. Each pass after the first
// only finishes work the previous one uncovered (a space left doubled by a
// removed character, punctuation bared by a trim), so two or three passes
// reach the fixed point; the bound guards against a Unicode surprise.
const maxPasses = 8

// Normalize applies seed 003 §9's pipeline, in the seed's order, until the
// text no longer changes:
//
//  1. NFKC;
//  2. lowercase, with Unicode's full default mapping as JavaScript's
//     toLowerCase ("İ" becomes "i̇", a final "Σ" becomes "ς");
//  3. trim JavaScript whitespace (the \s class: it includes U+FEFF and
//     excludes U+0085);
//  4. collapse each run of \s to one space;
//  5. remove the control and zero-width characters U+0000–U+001F,
//     U+007F–U+009F, U+200B–U+200F, U+202A–U+202E, U+2060–U+206F, U+FEFF;
//  6. strip a trailing run of [.!?,;:], then trim.
//
// Because step 4 comes before step 5, the whitespace controls (tab,
// newline, …) and U+FEFF become spaces rather than vanishing: "a\tb" and
// "a\ufeffb" normalise to "a b", while "a\u200bb" normalises to "ab".
//
// One pass of the seed is not idempotent: removing a character can leave
// two spaces side by side ("a \u200b b" gives "a  b") or bare another
// punctuation run ("done. ." gives "done."), and a second pass would change
// them again. Repeating the pass makes Normalize(Normalize(x)) ==
// Normalize(x), so a stored normalised text hashes as its original; for
// text one pass already leaves stable, which is nearly all text, the result
// is the seed's.
//
// Internal punctuation and stopwords are kept: "Hello, world!" normalises
// to "hello, world", which differs from "hello world" although the seed's
// test claims otherwise. Invalid UTF-8 is first replaced by U+FFFD, as
// JavaScript's TextEncoder does with lone surrogates, so the result is
// always valid UTF-8.
func Normalize(content string) string {
	s := strings.ToValidUTF8(content, "\uFFFD")
	for range maxPasses {
		next := normalizeOnce(s)
		if next == s {
			break
		}
		s = next
	}
	return s
}

// normalizeOnce is one literal pass of the seed's pipeline.
func normalizeOnce(s string) string {
	s = norm.NFKC.String(s)
	s = lower(s)
	s = trimJSSpace(s)
	s = collapseJSSpace(s)
	s = strings.Map(func(r rune) rune {
		if removed(r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimRight(s, ".!?,;:")
	return trimJSSpace(s)
}

// lower lowercases ASCII directly and anything else with the Unicode
// default (language-neutral) full case mapping. A Caser keeps state, so
// each call makes its own.
func lower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	return cases.Lower(language.Und).String(s)
}

// jsSpace reports whether r is in JavaScript's \s class, which is also
// the set String.prototype.trim removes.
func jsSpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r == ' ', r == 0xA0, r == 0x1680,
		r >= 0x2000 && r <= 0x200A, r == 0x2028, r == 0x2029,
		r == 0x202F, r == 0x205F, r == 0x3000, r == 0xFEFF:
		return true
	}
	return false
}

func trimJSSpace(s string) string { return strings.TrimFunc(s, jsSpace) }

func collapseJSSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inSpace := false
	for _, r := range s {
		if jsSpace(r) {
			if !inSpace {
				b.WriteByte(' ')
			}
			inSpace = true
			continue
		}
		inSpace = false
		b.WriteRune(r)
	}
	return b.String()
}

// removed reports whether step 5 deletes r.
func removed(r rune) bool {
	switch {
	case r <= 0x1F, r >= 0x7F && r <= 0x9F, r >= 0x200B && r <= 0x200F,
		r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F, r == 0xFEFF:
		return true
	}
	return false
}
