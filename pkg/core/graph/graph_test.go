package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// build makes a graph from "A>B" edge strings and bare node names.
func build(specs ...string) *Graph {
	g := New()
	for _, s := range specs {
		var from, to string
		if n, _ := fmt.Sscanf(s, "%1s>%1s", &from, &to); n == 2 {
			g.AddEdge(from, to)
		} else {
			g.AddNode(s)
		}
	}
	return g
}

func TestCyclePath(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edges []string
		want  []string
	}{
		{"self-loop", []string{"A>A"}, []string{"A", "A"}},
		{"two-cycle", []string{"A>B", "B>A"}, []string{"A", "B", "A"}},
		{"three-cycle entered mid-way", []string{"A>B", "B>C", "C>D", "D>B"}, []string{"B", "C", "D", "B"}},
		// A is acyclic on its own; the cycle is reachable only from X,
		// which the outer loop reaches after A's whole subtree is done.
		{"cycle reachable only from a later root", []string{"A>B", "B>C", "X>Y", "Y>Z", "Z>Y"}, []string{"Y", "Z", "Y"}},
		// Children are visited ascending: from A the walk takes B before C,
		// so it finds B's loop first however the edges were added.
		{"first cycle in id order", []string{"A>C", "C>C", "A>B", "B>A"}, []string{"A", "B", "A"}},
		{"diamond is not a cycle", []string{"A>B", "A>C", "B>D", "C>D"}, nil},
		{"cross edge to a finished node is not a cycle", []string{"A>B", "C>B", "C>A"}, nil},
		{"lone nodes", []string{"A", "B"}, nil},
		{"empty", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := build(tc.edges...)
			got := g.Cycle()
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Cycle() = %v, want %v", got, tc.want)
			}
			err := g.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			var ce *CycleError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCycle) {
				t.Fatalf("Validate() = %v, want a *CycleError wrapping ErrCycle", err)
			}
			if want := "cycle detected: " + FormatPath(tc.want); err.Error() != want {
				t.Fatalf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestFormatPath(t *testing.T) {
	if got := FormatPath([]string{"A", "B", "A"}); got != "A -> B -> A" {
		t.Fatal(got)
	}
}

func TestCycleFrom(t *testing.T) {
	g := build("A>B", "X>Y", "Y>X")
	if p := g.CycleFrom("A"); p != nil {
		t.Fatalf("CycleFrom(A) = %v, want nil: the cycle is not reachable from A", p)
	}
	if p := g.CycleFrom("X"); !slices.Equal(p, []string{"X", "Y", "X"}) {
		t.Fatalf("CycleFrom(X) = %v", p)
	}
	if p := g.CycleFrom("nope"); p != nil {
		t.Fatalf("CycleFrom(unknown) = %v", p)
	}
}

func TestCycleOrderIndependentOfInsertion(t *testing.T) {
	edges := []string{"A>B", "B>C", "C>A", "B>D", "D>B", "E>E"}
	want := build(edges...).Cycle()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
		if got := build(edges...).Cycle(); !slices.Equal(got, want) {
			t.Fatalf("edges %v: Cycle() = %v, want %v", edges, got, want)
		}
	}
}

func TestDuplicateEdges(t *testing.T) {
	g := build("A>B", "A>B", "A>B")
	if got := g.Children("A"); !slices.Equal(got, []string{"B"}) {
		t.Fatalf("Children(A) = %v", got)
	}
}

func TestChildrenAndParents(t *testing.T) {
	// Tasks: xyz depends on abc and def; ghi depends on xyz.
	g := build("x>d", "x>a", "g>x")
	if got := g.Children("x"); !slices.Equal(got, []string{"a", "d"}) {
		t.Fatalf("Children(x) = %v", got)
	}
	if got := g.Parents("x"); !slices.Equal(got, []string{"g"}) {
		t.Fatalf("Parents(x) = %v", got)
	}
	if got := g.Parents("g"); got != nil {
		t.Fatalf("Parents(g) = %v", got)
	}
	if got := g.Children("zzz"); got != nil {
		t.Fatalf("Children(unknown) = %v", got)
	}
	r := g.Reverse()
	if got := r.Children("x"); !slices.Equal(got, []string{"g"}) {
		t.Fatalf("Reverse().Children(x) = %v", got)
	}
	if got := r.Parents("x"); !slices.Equal(got, []string{"a", "d"}) {
		t.Fatalf("Reverse().Parents(x) = %v", got)
	}
	if !slices.Equal(r.Nodes(), g.Nodes()) {
		t.Fatalf("Reverse().Nodes() = %v, want %v", r.Nodes(), g.Nodes())
	}
	// The reverse is a copy: changing it leaves g alone.
	r.AddEdge("a", "q")
	if g.Has("q") {
		t.Fatal("Reverse shares state with its source")
	}
}

func TestWouldCycle(t *testing.T) {
	g := build("A>B", "B>C", "C>D", "A>D", "X")
	for _, tc := range []struct {
		from, to string
		want     []string
	}{
		{"D", "A", []string{"D", "A", "D"}}, // A>D is the shortest way back
		{"C", "A", []string{"C", "A", "B", "C"}},
		{"D", "B", []string{"D", "B", "C", "D"}},
		{"B", "A", []string{"B", "A", "B"}},
		{"A", "A", []string{"A", "A"}},         // self-loop
		{"new", "new", []string{"new", "new"}}, // self-loop on a node not yet added
		{"A", "C", nil},                        // a second path forward, no cycle
		{"B", "C", nil},                        // already an edge
		{"X", "A", nil},                        // unrelated nodes
		{"C", "X", nil},
		{"A", "new", nil}, // a new node has no edges yet
		{"new", "A", nil},
	} {
		got := g.WouldCycle(tc.from, tc.to)
		if !slices.Equal(got, tc.want) {
			t.Errorf("WouldCycle(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
		// Cross-check: adding the edge makes CycleFrom(from) find a cycle.
		h := build("A>B", "B>C", "C>D", "A>D", "X")
		h.AddEdge(tc.from, tc.to)
		if (h.CycleFrom(tc.from) != nil) != (tc.want != nil) {
			t.Errorf("WouldCycle(%s, %s) disagrees with CycleFrom after adding the edge", tc.from, tc.to)
		}
	}
}

func TestLinearise(t *testing.T) {
	// card > b, a ; a > c ; b > c, d ; d > e ; g > card ; f alone.
	g := build("r>b", "r>a", "a>c", "b>c", "b>d", "d>e", "g>r", "f")
	got, err := g.Linearise("r")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"r", Root, 0},
		{"a", Direct, 1},
		{"b", Direct, 1},
		{"c", Indirect, 2}, // found through a, before b's children
		{"d", Indirect, 2},
		{"e", Indirect, 3},
		{"f", Global, -1}, // not reachable: ascending by id
		{"g", Global, -1}, // a parent of the root is still global
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Linearise(r) =\n%v\nwant\n%v", got, want)
	}
	if _, err := g.Linearise("nope"); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("Linearise(unknown) error = %v, want ErrNodeNotFound", err)
	}
}

func TestLineariseShortestDepthWins(t *testing.T) {
	// e is both a grandchild (r>a>e) and a child (r>e): it is Direct, once.
	g := build("r>a", "a>e", "r>e")
	got, _ := g.Linearise("r")
	want := []Entry{{"r", Root, 0}, {"a", Direct, 1}, {"e", Direct, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestLineariseTerminatesOnCycle(t *testing.T) {
	g := build("r>a", "a>r", "a>a")
	got, _ := g.Linearise("r")
	want := []Entry{{"r", Root, 0}, {"a", Direct, 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestClassString(t *testing.T) {
	for c, want := range map[Class]string{Root: "root", Direct: "direct", Indirect: "indirect", Global: "global", Class(9): "unknown"} {
		if c.String() != want {
			t.Errorf("%d.String() = %q", int(c), c.String())
		}
	}
}

func id(i int) string { return fmt.Sprintf("n%06d", i) }

// chain builds n0 → n1 → … → n(n-1).
func chain(n int) *Graph {
	g := New()
	for i := 1; i < n; i++ {
		g.AddEdge(id(i-1), id(i))
	}
	return g
}

// randomDAG has n nodes and about deg·n edges, each from a node to one of
// the next 64, so it is acyclic by construction and n000000 reaches nearly
// every node, at depths in the thousands: a stress for both walks.
func randomDAG(n, deg int, seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, seed))
	g := New()
	for i := range n {
		g.AddNode(id(i))
		for range min(deg, n-1-i) {
			g.AddEdge(id(i), id(i+1+rng.IntN(min(64, n-1-i))))
		}
	}
	return g
}

func TestLongChain(t *testing.T) {
	const n = 100_000
	g := chain(n)
	if p := g.Cycle(); p != nil {
		t.Fatalf("chain reported a cycle of length %d", len(p))
	}
	lin, err := g.Linearise(id(0))
	if err != nil || len(lin) != n || lin[n-1].Depth != n-1 {
		t.Fatalf("Linearise: %d entries, err %v", len(lin), err)
	}
	// Close the chain: the cycle is all of it.
	g.AddEdge(id(n-1), id(0))
	p := g.Cycle()
	if len(p) != n+1 || p[0] != id(0) || p[n-1] != id(n-1) || p[n] != id(0) {
		t.Fatalf("closed chain: cycle of length %d from %v to %v", len(p), p[0], p[len(p)-1])
	}
	if w := g.WouldCycle(id(n-1), id(0)); len(w) != n+1 {
		t.Fatalf("WouldCycle on closed chain: length %d", len(w))
	}
}

func TestLargeRandomDAG(t *testing.T) {
	const n = 100_000
	g := randomDAG(n, 3, 7)
	if p := g.Cycle(); p != nil {
		t.Fatalf("DAG reported cycle %v", p)
	}
	lin, err := g.Linearise(id(0))
	if err != nil || len(lin) != n {
		t.Fatalf("Linearise: %d entries, err %v", len(lin), err)
	}
	// A back edge from the deepest descendant of n000000 closes a cycle;
	// the reported path is made of real edges.
	last := lin[0]
	for _, e := range lin {
		if e.Class != Global {
			last = e
		}
	}
	if last.Depth < 2 {
		t.Fatalf("sample too shallow: deepest descendant at depth %d", last.Depth)
	}
	g.AddEdge(last.ID, id(0))
	p := g.Cycle()
	assertCycle(t, g, p)
}

// assertCycle fails unless p is a simple cycle made of edges of g.
func assertCycle(t testing.TB, g *Graph, p []string) {
	t.Helper()
	if len(p) < 2 || p[0] != p[len(p)-1] {
		t.Fatalf("path %v does not start and end with the same node", p)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(p); i++ {
		if seen[p[i]] {
			t.Fatalf("path %v repeats %s", p, p[i])
		}
		seen[p[i]] = true
		if !slices.Contains(g.Children(p[i]), p[i+1]) {
			t.Fatalf("path %v uses %s -> %s, which is not an edge", p, p[i], p[i+1])
		}
	}
}

func TestConcurrentReaders(t *testing.T) {
	g := randomDAG(2000, 3, 3)
	done := make(chan []string)
	for range 8 {
		go func() { done <- g.Nodes() }()
	}
	first := <-done
	for range 7 {
		if got := <-done; !slices.Equal(got, first) {
			t.Fatal("concurrent readers saw different orders")
		}
	}
}
