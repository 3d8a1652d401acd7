package memory

import (
	"slices"
	"strings"
)

// Keywords are the three tiers of seed 003 §1's keyword score. A message
// scores 1.0 if its lowercased content contains any High keyword as a
// substring, else 0.5 for a Medium one, else 0.2 for a Low one, else 0.
// Keywords are lowercased before matching.
type Keywords struct {
	High   []string `json:"high"`
	Medium []string `json:"medium"`
	Low    []string `json:"low"`
}

// The scores of the three tiers.
const (
	HighKeywordScore   = 1.0
	MediumKeywordScore = 0.5
	LowKeywordScore    = 0.2
)

// EmotionKeywords returns seed 003's emotional lists, for conversational
// transcripts.
func EmotionKeywords() Keywords {
	return Keywords{
		High:   []string{"love", "hate", "amazing", "terrible", "excited", "devastated"},
		Medium: []string{"happy", "sad", "worried", "pleased", "frustrated"},
		Low:    []string{"okay", "fine", "good", "bad"},
	}
}

// CodingKeywords returns the lists for coding-agent transcripts, the
// default. What a coding session should remember is mostly its decisions
// and the user's corrections, so those score highest; errors and their
// causes are the next most telling; preferences, conventions and open
// points are worth a little. Matching is by substring, as in the seed, so
// a phrase like "no," or "don't " carries its punctuation or space to
// avoid matching inside words.
func CodingKeywords() Keywords {
	return Keywords{
		High: []string{
			// decisions
			"decided", "decision", "we'll use", "we will use", "let's use", "let's go with",
			"going with", "chose", "instead of", "switch to", "settled on",
			// corrections
			"actually", "that's wrong", "that is wrong", "that's not", "no,", "not what i",
			"revert", "undo", "don't ", "do not ", "never ", "always ",
		},
		Medium: []string{
			// errors and their causes
			"error", "failed", "failing", "panic", "exception", "stack trace", "traceback",
			"segfault", "timeout", "deadlock", "data race", "race condition", "regression",
			"root cause", "because", "the reason", "fixed", "workaround",
		},
		Low: []string{
			// preferences, conventions, open points
			"prefer", "should", "convention", "remember", "todo", "fixme",
			"not sure", "open question", "later",
		},
	}
}

// lowered returns a copy with every keyword lowercased and empty ones
// dropped (an empty substring would match everything).
func (k Keywords) lowered() Keywords {
	f := func(in []string) []string {
		out := make([]string, 0, len(in))
		for _, s := range in {
			if s != "" {
				out = append(out, strings.ToLower(s))
			}
		}
		return slices.Clip(out)
	}
	return Keywords{High: f(k.High), Medium: f(k.Medium), Low: f(k.Low)}
}

// Score is the seed's getEmotionKeywordScore with these lists.
func (k Keywords) Score(content string) float64 {
	return k.lowered().score(strings.ToLower(content))
}

// score expects lowercased keywords and content.
func (k Keywords) score(lc string) float64 {
	has := func(list []string) bool {
		return slices.ContainsFunc(list, func(s string) bool { return strings.Contains(lc, s) })
	}
	switch {
	case has(k.High):
		return HighKeywordScore
	case has(k.Medium):
		return MediumKeywordScore
	case has(k.Low):
		return LowKeywordScore
	}
	return 0
}
