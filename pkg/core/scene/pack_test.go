package scene

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/graph"
)

// byLen estimates a text at one token per byte, so budgets can be read off
// the test data.
var byLen = Packer{Estimate: func(s string) int { return len(s) }}

func withBudget(p Packer, n int) Packer { p.Budget = n; return p }

func ids(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

func TestPackStrictLessThanBoundary(t *testing.T) {
	p := withBudget(byLen, 10)
	active := Item{ID: "card", Text: "aaa"} // 3

	// 3 + 6 = 9 < 10: included.
	r := p.Pack(active, []Item{{ID: "six", Text: "bbbbbb"}})
	if r.Truncated || !slices.Equal(ids(r.Items), []string{"card", "six"}) || r.Used != 9 {
		t.Fatalf("3+6 under 10: %+v", r)
	}

	// 3 + 7 = 10, not < 10: the seed's strict comparison drops it even
	// though it would fill the budget exactly.
	r = p.Pack(active, []Item{{ID: "seven", Text: "bbbbbbb"}})
	if !r.Truncated || r.Dropped != "seven" || r.Omitted != 1 || r.Used != 3 {
		t.Fatalf("3+7 == 10 must not fit: %+v", r)
	}
	md := r.Markdown()
	if !strings.HasSuffix(md, "\n"+TruncationWarning+"\n") {
		t.Fatalf("Markdown does not end with the warning line:\n%s", md)
	}
}

func TestPackBreaksInsteadOfSkipping(t *testing.T) {
	// The seed says Break: after "big" does not fit, "small" (which would
	// fit) is not tried, so the scene stays a prefix of the priority order.
	p := withBudget(byLen, 10)
	r := p.Pack(Item{ID: "card", Text: "a"}, []Item{
		{ID: "first", Text: "bb"},
		{ID: "big", Text: strings.Repeat("c", 20)},
		{ID: "small", Text: "d"},
	})
	if got := ids(r.Items); !slices.Equal(got, []string{"card", "first"}) {
		t.Fatalf("included %v, want [card first]", got)
	}
	if !r.Truncated || r.Dropped != "big" || r.Omitted != 2 {
		t.Fatalf("%+v", r)
	}
	if strings.Contains(r.Markdown(), "d\n") {
		t.Fatal("the small node after the break was rendered")
	}
}

func TestPackActiveCardAlwaysFirst(t *testing.T) {
	p := withBudget(byLen, 10)
	huge := Item{ID: "card", Text: strings.Repeat("x", 50)}

	// The active card alone exceeds the budget: included anyway and marked,
	// and nothing else fits.
	r := p.Pack(huge, []Item{{ID: "tiny", Text: ""}})
	if got := ids(r.Items); !slices.Equal(got, []string{"card"}) {
		t.Fatalf("included %v", got)
	}
	if !r.OverBudget || !r.Truncated || r.Used != 50 || r.Dropped != "tiny" {
		t.Fatalf("%+v", r)
	}

	// Alone, it is over budget but nothing was truncated.
	r = p.Pack(huge, nil)
	if !r.OverBudget || r.Truncated || !strings.HasPrefix(r.Markdown(), "xxx") {
		t.Fatalf("%+v", r)
	}

	// Exactly the budget is not over it, but even an empty node then fails
	// used + 0 < N.
	r = p.Pack(Item{ID: "card", Text: strings.Repeat("x", 10)}, []Item{{ID: "empty"}})
	if r.OverBudget || !r.Truncated || r.Dropped != "empty" {
		t.Fatalf("%+v", r)
	}
}

func TestPackDefaults(t *testing.T) {
	r := Packer{}.Pack(Item{ID: "card", Text: "hello world"}, nil)
	if r.Budget != DefaultBudget || DefaultBudget != 32_000 {
		t.Fatalf("budget %d", r.Budget)
	}
	if r.Used != 2 { // cl100k_base: "hello", " world"
		t.Fatalf("Used = %d, want 2 from tokens.Count", r.Used)
	}
	neg := Packer{Budget: 5, Estimate: func(string) int { return -3 }}
	if r := neg.Pack(Item{}, []Item{{ID: "a"}}); r.Used != 0 || r.Truncated {
		t.Fatalf("negative estimates must count as zero: %+v", r)
	}
}

func TestPackMarkdown(t *testing.T) {
	p := withBudget(byLen, 13) // 7 + 5 = 12 < 13; + 4 is not
	r := p.Pack(Item{ID: "card", Text: "# Card\n"}, []Item{{ID: "a", Text: "alpha"}, {ID: "b", Text: "beta"}})
	want := "# Card\n\nalpha\n\n" + TruncationWarning + "\n"
	if got := r.Markdown(); got != want {
		t.Fatalf("Markdown() =\n%q\nwant\n%q", got, want)
	}
}

// TestPackLinearisedGraph packs a context graph the way `cue scene` does:
// Linearise, then everything after the root in order.
func TestPackLinearisedGraph(t *testing.T) {
	g := graph.New()
	g.AddEdge("card", "docs/api.md")
	g.AddEdge("docs/api.md", "docs/auth.md")
	g.AddNode("README.md")
	lin, err := g.Linearise("card")
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{"card": "c", "docs/api.md": "api", "docs/auth.md": "auth", "README.md": "readme"}
	var ordered []Item
	for _, e := range lin[1:] {
		ordered = append(ordered, Item{ID: e.ID, Text: text[e.ID]})
	}
	r := withBudget(byLen, 9).Pack(Item{ID: "card", Text: text["card"]}, ordered)
	// 1 + 3 = 4, + 4 = 8 < 9, + 6: stop before the global README.
	if got := ids(r.Items); !slices.Equal(got, []string{"card", "docs/api.md", "docs/auth.md"}) {
		t.Fatalf("included %v", got)
	}
	if r.Dropped != "README.md" {
		t.Fatalf("dropped %q", r.Dropped)
	}
}
