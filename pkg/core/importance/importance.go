// Package importance scores how much a file of a repository matters to an
// agent reading it, by seed 000 §5 strategy 3:
//
//	score = references × 0.3 + recent changes × 0.35 + in error stack × 0.35
//
// each term normalised per repo to [0, 1]. The edge (internal/edge) feeds
// it each repo's link and import graph (References), the content changes it
// has seen per path and the error-stack file mentions the extractors
// recorded (StackPaths); read_context exposes the scores and breaks ties
// between equally relevant hits with them, and get_scene orders the nodes
// of one depth by them.
//
// # Normalisation
//
// Each raw term x becomes log(1+x) / log(1+max), max being the largest x
// of the repo: 0 stays 0, the repo's top file gets 1. Dividing by the max
// alone was rejected because the counts are heavy-tailed: with one package
// imported by 45 files, a file imported by 3 would score 0.07 and be
// indistinguishable from one imported by nobody; the log keeps it at 0.36.
// A rank-based scale was rejected because it spreads ties apart and moves
// every file when one file changes.
//
// # Time
//
// A change or an error stack counts 2^(-age/HalfLife), so yesterday's edit
// counts nearly 1 and one of three weeks ago an eighth (HalfLife defaults
// to a week); those older than Window (30 days) count nothing.
//
// The package is pure: no I/O, no infrastructure; time is an argument.
package importance

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// Weights of the three terms (seed 000 §5).
const (
	WeightReferences = 0.3
	WeightChanges    = 0.35
	WeightErrors     = 0.35
)

// Defaults of Options.
const (
	DefaultHalfLife = 7 * 24 * time.Hour
	DefaultWindow   = 30 * 24 * time.Hour
)

// Signals are the raw inputs of one file.
type Signals struct {
	// References is how many other files of the repo link to or import it
	// (References).
	References int
	// Changes are the times its content changed.
	Changes []time.Time
	// Errors are the times it appeared in an error stack.
	Errors []time.Time
}

// Options tune the time terms. The zero value uses the defaults, with Now
// the zero time (pass it).
type Options struct {
	// Now is when the scores are computed.
	Now time.Time
	// HalfLife is the age at which a change or an error stack counts half.
	HalfLife time.Duration
	// Window is the age beyond which changes and stacks no longer count.
	Window time.Duration
}

func (o *Options) setDefaults() {
	if o.HalfLife <= 0 {
		o.HalfLife = DefaultHalfLife
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
}

// Score is one file's importance, in [0, 1], and its normalised terms,
// each in [0, 1].
type Score struct {
	Path                        string
	Score                       float64
	References, Changes, Errors float64
}

// Decayed sums times by their age at opts.Now: 2^(-age/HalfLife) each,
// nothing for those older than Window; times after Now count 1.
func Decayed(times []time.Time, opts Options) float64 {
	opts.setDefaults()
	sum := 0.0
	for _, t := range times {
		age := opts.Now.Sub(t)
		if age > opts.Window {
			continue
		}
		sum += math.Exp2(-max(age, 0).Hours() / opts.HalfLife.Hours())
	}
	return sum
}

// Scores normalises the signals of one repo's files and weighs them.
func Scores(files map[string]Signals, opts Options) map[string]Score {
	opts.setDefaults()
	type raw struct{ refs, changes, errors float64 }
	raws := make(map[string]raw, len(files))
	var top raw
	for p, s := range files {
		r := raw{float64(max(s.References, 0)), Decayed(s.Changes, opts), Decayed(s.Errors, opts)}
		raws[p] = r
		top = raw{max(top.refs, r.refs), max(top.changes, r.changes), max(top.errors, r.errors)}
	}
	out := make(map[string]Score, len(files))
	for p, r := range raws {
		s := Score{Path: p, References: normalise(r.refs, top.refs), Changes: normalise(r.changes, top.changes), Errors: normalise(r.errors, top.errors)}
		s.Score = WeightReferences*s.References + WeightChanges*s.Changes + WeightErrors*s.Errors
		out[p] = s
	}
	return out
}

// normalise maps x in [0, top] to [0, 1] on a log scale.
func normalise(x, top float64) float64 {
	if top <= 0 || x <= 0 {
		return 0
	}
	return min(math.Log1p(x)/math.Log1p(top), 1)
}

// Rank orders scores by score, highest first, then by path.
func Rank(scores map[string]Score) []Score {
	out := make([]Score, 0, len(scores))
	for _, s := range scores {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Score) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Path, b.Path))
	})
	return out
}

// MaxChanges bounds the change times a file keeps (CarryChanges): a file
// a generator rewrites on every save must not grow them without end, and
// 32 recent changes already make it its repo's most changed file.
const MaxChanges = 32

// CarryChanges is a file's change times after a change at at: prev
// without those older than DefaultWindow, then at, keeping the newest
// MaxChanges. prev is not modified.
func CarryChanges(prev []time.Time, at time.Time) []time.Time {
	cutoff := at.Add(-DefaultWindow)
	out := make([]time.Time, 0, min(len(prev)+1, MaxChanges))
	for _, t := range prev {
		if !t.Before(cutoff) {
			out = append(out, t)
		}
	}
	out = append(out, at)
	return out[max(0, len(out)-MaxChanges):]
}
