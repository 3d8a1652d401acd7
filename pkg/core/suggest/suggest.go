// Package suggest picks the candidate a mistyped name most likely meant, for
// "did you mean" hints: read_doc uses it when a path or an anchor is not
// found, the CLI when a card id is unknown.
package suggest

import (
	"path"
	"strings"
	"unicode/utf8"
)

// maxRunes bounds the strings compared, so that a pathological name cannot
// make a lookup quadratic in megabytes.
const maxRunes = 256

// Suggest returns the candidate closest to name, or "" when none is
// reasonably close.
//
// Names are compared ignoring case, and as paths: a candidate whose base
// name (without extension) equals name's is preferred to any other, so
// "api" suggests "docs/api.md". Otherwise a candidate is close when its edit
// distance to name, comparing whole names or base names, is within limit:
// one edit for names of up to 3 characters, two up to 8, a third of the
// length beyond. The closest wins; ties go to the earlier candidate.
func Suggest(name string, candidates []string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return ""
	}
	stem := stemOf(name)
	best, bestDist, sameStem := "", -1, false
	for _, c := range candidates {
		lc := strings.ToLower(c)
		cstem := stemOf(lc)
		if cstem == stem && !sameStem {
			// Among same-stem candidates the nearest whole name still wins.
			best, bestDist, sameStem = c, distance(name, lc), true
			continue
		}
		if sameStem {
			if cstem == stem {
				if d := distance(name, lc); d < bestDist {
					best, bestDist = c, d
				}
			}
			continue
		}
		d := distance(name, lc)
		if db := distance(stem, cstem); db < d && db <= limit(stem) {
			d = db
		} else if d > limit(name) {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// limit is the largest edit distance at which a candidate still looks like
// a typo of s rather than another word: "cli" is not a typo of "api".
func limit(s string) int {
	n := min(utf8.RuneCountInString(s), maxRunes)
	if n <= 3 {
		return 1
	}
	return max(2, n/3)
}

// stemOf returns the last path element of s without its extension; an
// "extension" with a space in it is part of the name ("v1.2 notes").
func stemOf(s string) string {
	base := path.Base(strings.TrimRight(s, "/"))
	if ext := path.Ext(base); ext != "" && ext != base && !strings.ContainsAny(ext, " \t") {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// distance is the Levenshtein distance between a and b in runes, each cut
// to maxRunes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	ra, rb = ra[:min(len(ra), maxRunes)], rb[:min(len(rb), maxRunes)]
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	row := make([]int, len(rb)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			next := min(row[j]+1, row[j-1]+1, diag+cost)
			diag, row[j] = row[j], next
		}
	}
	return row[len(rb)]
}
