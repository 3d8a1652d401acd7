package graph

import (
	"slices"
	"testing"
)

func TestOrderWithinDepthKeepsTheDepthPriority(t *testing.T) {
	g := New()
	for _, e := range [][2]string{{"root", "a"}, {"root", "b"}, {"root", "c"}, {"a", "deep"}, {"b", "deeper"}} {
		g.AddEdge(e[0], e[1])
	}
	g.AddNode("global1")
	g.AddNode("global2")
	order, err := g.Linearise("root")
	if err != nil {
		t.Fatal(err)
	}
	ids := func(es []Entry) []string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.ID
		}
		return out
	}
	if got := ids(order); !slices.Equal(got, []string{"root", "a", "b", "c", "deep", "deeper", "global1", "global2"}) {
		t.Fatalf("linearisation %q", got)
	}
	// deep and global2 are the most important of all, yet stay at their
	// depth; c beats a, b among the direct nodes; deeper beats deep.
	score := map[string]float64{"c": 0.6, "a": 0.2, "deep": 0.9, "deeper": 0.95, "global2": 1}
	OrderWithinDepth(order, func(id string) float64 { return score[id] })
	if got := ids(order); !slices.Equal(got, []string{"root", "c", "a", "b", "deeper", "deep", "global2", "global1"}) {
		t.Fatalf("ordered %q", got)
	}
	for i, e := range order {
		if i > 0 && e.Class < order[i-1].Class {
			t.Fatalf("class order broken at %d: %v", i, order)
		}
	}
	// Without scores nothing moves.
	order, _ = g.Linearise("root")
	OrderWithinDepth(order, func(string) float64 { return 0 })
	if got := ids(order); !slices.Equal(got, []string{"root", "a", "b", "c", "deep", "deeper", "global1", "global2"}) {
		t.Fatalf("zero scores moved nodes: %q", got)
	}
}
