// Package graph is the context DAG of seed 000 §1: a directed graph of string
// node ids (doc paths, task card ids) with cycle detection that names the
// cycle, and the depth-priority linearisation a scene is packed from. The task
// tools use it to validate dependencies (create_task, update_task,
// validate_task_graph) and to answer forward and reverse dependency queries
// (get_task_dependencies); `cue scene` and get_scene use it to order
// documents before pruning them to a token budget.
//
// # Determinism
//
// Every walk visits nodes, and each node's children, in ascending byte order
// of their ids, whatever order they were added in. Results therefore depend
// only on the set of nodes and edges: two edges that replay the same records
// in a different order report the same cycle and the same scene. Insertion
// order was rejected because the records reach an edge from KV watches whose
// order is not part of any contract.
//
// # Depth
//
// Walks use an explicit stack or queue, never recursion, so a chain of a
// hundred thousand cards costs memory proportional to its length and nothing
// more.
//
// The package is pure: no I/O, no infrastructure.
package graph

import (
	"errors"
	"slices"
	"strings"
	"sync"
)

// ErrNodeNotFound is returned when an operation names a node the graph does
// not hold.
var ErrNodeNotFound = errors.New("graph: node not found")

// ErrCycle is what every *CycleError wraps, for errors.Is.
var ErrCycle = errors.New("cycle detected")

// CycleError reports a cycle. The task tools map it to error 1002, whose
// data field cycle_path is Path.
type CycleError struct {
	// Path starts and ends with the same node: [A B A], or [A A] for a
	// self-loop. Each consecutive pair is an edge of the graph.
	Path []string
}

// Error returns "cycle detected: A -> B -> A".
func (e *CycleError) Error() string { return "cycle detected: " + FormatPath(e.Path) }

// Unwrap returns ErrCycle.
func (e *CycleError) Unwrap() error { return ErrCycle }

// FormatPath joins a cycle path the way seed 000 §1.1 prints it: "A -> B -> A".
func FormatPath(path []string) string { return strings.Join(path, " -> ") }

// Graph is a directed graph of string ids. Edges are deduplicated; self-loops
// are allowed (and are cycles). The zero value is an empty graph ready to use.
//
// AddNode and AddEdge need exclusive access; the other methods only read and
// may be called from several goroutines at once.
type Graph struct {
	index map[string]int32
	names []string
	out   [][]int32 // children, sorted by id and deduplicated once prepared
	in    [][]int32 // parents, likewise

	// mu guards the lazy preparation below, which readers share.
	mu    sync.Mutex
	dirty bool
	order []int32 // all nodes, ascending by id
}

// New returns an empty graph.
func New() *Graph { return &Graph{} }

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.names) }

// Has reports whether id is a node.
func (g *Graph) Has(id string) bool {
	_, ok := g.index[id]
	return ok
}

// AddNode adds id as a node if it is not one already.
func (g *Graph) AddNode(id string) { g.node(id) }

// AddEdge adds the edge from → to, adding either node as needed. For tasks
// the edge reads "from depends on to"; for documents, "from links to to".
func (g *Graph) AddEdge(from, to string) {
	f, t := g.node(from), g.node(to)
	g.out[f] = append(g.out[f], t)
	g.in[t] = append(g.in[t], f)
	g.dirty = true
}

func (g *Graph) node(id string) int32 {
	if i, ok := g.index[id]; ok {
		return i
	}
	if g.index == nil {
		g.index = make(map[string]int32)
	}
	i := int32(len(g.names))
	g.index[id] = i
	g.names = append(g.names, id)
	g.out = append(g.out, nil)
	g.in = append(g.in, nil)
	g.dirty = true
	return i
}

// prepare sorts node order and adjacency by id once per batch of mutations,
// so walks are deterministic without paying for it on every AddEdge.
func (g *Graph) prepare() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.dirty && len(g.order) == len(g.names) {
		return
	}
	order := make([]int32, len(g.names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(g.names[a], g.names[b]) })
	rank := make([]int32, len(order))
	for r, i := range order {
		rank[i] = int32(r)
	}
	byRank := func(a, b int32) int { return int(rank[a] - rank[b]) }
	for i := range g.out {
		slices.SortFunc(g.out[i], byRank)
		g.out[i] = slices.Compact(g.out[i])
		slices.SortFunc(g.in[i], byRank)
		g.in[i] = slices.Compact(g.in[i])
	}
	g.order = order
	g.dirty = false
}

func (g *Graph) ids(is []int32) []string {
	if len(is) == 0 {
		return nil
	}
	out := make([]string, len(is))
	for k, i := range is {
		out[k] = g.names[i]
	}
	return out
}

// Nodes returns every node id in ascending order.
func (g *Graph) Nodes() []string {
	g.prepare()
	return g.ids(g.order)
}

// Children returns the targets of id's edges in ascending order: a task's
// dependencies, a document's links. It returns nil for an unknown id.
func (g *Graph) Children(id string) []string {
	i, ok := g.index[id]
	if !ok {
		return nil
	}
	g.prepare()
	return g.ids(g.out[i])
}

// Parents returns the sources of the edges into id in ascending order: a
// task's dependents (get_task_dependencies with reverse set). It returns nil
// for an unknown id.
func (g *Graph) Parents(id string) []string {
	i, ok := g.index[id]
	if !ok {
		return nil
	}
	g.prepare()
	return g.ids(g.in[i])
}

// Reverse returns a new graph with the same nodes and every edge turned
// around, for walks over dependents.
func (g *Graph) Reverse() *Graph {
	g.prepare()
	r := &Graph{
		index: make(map[string]int32, len(g.names)),
		names: slices.Clone(g.names),
		out:   make([][]int32, len(g.names)),
		in:    make([][]int32, len(g.names)),
		dirty: true,
	}
	for id, i := range g.index {
		r.index[id] = i
	}
	for i := range g.names {
		r.out[i] = slices.Clone(g.in[i])
		r.in[i] = slices.Clone(g.out[i])
	}
	return r
}
