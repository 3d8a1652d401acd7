package search

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// stopwords are dropped from documents and queries alike. The list is kept
// small: code and file names use words like "go", "up" and "do" as content.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true,
	"be": true, "but": true, "by": true, "for": true, "from": true, "if": true,
	"in": true, "into": true, "is": true, "it": true, "its": true, "of": true,
	"on": true, "or": true, "s": true, "such": true, "t": true, "that": true,
	"the": true, "their": true, "then": true, "there": true, "these": true,
	"they": true, "this": true, "to": true, "was": true, "were": true,
	"will": true, "with": true,
}

// Tokenize splits s into lowercase search tokens, in order of appearance and
// with repeats kept so callers can count term frequencies.
//
// Words are runs of Unicode letters, digits and marks; anything else (spaces,
// punctuation, path separators, invalid UTF-8) separates them. A word joined
// by '_' or '-', or written in camelCase or PascalCase, is split into its
// parts and also kept whole without the joiners, so "readContext" and
// "read_context" both yield "read", "context" and "readcontext", and an exact
// identifier still matches. An acronym ends before its last capital when a
// word follows it: "HTTPServer" yields "http", "server" and "httpserver".
// Stopwords are dropped. Tokens are not stemmed.
func Tokenize(s string) []string {
	var out []string
	var parts []string
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) && !isJoiner(r) {
			i += size
			continue
		}
		// A compound runs over word runes and joiners; parts split it further.
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) && !isJoiner(r) {
				break
			}
			j += size
		}
		parts = splitCompound(s[i:j], parts[:0])
		for _, p := range parts {
			if !stopwords[p] {
				out = append(out, p)
			}
		}
		if len(parts) > 1 {
			out = append(out, strings.Join(parts, ""))
		}
		i = j
	}
	return out
}

// isWordRune reports whether r belongs inside a word. utf8.RuneError, which
// stands for invalid input, is not a letter and so separates words.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func isJoiner(r rune) bool { return r == '_' || r == '-' }

// splitCompound appends to dst the lowercase parts of a compound made of word
// runes and joiners, splitting at joiners and at case changes.
func splitCompound(c string, dst []string) []string {
	rs := []rune(c)
	start := 0
	flush := func(end int) {
		if end > start {
			dst = append(dst, strings.ToLower(string(rs[start:end])))
		}
	}
	for k, r := range rs {
		switch {
		case isJoiner(r):
			flush(k)
			start = k + 1
		case k > start && caseBoundary(rs, k):
			flush(k)
			start = k
		}
	}
	flush(len(rs))
	return dst
}

// caseBoundary reports whether a new part starts at rs[k]: an upper-case
// letter after a lower-case letter or digit ("readContext", "base64Encode"),
// or the last capital of an acronym followed by a lower-case word
// ("HTTPServer"). A lone trailing lower-case letter does not count as a word,
// so "IDs" and "URLs" stay whole.
func caseBoundary(rs []rune, k int) bool {
	r, prev := rs[k], rs[k-1]
	if !isUpper(r) {
		return false
	}
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	if !isUpper(prev) {
		return false
	}
	n := 0
	for m := k + 1; m < len(rs) && unicode.IsLower(rs[m]); m++ {
		n++
	}
	return n >= 2
}

func isUpper(r rune) bool { return unicode.IsUpper(r) || unicode.IsTitle(r) }

// analyze turns text into index terms: tokens, with plain ASCII words reduced
// to their English stem so "embedded", "embedding" and "embeds" meet.
func analyze(s string) []string {
	toks := Tokenize(s)
	for k, t := range toks {
		toks[k] = stem(t)
	}
	return toks
}

// stems remembers stems across documents, direct-mapped by the word's
// hash: a repository's vocabulary repeats, and the Snowball stemmer was
// most of the cost of indexing. A word that collides replaces the one
// before it, so junk (hashes, generated identifiers) cannot grow it;
// entries are immutable and swapped whole, so lookups take no lock.
var stems [1 << 16]atomic.Pointer[stemEntry]

type stemEntry struct{ word, stem string }

var stemSeed = maphash.MakeSeed()

func stem(t string) string {
	for k := 0; k < len(t); k++ {
		if c := t[k]; c < 'a' || c > 'z' {
			return t
		}
	}
	slot := &stems[maphash.String(stemSeed, t)%uint64(len(stems))]
	if e := slot.Load(); e != nil && e.word == t {
		return e.stem
	}
	s := english.Stem(t, false)
	slot.Store(&stemEntry{word: strings.Clone(t), stem: s})
	return s
}
