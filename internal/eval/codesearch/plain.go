package codesearch

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/cuedeck/cuedeck/internal/tools"
)

// PlainMode names PlainBM25's scores in a Report.
const PlainMode = "plain-bm25"

// PlainBM25 scores the set with textbook BM25 (k1 1.2, b 0.75) over each
// function file's text, lowercased and split at every character that is
// not a letter or digit — roughly what BEIR's BM25 baseline (Elasticsearch's
// standard analyzer) sees, with no fields, no identifier splitting and no
// stemming. It is the reference the product's keyword mode is measured
// against, computed in this process; it is not a path users get.
func PlainBM25(s *Set) Scores {
	const k1, b = 1.2, 0.75
	type posting struct {
		doc int
		tf  int
	}
	postings := map[string][]posting{}
	lengths := make([]int, len(s.Functions))
	total := 0
	for i, f := range s.Functions {
		counts := map[string]int{}
		for _, t := range plainTokens("package " + f.Package + "\n\n" + f.Code) {
			counts[t]++
			lengths[i]++
		}
		total += lengths[i]
		for t, n := range counts {
			postings[t] = append(postings[t], posting{i, n})
		}
	}
	avg := float64(total) / float64(max(len(s.Functions), 1))
	n := float64(len(s.Functions))
	sc := Scores{Mode: PlainMode, Queries: len(s.Queries)}
	scores := make([]float64, len(s.Functions))
	for _, qi := range s.Queries {
		clear(scores)
		var touched []int
		terms := plainTokens(s.Functions[qi].Query)
		slices.Sort(terms)
		for _, t := range slices.Compact(terms) {
			ps := postings[t]
			idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			for _, p := range ps {
				if scores[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				tf := float64(p.tf)
				scores[p.doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(lengths[p.doc])/avg))
			}
		}
		// Ties break by file order, as a stable sort of the corpus would.
		slices.SortFunc(touched, func(a, c int) int {
			if scores[a] != scores[c] {
				if scores[a] > scores[c] {
					return -1
				}
				return 1
			}
			return a - c
		})
		rank := slices.Index(touched[:min(tools.MaxContextLimit, len(touched))], qi) + 1
		sc.add(rank, rank)
	}
	sc.average()
	return sc
}

func plainTokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
