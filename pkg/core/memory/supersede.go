package memory

import (
	"strings"
	"unicode"
)

// Supersession without a hash: a later decision that reverses or restates
// an earlier one about the same thing makes the earlier one history, as
// an explicit supersedes link does. The rule is strict on purpose: a
// memory wrongly hidden is worse than a stale one shown beside its
// correction, so all of these must hold —
//
//   - both are decisions, or both experiences (what an agent chose);
//   - newer was said after older: created later, or in the same session
//     at once (one transcript batch) but later in the transcript;
//   - they touch at least one same file or carry one same tag (tags as
//     save_memory's callers give them, compared without case; a memory
//     naming neither is superseded only by hash or an explicit link);
//   - newer reverses something ("instead", "no longer", "rather than",
//     "switch back", "revert", ...) and holds most of older's subject
//     words (ReversalOverlap of them); or the two say nearly the same
//     thing (RestateSimilarity of their words in common).
const (
	// ReversalOverlap is the share of the older memory's subject words a
	// reversing memory must hold.
	ReversalOverlap = 0.5
	// RestateSimilarity is the Jaccard similarity of subject words above
	// which a later memory restates an earlier one.
	RestateSimilarity = 0.85
)

// reversalMarkers say that a sentence replaces an earlier choice.
var reversalMarkers = []string{
	"instead", "no longer", "rather than", "switch back", "switched back", "switching back",
	"revert", "reverted", "reverting", "roll back", "rolled back", "replace ", "replaced", "replacing",
	"stop using", "stopped using", "not anymore", "any more", "anymore", "drop ", "dropped", "dropping",
	"move away from", "moved away from", "migrate from", "migrated from", "changed my mind", "reconsider",
	"on second thought", "go back to", "went back to",
}

// Reverses reports whether text says it replaces an earlier choice.
func Reverses(text string) bool {
	lc := " " + strings.ToLower(text) + " "
	for _, m := range reversalMarkers {
		if strings.Contains(lc, m) {
			return true
		}
	}
	return false
}

// AutoSupersedes reports whether newer supersedes older by the rule above.
func AutoSupersedes(newer, older Memory) bool {
	return AutoSupersedesWith(newer, SubjectOf(newer), older, SubjectOf(older))
}

// Subject is what the rule reads of a memory's words, computed once so a
// reader comparing one memory with many does not split it again each time.
type Subject struct {
	Words    map[string]bool
	Reverses bool
}

// SubjectOf is m's Subject.
func SubjectOf(m Memory) Subject {
	return Subject{Words: SubjectWords(m.Content), Reverses: Reverses(m.Content)}
}

// AutoSupersedesWith is AutoSupersedes with the two subjects given.
func AutoSupersedesWith(newer Memory, ns Subject, older Memory, os Subject) bool {
	if newer.Kind != older.Kind || (newer.Kind != KindDecision && newer.Kind != KindExperience) {
		return false
	}
	sameBatch := newer.CreatedAt.Equal(older.CreatedAt) && newer.Session != "" && newer.Session == older.Session
	if !newer.CreatedAt.After(older.CreatedAt) && (!sameBatch || newer.Source.Start <= older.Source.Start) {
		return false
	}
	if len(os.Words) == 0 || len(ns.Words) == 0 || (!shareFile(newer.FilesTouched, older.FilesTouched) && !shareTag(newer.Tags, older.Tags)) {
		return false
	}
	common := 0
	for w := range os.Words {
		if ns.Words[w] {
			common++
		}
	}
	if ns.Reverses && float64(common) >= ReversalOverlap*float64(len(os.Words)) {
		return true
	}
	union := len(ns.Words) + len(os.Words) - common
	return float64(common) >= RestateSimilarity*float64(union)
}

// shareFile reports whether a and b name a same file. Paths match when
// one ends with the other at a '/' boundary, as the files filter of
// search_memories matches.
func shareFile(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if pathSuffix(x, y) || pathSuffix(y, x) {
				return true
			}
		}
	}
	return false
}

// shareTag reports whether a and b hold a same tag, case aside.
func shareTag(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if strings.EqualFold(x, y) {
				return true
			}
		}
	}
	return false
}

func pathSuffix(p, suffix string) bool {
	if !strings.HasSuffix(p, suffix) {
		return false
	}
	return len(p) == len(suffix) || p[len(p)-len(suffix)-1] == '/'
}

// subjectStopwords are words that say nothing about what was decided.
var subjectStopwords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true, "and": true,
	"or": true, "with": true, "by": true, "at": true, "as": true, "is": true, "are": true, "be": true, "it": true,
	"its": true, "this": true, "that": true, "we": true, "i": true, "our": true, "from": true, "into": true,
	"use": true, "using": true, "used": true, "will": true, "should": true, "not": true, "no": true, "all": true,
	"now": true, "so": true, "than": true, "instead": true, "rather": true, "back": true, "longer": true,
	"anymore": true, "decided": true, "decide": true, "chose": true, "choose": true, "go": true, "went": true,
	"switch": true, "switched": true, "keep": true, "let's": true, "let": true, "us": true, "but": true,
}

// SubjectWords are the lowercase words of text that say what it is about:
// letters and digits, two characters or more, stopwords and the words of
// a reversal left out, a trailing "s" dropped from words of four or more.
func SubjectWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		w = strings.Trim(w, "'")
		if len(w) < 2 || subjectStopwords[w] {
			continue
		}
		if len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out[w] = true
	}
	return out
}
