// Package importance scores how much a file of a repository matters to an
// agent reading it, by seed 000 §5 strategy 3:
//
//	score = references × 0.3 + recent changes × 0.35 + in error stack × 0.35
//
// each term normalised per repo to [0, 1]. The edge (internal/edge) feeds
// it the repo's link and import graph, the content versions it has seen per
// path and the error-stack file mentions the extractors recorded; it
// exposes the scores in read_context results, breaks ties between equally
// relevant hits with them, and get_scene orders the nodes of one depth by
// them.
//
// The package is pure: no I/O, no infrastructure; time comes in as an
// argument.
package importance

import "time"

// Weights of the three terms (seed 000 §5).
const (
	WeightReferences = 0.3
	WeightChanges    = 0.35
	WeightErrors     = 0.35
)

// Signals are the raw counts of one file.
type Signals struct {
	// References is how many other files of the repo link to or import it.
	References int
	// Changes are the times its content changed.
	Changes []time.Time
	// Errors are the times it appeared in an error stack.
	Errors []time.Time
}

// Options tune the time terms. The zero value uses the defaults.
type Options struct {
	// Now is when the scores are computed.
	Now time.Time
	// HalfLife is the age at which a change or an error stack counts half.
	HalfLife time.Duration
	// Window is the age beyond which changes and stacks no longer count.
	Window time.Duration
}

// Score is one file's importance and its normalised terms.
type Score struct {
	Path                        string
	Score                       float64
	References, Changes, Errors float64
}

// Scores normalises files' signals per repo (files is one repo) and
// weighs them.
func Scores(files map[string]Signals, opts Options) map[string]Score {
	out := make(map[string]Score, len(files))
	for p := range files {
		out[p] = Score{Path: p}
	}
	return out
}

// File is one file of a repo as the reference count sees it.
type File struct {
	Path string
	// Links are a document's links (markdown links, @doc references),
	// each as the repo paths it may name, first match wins.
	Links [][]string
	// Imports are a code file's imports as written.
	Imports []string
}

// References counts, for each file of one repo, the other files that link
// to or import it.
func References(files []File, module string) map[string]int { return nil }

// Rank orders scores by score, then path.
func Rank(scores map[string]Score) []Score {
	var out []Score
	for _, s := range scores {
		out = append(out, s)
	}
	return out
}
