package graph

// Class is a node's priority class in a linearised scene (seed 000 §1.2).
type Class int

const (
	// Root is the active card.
	Root Class = iota
	// Direct nodes are the root's children (depth 1).
	Direct
	// Indirect nodes are reachable from the root at depth 2 or more.
	Indirect
	// Global nodes are not reachable from the root: siblings and global
	// docs, included only if space permits.
	Global
)

func (c Class) String() string {
	switch c {
	case Root:
		return "root"
	case Direct:
		return "direct"
	case Indirect:
		return "indirect"
	case Global:
		return "global"
	}
	return "unknown"
}

// Entry is one node of a linearisation.
type Entry struct {
	ID    string
	Class Class
	// Depth is the length of the shortest path from the root, or -1 for a
	// Global node.
	Depth int
}

// Linearise orders every node for a scene rooted at root: the root, then its
// children, then the rest of its descendants by breadth-first depth, then
// every node the root does not reach. Within a depth, nodes come in
// breadth-first discovery order (children of earlier nodes first, each
// node's children ascending by id), which keeps a node near its parent;
// Global nodes come ascending by id.
//
// Linearise does not look for cycles: a node is placed at its shortest
// depth and visited once, so it terminates on any graph. `cue scene` calls
// Validate first because the seed's policy is to fail on a cycle.
//
// If root is not a node, ErrNodeNotFound is returned.
func (g *Graph) Linearise(root string) ([]Entry, error) {
	r, ok := g.index[root]
	if !ok {
		return nil, ErrNodeNotFound
	}
	g.prepare()
	depth := make([]int32, len(g.names))
	for i := range depth {
		depth[i] = -1
	}
	out := make([]Entry, 0, len(g.names))
	depth[r] = 0
	queue := []int32{r}
	for head := 0; head < len(queue); head++ {
		n := queue[head]
		out = append(out, Entry{ID: g.names[n], Class: classOf(depth[n]), Depth: int(depth[n])})
		for _, c := range g.out[n] {
			if depth[c] == -1 {
				depth[c] = depth[n] + 1
				queue = append(queue, c)
			}
		}
	}
	for _, n := range g.order {
		if depth[n] == -1 {
			out = append(out, Entry{ID: g.names[n], Class: Global, Depth: -1})
		}
	}
	return out, nil
}

func classOf(depth int32) Class {
	switch depth {
	case 0:
		return Root
	case 1:
		return Direct
	}
	return Indirect
}
