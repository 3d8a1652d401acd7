package search

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// filler is neutral body text so test documents have comparable lengths.
const filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for k, h := range hits {
		out[k] = h.ID
	}
	return out
}

func TestPathAndHeadingOutrankBody(t *testing.T) {
	ix := NewIndex()
	ix.Upsert("body", Fields{Path: "docs/notes.md", Title: "Notes", Body: filler + " auth login"})
	ix.Upsert("path", Fields{Path: "docs/auth.md", Title: "Notes", Body: filler + " other words"})
	ix.Upsert("heading", Fields{Path: "docs/misc.md", Title: "Misc", Headings: []string{"Login flow"}, Body: filler + " other words"})

	if got := ids(ix.Search("auth", 10)); !slices.Equal(got, []string{"path", "body"}) {
		t.Errorf("Search(auth) = %q, want the path match first", got)
	}
	if got := ids(ix.Search("login", 10)); !slices.Equal(got, []string{"heading", "body"}) {
		t.Errorf("Search(login) = %q, want the heading match first", got)
	}
}

func TestRareTermsWeighMore(t *testing.T) {
	ix := NewIndex()
	for k := range 10 {
		ix.Upsert(fmt.Sprintf("common%d", k), Fields{Body: filler + " widget"})
	}
	ix.Upsert("rare", Fields{Body: filler + " sprocket"})

	hits := ix.Search("widget sprocket", 3)
	if len(hits) == 0 || hits[0].ID != "rare" {
		t.Fatalf("Search = %v, want the document with the rarer term first", hits)
	}
	if hits[0].Score <= hits[1].Score {
		t.Errorf("rare score %v not above common score %v", hits[0].Score, hits[1].Score)
	}
}

func TestUpsertReplaces(t *testing.T) {
	ix := NewIndex()
	ix.Upsert("a", Fields{Path: "a.md", Body: "alpha alpha gamma"})
	ix.Upsert("b", Fields{Path: "b.md", Body: "gamma delta"})
	ix.Upsert("a", Fields{Path: "a.md", Body: "beta gamma"})

	if ix.Len() != 2 {
		t.Errorf("Len = %d, want 2", ix.Len())
	}
	if hits := ix.Search("alpha", 10); len(hits) != 0 {
		t.Errorf("Search(alpha) = %v, want nothing after the replacing upsert", hits)
	}
	if got := ids(ix.Search("beta", 10)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("Search(beta) = %q, want [a]", got)
	}

	// Statistics must match an index that only ever saw the final content.
	fresh := NewIndex()
	fresh.Upsert("b", Fields{Path: "b.md", Body: "gamma delta"})
	fresh.Upsert("a", Fields{Path: "a.md", Body: "beta gamma"})
	for _, q := range []string{"gamma", "beta delta", "a md"} {
		if got, want := ix.Search(q, 10), fresh.Search(q, 10); !reflect.DeepEqual(got, want) {
			t.Errorf("Search(%q) = %v, fresh index gives %v", q, got, want)
		}
	}
}

func TestRemove(t *testing.T) {
	ix := NewIndex()
	ix.Upsert("a", Fields{Body: "alpha shared"})
	ix.Upsert("b", Fields{Body: "beta shared"})
	ix.Remove("a")
	ix.Remove("missing")

	if ix.Len() != 1 {
		t.Errorf("Len = %d, want 1", ix.Len())
	}
	if hits := ix.Search("alpha", 10); len(hits) != 0 {
		t.Errorf("Search(alpha) = %v, want nothing after Remove", hits)
	}
	if got := ids(ix.Search("shared", 10)); !slices.Equal(got, []string{"b"}) {
		t.Errorf("Search(shared) = %q, want [b]", got)
	}
	ix.Remove("b")
	if ix.Len() != 0 || len(ix.termIDs) != 0 || len(ix.surfaceIDs) != 0 || len(ix.buckets) != 0 ||
		ix.totalLens != [numFields]uint64{} || ix.fieldDocs != [numFields]uint64{} {
		t.Errorf("empty index keeps state: %d docs, %d terms, %d words, %d buckets, lens %v",
			ix.Len(), len(ix.termIDs), len(ix.surfaceIDs), len(ix.buckets), ix.totalLens)
	}
}

// TestChurnStaysBounded replaces and removes documents many times over and
// checks the index holds no more than its live content.
func TestChurnStaysBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ix := NewIndex()
	const live = 50
	for round := range 2000 {
		id := fmt.Sprintf("doc%d", rng.IntN(live))
		if rng.IntN(4) == 0 {
			ix.Remove(id)
			continue
		}
		words := make([]string, 20)
		for k := range words {
			// Fresh words every round: without forgetting terms the
			// vocabulary would grow with every upsert.
			words[k] = fmt.Sprintf("w%dx%d", round, rng.IntN(1000))
		}
		ix.Upsert(id, Fields{Body: strings.Join(words, " ")})
	}

	if len(ix.docs) > live {
		t.Errorf("%d document slots for at most %d live documents", len(ix.docs), live)
	}
	distinct := map[string]bool{}
	nterms := 0
	for _, d := range ix.ids {
		for _, tid := range ix.docs[d].terms {
			distinct[ix.terms[tid].text] = true
		}
	}
	for _, bk := range ix.buckets {
		nterms += len(bk)
	}
	// The words here are their own stems, so terms and words agree.
	if len(ix.termIDs) != len(distinct) || len(ix.surfaceIDs) != len(distinct) || nterms != len(distinct) {
		t.Errorf("index holds %d terms, %d words (%d in buckets); live documents hold %d",
			len(ix.termIDs), len(ix.surfaceIDs), nterms, len(distinct))
	}
	if used := len(ix.terms) - len(ix.freeTerms); used != len(distinct) {
		t.Errorf("%d term slots in use, want %d", used, len(distinct))
	}
	if used := len(ix.surfaces) - len(ix.freeSurfaces); used != len(distinct) {
		t.Errorf("%d word slots in use, want %d", used, len(distinct))
	}
}

func TestNoMatchReturnsNothing(t *testing.T) {
	ix := NewIndex()
	ix.Upsert("a", Fields{Path: "internal/bus/embedded.go", Body: "starts the server"})
	for _, q := range []string{"zebra", "the of and", "", "!!!", "xyz"} {
		if hits := ix.Search(q, 10); len(hits) != 0 {
			t.Errorf("Search(%q) = %v, want no hits", q, hits)
		}
	}
	if hits := NewIndex().Search("server", 10); len(hits) != 0 {
		t.Errorf("empty index returned %v", hits)
	}
}

func TestFuzzyFindsTypos(t *testing.T) {
	ix := NewIndex()
	ix.Upsert("bus", Fields{Path: "internal/bus/embedded.go", Body: "starts the server"})
	ix.Upsert("auth", Fields{Path: "docs/auth.md", Headings: []string{"Authentication Flow"}, Body: "tokens"})
	ix.Upsert("sec", Fields{Path: "docs/security.md", Headings: []string{"Secret redaction"}, Body: "guard"})

	for q, want := range map[string]string{
		"embeded":       "bus",
		"embdded":       "bus",
		"emdbedded":     "bus",
		"authentcation": "auth",
		"secuirty":      "sec",
		"redacton":      "sec",
	} {
		if got := ids(ix.Search(q, 10)); !slices.Equal(got, []string{want}) {
			t.Errorf("Search(%q) = %q, want [%s]", q, got, want)
		}
	}
	// Too short to guess at: three letters allow no typo.
	if hits := ix.Search("bux", 10); len(hits) != 0 {
		t.Errorf("Search(bux) = %v, want no hits", hits)
	}
}

func TestExactOutranksFuzzy(t *testing.T) {
	ix := NewIndex()
	ix.Upsert("token", Fields{Body: filler + " token"})
	ix.Upsert("totem", Fields{Body: filler + " totem"})
	ix.Upsert("other", Fields{Body: filler + " unrelated"})

	// An indexed word is taken as meant: no expansion to its neighbours.
	if got := ids(ix.Search("token", 10)); !slices.Equal(got, []string{"token"}) {
		t.Errorf("Search(token) = %q, want only the exact match", got)
	}
	// "tokem" is one edit from both and matches neither exactly.
	hits := ix.Search("tokem", 10)
	if got := ids(hits); !slices.Equal(got, []string{"token", "totem"}) {
		t.Fatalf("Search(tokem) = %v, want both near matches", hits)
	}
	exact := ix.Search("token", 1)[0]
	if hits[0].Score >= exact.Score {
		t.Errorf("fuzzy score %v not below exact score %v", hits[0].Score, exact.Score)
	}
}

func TestTiesOrderedByID(t *testing.T) {
	ix := NewIndex()
	for _, id := range []string{"c", "a", "d", "b"} {
		ix.Upsert(id, Fields{Body: "same words here"})
	}
	if got := ids(ix.Search("words", 3)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Search = %q, want [a b c]", got)
	}
	if got := ids(ix.Search("words", 0)); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("Search with no limit = %q, want all four", got)
	}
}

func TestTopMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ix := NewIndex()
	for k := range 300 {
		words := make([]string, 30)
		for w := range words {
			words[w] = fmt.Sprintf("t%d", rng.IntN(40))
		}
		ix.Upsert(fmt.Sprintf("d%03d", k), Fields{Body: strings.Join(words, " ")})
	}
	for _, q := range []string{"t1", "t2 t3", "t4 t5 t6 t7"} {
		all := ix.Search(q, 0)
		for _, limit := range []int{1, 5, 17, 1000} {
			got := ix.Search(q, limit)
			want := all[:min(limit, len(all))]
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Search(%q, %d) differs from the head of the full ranking", q, limit)
			}
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		max  int
		want int
	}{
		{"embedded", "embedded", 2, 0},
		{"embeded", "embedded", 1, 1},
		{"embdeded", "embedded", 1, 1}, // transposition
		{"kitten", "sitting", 3, 3},
		{"kitten", "sitting", 1, 2}, // capped at max+1
		{"kitten", "sitting", 2, 3},
		{"abc", "abcdef", 2, 3},
		{"größe", "grösse", 2, 2},
	}
	sc := new(scratch)
	for _, tt := range tests {
		if got := sc.distance([]rune(tt.a), []rune(tt.b), tt.max); got != tt.want {
			t.Errorf("distance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.max, got, tt.want)
		}
	}
}

func TestConcurrentUpsertAndSearch(t *testing.T) {
	ix := NewIndex()
	for k := range 100 {
		ix.Upsert(fmt.Sprintf("d%d", k), Fields{Path: fmt.Sprintf("docs/f%d.md", k), Body: "shared body text"})
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for k := range 200 {
				id := fmt.Sprintf("d%d", (w*200+k)%150)
				if k%5 == 0 {
					ix.Remove(id)
				} else {
					ix.Upsert(id, Fields{Path: "docs/" + id + ".md", Body: fmt.Sprintf("shared body round%d", k)})
				}
			}
		})
		wg.Go(func() {
			for range 200 {
				for _, h := range ix.Search("shared round7 dcos", 5) {
					if h.ID == "" || h.Score <= 0 {
						t.Errorf("bad hit %+v", h)
						return
					}
				}
				_ = ix.Len()
			}
		})
	}
	wg.Wait()
}

// TestLetterSetNeverRulesOutNearWords checks the prefilter's bound: words
// within edit distance d differ in at most 2d letter-set bits.
func TestLetterSetNeverRulesOutNearWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []rune("abcdeé日ž")
	word := func() []rune {
		w := make([]rune, 1+rng.IntN(8))
		for k := range w {
			w[k] = alphabet[rng.IntN(len(alphabet))]
		}
		return w
	}
	sc := new(scratch)
	for range 20000 {
		a, b := word(), word()
		d := sc.distance(a, b, 2)
		if d > 2 {
			continue
		}
		if diff := bits.OnesCount32(letterSet(string(a)) ^ letterSet(string(b))); diff > 2*d {
			t.Fatalf("%q and %q are %d apart but differ in %d letter bits", string(a), string(b), d, diff)
		}
	}
}

func TestSearchFilteredLimitsAfterFiltering(t *testing.T) {
	ix := NewIndex()
	for i := range 20 {
		ix.Upsert(fmt.Sprintf("hot%02d", i), Fields{Body: "zebra zebra zebra"})
	}
	ix.Upsert("cold", Fields{Body: "zebra"})
	allow := func(id string) bool { return id == "cold" }
	got := ix.SearchFiltered("zebra", 5, allow)
	if len(got) != 1 || got[0].ID != "cold" {
		t.Fatalf("the one allowed doc ranks below 20 others and must still be found: %v", got)
	}
	// Pooled scratch must come back clean: an unfiltered search afterwards
	// scores exactly as a fresh index would.
	again := ix.Search("zebra", 3)
	fresh := NewIndex()
	for i := range 20 {
		fresh.Upsert(fmt.Sprintf("hot%02d", i), Fields{Body: "zebra zebra zebra"})
	}
	fresh.Upsert("cold", Fields{Body: "zebra"})
	want := fresh.Search("zebra", 3)
	for i := range want {
		if again[i] != want[i] {
			t.Fatalf("after a filtered search: %v, want %v", again, want)
		}
	}
}

// A weight reorders hits before the limit picks them, and a weight of 0
// leaves a document out.
func TestSearchWeightedAppliesThePriorBeforeTheLimit(t *testing.T) {
	ix := NewIndex()
	ix.Upsert("ja", Fields{Body: "decision_wait"})
	ix.Upsert("en", Fields{Body: "decision_wait sets how long the processor buffers spans before it decides"})
	ix.Upsert("gone", Fields{Body: "decision_wait decision_wait"})
	plain := ix.Search("decision_wait", 1)
	if len(plain) != 1 || plain[0].ID == "en" {
		t.Fatalf("unweighted: %v; the test needs a shorter page to win", plain)
	}
	weights := map[string]float64{"ja": 0.1, "gone": 0, "en": 1}
	got := ix.SearchWeighted("decision_wait", 1, func(id string) float64 { return weights[id] })
	if len(got) != 1 || got[0].ID != "en" {
		t.Fatalf("weighted, limit 1: %v, want en", got)
	}
	all := ix.SearchWeighted("decision_wait", 0, func(id string) float64 { return weights[id] })
	if len(all) != 2 || all[1].ID != "ja" || all[1].Score >= all[0].Score {
		t.Fatalf("weighted: %v, want en then ja, gone left out", all)
	}
}

// TestPrunedSearchMatchesWholeScoring compares the pruned search with
// scoring every posting of every query list, and with the head of the
// full ranking, on a Zipf corpus over all
// fields that has been churned (so term bounds are stale-high), with
// typos, filters and priors, at several limits: the hits and their scores
// must be identical, and pruning must have happened often enough for that
// to say something.
func TestPrunedSearchMatchesWholeScoring(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	vocab := make([]string, 600)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%03dx", i)
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	words := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	ix := NewIndex()
	upsert := func(k int) {
		ix.Upsert(fmt.Sprintf("d%04d", k), Fields{
			Path: "src/" + words(1+rng.IntN(2)) + ".go", Title: words(rng.IntN(3)),
			Headings: []string{words(rng.IntN(4))}, Body: words(rng.IntN(80)),
		})
	}
	const docs = 3000
	for k := range docs {
		upsert(k)
	}
	for range docs / 2 {
		if k := rng.IntN(docs); rng.IntN(3) == 0 {
			ix.Remove(fmt.Sprintf("d%04d", k))
		} else {
			upsert(k)
		}
	}
	weights := []func(string) float64{
		nil,
		func(id string) float64 { return float64(id[len(id)-1] % 2) }, // a filter
		func(id string) float64 { return float64(id[len(id)-1]-'0') / 9 },
		func(id string) float64 { return []float64{1, 0.5, 0.9, 0.45}[id[len(id)-1]%4] },
	}
	queries, pruned := 0, 0
	rounds := 400
	if raceEnabled {
		rounds = 80
	}
	for qi := range rounds {
		q := words(1 + rng.IntN(4))
		if qi%5 == 0 {
			q += " w" + fmt.Sprint(100+rng.IntN(400)) + "y" // a typo of a mid-frequency word
		}
		for wi, weight := range weights {
			for _, limit := range []int{1, 3, 10, 50} {
				got, did := ix.search(q, limit, ix.byID(weight), true)
				want, _ := ix.search(q, limit, ix.byID(weight), false)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("query %q, weight %d, limit %d: pruned %v\nwhole %v", q, wi, limit, got, want)
				}
				if all, _ := ix.search(q, 0, ix.byID(weight), false); !reflect.DeepEqual(got, all[:min(limit, len(all))]) {
					t.Fatalf("query %q, weight %d, limit %d: %v\nhead of the full ranking %v", q, wi, limit, got, all[:min(limit, len(all))])
				}
				queries++
				if did {
					pruned++
				}
			}
		}
	}
	if pruned < queries/4 {
		t.Errorf("pruned %d of %d searches: the comparison says little", pruned, queries)
	}
	t.Logf("pruned %d of %d searches", pruned, queries)
}

// TestScoresAreTheScoresSearchGives: for any ids, Scores is bit for bit
// the score of the same document in Search's full ranking, and 0 for a
// document no query term is in, one removed, or an id never indexed.
func TestScoresAreTheScoresSearchGives(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	vocab := make([]string, 400)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%03dx", i)
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	words := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	ix := NewIndex()
	const docs = 2000
	for k := range docs {
		ix.Upsert(fmt.Sprintf("d%04d", k), Fields{
			Path: "src/" + words(1) + ".go", Title: words(rng.IntN(3)),
			Headings: []string{words(rng.IntN(4))}, Body: words(rng.IntN(60)),
		})
	}
	for k := 0; k < docs; k += 7 {
		ix.Remove(fmt.Sprintf("d%04d", k))
	}
	ids := []string{"never-indexed", "d0000", "d0007"}
	for k := range docs {
		if rng.IntN(4) == 0 {
			ids = append(ids, fmt.Sprintf("d%04d", k))
		}
	}
	matched := 0
	for qi := range 200 {
		q := words(1 + rng.IntN(4))
		if qi%5 == 0 {
			q += " w" + fmt.Sprint(100+rng.IntN(300)) + "y" // typo tolerance widens it
		}
		all := ix.Search(q, 0)
		want := make(map[string]float64, len(all))
		for _, h := range all {
			want[h.ID] = h.Score
		}
		got := ix.Scores(q, ids)
		for i, id := range ids {
			if got[i] != want[id] {
				t.Fatalf("query %q: Scores(%s) = %v, Search gives %v", q, id, got[i], want[id])
			}
			if got[i] > 0 {
				matched++
			}
		}
	}
	if matched == 0 {
		t.Fatal("no id matched any query: the test compares nothing")
	}
}

// An index churned with inflected words (several words to a term, terms
// that outlive some of their words) stays what indexing its live documents
// afresh makes: every word names its own stem's term, each counts the
// documents that hold it, and searches score alike.
func TestChurnedIndexAgreesWithAFreshOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	stemsOf := []string{"connect", "index", "run", "search", "stop"}
	endings := []string{"", "s", "ed", "ing", "ion", "er"}
	word := func() string {
		return stemsOf[rng.IntN(len(stemsOf))] + endings[rng.IntN(len(endings))]
	}
	ix := NewIndex()
	live := map[string]Fields{}
	for range 3000 {
		id := fmt.Sprintf("doc%d", rng.IntN(40))
		if rng.IntN(5) == 0 {
			ix.Remove(id)
			delete(live, id)
			continue
		}
		words := make([]string, 1+rng.IntN(12))
		for k := range words {
			words[k] = word()
		}
		doc := Fields{Path: word() + ".md", Body: strings.Join(words, " ")}
		ix.Upsert(id, doc)
		live[id] = doc
	}
	fresh := NewIndex()
	for id, doc := range live {
		fresh.Upsert(id, doc)
	}
	holders := map[string]int{}
	for _, d := range ix.ids {
		for _, sid := range ix.docs[d].surfaces {
			holders[ix.surfaces[sid].text]++
		}
	}
	for w, sid := range ix.surfaceIDs {
		se := ix.surfaces[sid]
		if got, want := ix.terms[se.term].text, stem(w); got != want {
			t.Fatalf("word %q names term %q, its stem is %q", w, got, want)
		}
		if se.docs != holders[w] {
			t.Fatalf("word %q counts %d documents, %d hold it", w, se.docs, holders[w])
		}
	}
	if len(ix.surfaceIDs) != len(fresh.surfaceIDs) || len(ix.termIDs) != len(fresh.termIDs) {
		t.Fatalf("churned index holds %d words and %d terms, a fresh one %d and %d",
			len(ix.surfaceIDs), len(ix.termIDs), len(fresh.surfaceIDs), len(fresh.termIDs))
	}
	for range 200 {
		q := word() + " " + word()
		got, want := ix.Search(q, 10), fresh.Search(q, 10)
		if len(got) != len(want) {
			t.Fatalf("%q: %d hits, fresh %d", q, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Fatalf("%q: hit %d %+v, fresh %+v", q, i, got[i], want[i])
			}
		}
	}
}

// SearchStamped answers as SearchFiltered with keep's verdicts and allow
// where keep asks it, asks allow of no other document, and reads the
// stamp each document was last indexed with.
func TestSearchStampedIsSearchFilteredAskingLess(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	vocab := []string{"alpha", "beta", "gamma", "delta", "omega", "sigma"}
	ix := NewIndex()
	stampOf := map[string]uint64{}
	for i := range 3000 {
		id := fmt.Sprintf("m%04d", rng.IntN(1500))
		if i%7 == 0 {
			ix.Remove(id)
			delete(stampOf, id)
			continue
		}
		words := make([]string, 3+rng.IntN(6))
		for k := range words {
			words[k] = vocab[rng.IntN(len(vocab))]
		}
		stamp := uint64(rng.IntN(8))
		ix.Upsert(id, Fields{Body: strings.Join(words, " "), Stamp: stamp})
		stampOf[id] = stamp
	}
	for want := range uint64(8) {
		// Stamps below want are refused, want is asked about, the ones
		// above are admitted as they are.
		keep := func(stamp uint64) int {
			switch {
			case stamp < want:
				return Refuse
			case stamp > want:
				return Admit
			}
			return Ask
		}
		allow := func(id string) bool { return id[len(id)-1] != '7' }
		asked := 0
		counted := func(id string) bool {
			asked++
			if stampOf[id] != want {
				t.Fatalf("allow asked of %s, whose stamp %d keep decides", id, stampOf[id])
			}
			return allow(id)
		}
		for _, q := range []string{"alpha", "beta gamma", "omega sigma delta"} {
			got := ix.SearchStamped(q, 10, keep, counted)
			exp := ix.SearchFiltered(q, 10, func(id string) bool {
				return stampOf[id] > want || stampOf[id] == want && allow(id)
			})
			if !reflect.DeepEqual(got, exp) {
				t.Fatalf("stamp %d, %q: %v, want %v", want, q, got, exp)
			}
		}
		if asked == 0 {
			t.Fatalf("stamp %d: allow never asked", want)
		}
	}
}

// TestFilledNormsGiveGainsFloats: the long lists a search scores with the
// normalisations filled in advance (gainFilled) get the very floats the
// lazily filled ones give (gain), which Scores and the pruning's look-ups
// use, for lengths below the cache and past it.
func TestFilledNormsGiveGainsFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	ix := NewIndex()
	for k := range 1500 {
		body := strings.Repeat("filler ", rng.IntN(400)) + "common"
		ix.Upsert(fmt.Sprintf("d%04d", k), Fields{Path: "src/common.go", Title: "common title", Body: body})
	}
	lazy, filled := getScratch(len(ix.docs)), getScratch(len(ix.docs))
	defer putScratch(lazy)
	defer putScratch(filled)
	lists := ix.listsLocked(lazy, []string{"common", "filler"})
	filled.norms.avg = lazy.norms.avg
	filled.norms.fill()
	checked := 0
	for _, l := range lists {
		for k := range ix.terms[l.tid].postings {
			p := &ix.terms[l.tid].postings[k]
			if got, want := ix.gainFilled(filled, l, p), ix.gain(lazy, l, p); got != want {
				t.Fatalf("doc %d, term %s: filled %v, lazy %v", p.doc, ix.terms[l.tid].text, got, want)
			}
			checked++
		}
	}
	if checked < 2000 {
		t.Fatalf("%d postings compared", checked)
	}
}

// A gain sums only the fields its term may be in; the fields left out add
// exactly 0, so the gain is bit for bit the sum over every field, for
// terms in one field, in several, and in all.
func TestGainOverTheTermsFieldsIsTheSumOverAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	ix := NewIndex()
	for k := range 800 {
		w := func(prefix string) string { return fmt.Sprintf("%s%d", prefix, rng.IntN(6)) }
		ix.Upsert(fmt.Sprintf("d%04d", k), Fields{
			Path:     "src/" + w("path") + "/" + w("every") + ".go",
			Title:    w("title") + " " + w("every") + " " + w("shared"),
			Headings: []string{w("heading") + " " + w("every")},
			Body:     strings.Repeat(w("body")+" ", rng.IntN(300)) + w("every") + " " + w("shared"),
		})
	}
	sc := getScratch(len(ix.docs))
	defer putScratch(sc)
	var words []string
	for _, prefix := range []string{"path", "title", "heading", "body", "every", "shared"} {
		for i := range 6 {
			words = append(words, fmt.Sprintf("%s%d", prefix, i))
		}
	}
	lists := ix.listsLocked(sc, words)
	fieldCounts := map[int]bool{}
	for _, l := range lists {
		fieldCounts[l.nf] = true
		for k := range ix.terms[l.tid].postings {
			p := &ix.terms[l.tid].postings[k]
			lens := &ix.lens[p.doc]
			var tf float64
			for f := range numFields {
				tf += fieldWeights[f] * float64(p.tf[f]) * sc.norms.of(f, lens[f])
			}
			if want, got := l.scale*tf/(tf+k1), ix.gain(sc, l, p); got != want {
				t.Fatalf("term %s, doc %d: gain %v, over every field %v", ix.terms[l.tid].text, p.doc, got, want)
			}
		}
	}
	if !fieldCounts[1] || !fieldCounts[2] || !fieldCounts[numFields] {
		t.Errorf("lists over %v fields: want terms in one, two and every field", fieldCounts)
	}
}
