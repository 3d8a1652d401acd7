// Package fuzzy ranks strings against a typed pattern the way terminal
// fuzzy finders do: the pattern's characters must appear in order, and
// matches that are consecutive, at word starts or early score higher.
package fuzzy

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Scoring weights. A consecutive run or a word start is worth more than
// the distance an early first match saves, so "auth" ranks docs/auth.md
// above a path that merely contains a-u-t-h spread out.
const (
	matchScore       = 16
	consecutiveBonus = 24
	wordStartBonus   = 20
	gapPenalty       = 1
	firstMatchCap    = 20
)

// Score reports whether every rune of pattern occurs in text in order
// (case-insensitively; spaces in the pattern are ignored) and how well.
// An empty pattern matches everything with score 0.
func Score(pattern, text string) (score int, ok bool) {
	p := []rune(strings.ToLower(strings.ReplaceAll(pattern, " ", "")))
	if len(p) == 0 {
		return 0, true
	}
	t := []rune(text)
	lower := []rune(strings.ToLower(text))
	if len(lower) != len(t) {
		// A rune whose lower case has another length: compare as is.
		lower = t
	}
	pi, last, first := 0, -1, -1
	for i := 0; i < len(lower) && pi < len(p); i++ {
		if lower[i] != p[pi] {
			continue
		}
		score += matchScore
		switch {
		case last == i-1 && last >= 0:
			score += consecutiveBonus
		case last >= 0:
			score -= gapPenalty * min(i-last-1, 10)
		}
		if i == 0 || wordStart(t[i-1], t[i]) {
			score += wordStartBonus
		}
		if first < 0 {
			first = i
		}
		last = i
		pi++
	}
	if pi < len(p) {
		return 0, false
	}
	score += max(0, firstMatchCap-first)
	// Shorter texts are tighter matches.
	score -= utf8.RuneCountInString(text) / 16
	return score, true
}

func wordStart(prev, cur rune) bool {
	switch {
	case prev == '/' || prev == '_' || prev == '-' || prev == '.' || prev == ' ' || prev == '#' || prev == ':':
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(cur):
		return true
	}
	return false
}

// Match is an item that matched and its score.
type Match struct {
	Index int
	Score int
}

// Rank returns the items matching pattern, best first (ties keep the
// items' order), at most k of them (k <= 0: all).
func Rank(pattern string, items []string, k int) []Match {
	var out []Match
	for i, it := range items {
		if s, ok := Score(pattern, it); ok {
			out = append(out, Match{i, s})
		}
	}
	slices.SortStableFunc(out, func(a, b Match) int { return cmp.Compare(b.Score, a.Score) })
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	return out
}
