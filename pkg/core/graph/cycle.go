package graph

import "slices"

// Cycle returns a cycle of the graph as a path that starts and ends with the
// same node, or nil if the graph is acyclic.
//
// It is seed 000 §1.1's depth-first search with a recursion stack, started
// from every unvisited node in ascending order and visiting children in
// ascending order; the first child found on the stack closes the cycle. The
// path therefore starts at the earliest-visited node of that cycle.
func (g *Graph) Cycle() []string {
	g.prepare()
	return g.findCycle(g.order)
}

// CycleFrom returns a cycle reachable from root, or nil if none is (or root
// is not a node). validate_task_graph uses it when asked about one task.
func (g *Graph) CycleFrom(root string) []string {
	i, ok := g.index[root]
	if !ok {
		return nil
	}
	g.prepare()
	return g.findCycle([]int32{i})
}

// Validate returns a *CycleError (wrapping ErrCycle) for the cycle Cycle
// finds, or nil if the graph is acyclic.
func (g *Graph) Validate() error {
	if p := g.Cycle(); p != nil {
		return &CycleError{Path: p}
	}
	return nil
}

const (
	unvisited uint8 = iota
	onStack
	done
)

// findCycle is the seed's has_cycle with the call stack made explicit: each
// frame is a node and the index of the next child to try.
func (g *Graph) findCycle(roots []int32) []string {
	state := make([]uint8, len(g.names))
	depth := make([]int32, len(g.names)) // a node's index in stack while onStack
	type frame struct{ node, next int32 }
	var stack []frame
	for _, r := range roots {
		if state[r] != unvisited {
			continue
		}
		state[r], depth[r] = onStack, 0
		stack = append(stack[:0], frame{node: r})
		for len(stack) > 0 {
			top := len(stack) - 1
			f := stack[top]
			kids := g.out[f.node]
			if int(f.next) == len(kids) {
				state[f.node] = done
				stack = stack[:top]
				continue
			}
			c := kids[f.next]
			stack[top].next++
			switch state[c] {
			case unvisited:
				state[c], depth[c] = onStack, int32(len(stack))
				stack = append(stack, frame{node: c})
			case onStack:
				path := make([]string, 0, len(stack)-int(depth[c])+1)
				for _, fr := range stack[depth[c]:] {
					path = append(path, g.names[fr.node])
				}
				return append(path, g.names[c])
			}
		}
	}
	return nil
}

// WouldCycle reports whether adding the edge from → to would close a cycle,
// and if so returns it: [from to … from], the shortest way back from to to
// from (ties broken by ascending ids), or [from from] for a self-loop. It
// ignores cycles that already exist and do not pass through the new edge;
// Validate finds those. create_task and update_task call it per new
// dependency before writing.
func (g *Graph) WouldCycle(from, to string) []string {
	if from == to {
		return []string{from, from}
	}
	f, ok1 := g.index[from]
	t, ok2 := g.index[to]
	if !ok1 || !ok2 {
		return nil // a new node has no edges yet, so nothing leads back
	}
	g.prepare()
	// Breadth-first from to, looking for from.
	prev := make([]int32, len(g.names))
	for i := range prev {
		prev[i] = -1
	}
	prev[t] = t
	queue := []int32{t}
	for head := 0; head < len(queue); head++ {
		n := queue[head]
		for _, c := range g.out[n] {
			if prev[c] != -1 {
				continue
			}
			prev[c] = n
			if c == f {
				back := []string{g.names[f]}
				for x := f; x != t; x = prev[x] {
					back = append(back, g.names[prev[x]])
				}
				back = append(back, g.names[f])
				// back is [from … to from] read backwards from from; turn
				// the middle round so the path follows the edges.
				slices.Reverse(back[1 : len(back)-1])
				return back
			}
			queue = append(queue, c)
		}
	}
	return nil
}
