package graph

import (
	"fmt"
	"slices"
	"testing"
)

// reference is seed 000 §1.1's has_cycle, recursive and unoptimised, on an
// adjacency map: the oracle for the iterative search.
type reference map[string][]string

func (r reference) hasCycleFrom(node string, visited, stack map[string]bool) bool {
	visited[node] = true
	stack[node] = true
	for _, child := range r[node] {
		if !visited[child] {
			if r.hasCycleFrom(child, visited, stack) {
				return true
			}
		} else if stack[child] {
			return true
		}
	}
	delete(stack, node)
	return false
}

func (r reference) hasCycle(roots []string) bool {
	visited := map[string]bool{}
	for _, n := range roots {
		if !visited[n] && r.hasCycleFrom(n, visited, map[string]bool{}) {
			return true
		}
	}
	return false
}

// fromBytes reads a small graph: the first byte sets the node count (1–8),
// each following pair of bytes an edge.
func fromBytes(data []byte) (*Graph, reference, []string) {
	if len(data) == 0 {
		return New(), reference{}, nil
	}
	n := int(data[0])%8 + 1
	g, ref := New(), reference{}
	var nodes []string
	for i := range n {
		name := fmt.Sprintf("v%d", i)
		g.AddNode(name)
		nodes = append(nodes, name)
	}
	for i := 1; i+1 < len(data); i += 2 {
		from, to := nodes[int(data[i])%n], nodes[int(data[i+1])%n]
		g.AddEdge(from, to)
		ref[from] = append(ref[from], to)
	}
	return g, ref, nodes
}

// FuzzCycle checks the iterative search against the recursive reference:
// a cycle is reported iff the reference finds one, from the whole graph and
// from each node, and every reported path is a real simple cycle. It checks
// WouldCycle the same way on acyclic graphs.
func FuzzCycle(f *testing.F) {
	f.Add([]byte{1, 0, 0})                   // self-loop
	f.Add([]byte{2, 0, 1, 1, 0})             // 2-cycle
	f.Add([]byte{4, 0, 1, 0, 2, 1, 3, 2, 3}) // diamond
	f.Add([]byte{5, 0, 1, 3, 4, 4, 3})       // cycle only from a later root
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			return
		}
		g, ref, nodes := fromBytes(data)
		p := g.Cycle()
		if want := ref.hasCycle(nodes); (p != nil) != want {
			t.Fatalf("Cycle() = %v, reference says cycle=%v", p, want)
		}
		if p != nil {
			assertCycle(t, g, p)
		}
		for _, n := range nodes {
			p := g.CycleFrom(n)
			if want := ref.hasCycle([]string{n}); (p != nil) != want {
				t.Fatalf("CycleFrom(%s) = %v, reference says cycle=%v", n, p, want)
			}
			if p != nil {
				assertCycle(t, g, p)
			}
		}
		if g.Cycle() != nil {
			return
		}
		for _, from := range nodes {
			for _, to := range nodes {
				p := g.WouldCycle(from, to)
				with := reference{}
				for k, v := range ref {
					with[k] = slices.Clone(v)
				}
				with[from] = append(with[from], to)
				if want := with.hasCycle(nodes); (p != nil) != want {
					t.Fatalf("WouldCycle(%s, %s) = %v, reference with the edge says cycle=%v", from, to, p, want)
				}
				if p == nil {
					continue
				}
				if p[0] != from || p[1] != to {
					t.Fatalf("WouldCycle(%s, %s) = %v does not start with the new edge", from, to, p)
				}
				h, _, _ := fromBytes(data)
				h.AddEdge(from, to)
				assertCycle(t, h, p)
			}
		}
	})
}
