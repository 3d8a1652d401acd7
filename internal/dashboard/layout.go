package dashboard

import (
	"cmp"
	"slices"
)

// sweeps is how many down-and-up passes of barycentre ordering layout
// makes; a few settle small graphs.
const sweeps = 4

// layout places tasks in layers, left to right, and returns the number
// of layers. It is a plain Sugiyama layout:
//
//  1. a task without shown dependencies is in layer 0, any other one
//     layer after its deepest dependency (the longest path);
//  2. an edge spanning several layers gets a placeholder in each layer it
//     crosses, so that it is drawn through a gap;
//  3. rows are ordered by the mean row of each node's neighbours in the
//     previous layer, then the next, a few times over (barycentre
//     heuristic), starting from repo and id order.
//
// It sets each task's Layer and Order and each edge's Via. The task graph
// is acyclic (the edge refuses cycles); a cycle would be broken where the
// walk re-enters it.
func layout(tasks []BoardTask, edges []BoardEdge) int {
	type key struct{ repo, id string }
	idx := make(map[key]int, len(tasks))
	for i, t := range tasks {
		idx[key{t.Repo, t.ID}] = i
	}
	const (
		unseen = iota
		visiting
		done
	)
	state := make([]int, len(tasks))
	var place func(i int) int
	place = func(i int) int {
		switch state[i] {
		case done:
			return tasks[i].Layer
		case visiting:
			return -1 // a cycle: this edge does not push the layer
		}
		state[i] = visiting
		layer := 0
		for _, d := range tasks[i].DependsOn {
			if j, ok := idx[key{tasks[i].Repo, d}]; ok {
				layer = max(layer, place(j)+1)
			}
		}
		state[i] = done
		tasks[i].Layer = layer
		return layer
	}
	layers := 0
	for i := range tasks {
		layers = max(layers, place(i)+1)
	}

	// Nodes 0..len(tasks)-1 are the tasks; placeholders follow.
	type node struct {
		layer       int
		preds, succ []int
	}
	nodes := make([]node, len(tasks), len(tasks)+len(edges))
	for i, t := range tasks {
		nodes[i].layer = t.Layer
	}
	chains := make([][]int, len(edges)) // placeholders of each edge
	link := func(a, b int) {
		nodes[a].succ = append(nodes[a].succ, b)
		nodes[b].preds = append(nodes[b].preds, a)
	}
	for e, ed := range edges {
		from, ok1 := idx[key{ed.Repo, ed.From}]
		to, ok2 := idx[key{ed.Repo, ed.To}]
		if !ok1 || !ok2 || tasks[from].Layer >= tasks[to].Layer {
			continue
		}
		prev := from
		for l := tasks[from].Layer + 1; l < tasks[to].Layer; l++ {
			nodes = append(nodes, node{layer: l})
			n := len(nodes) - 1
			chains[e] = append(chains[e], n)
			link(prev, n)
			prev = n
		}
		link(prev, to)
	}

	byLayer := make([][]int, layers)
	for n, nd := range nodes {
		byLayer[nd.layer] = append(byLayer[nd.layer], n)
	}
	pos := make([]int, len(nodes))
	for _, members := range byLayer {
		slices.SortStableFunc(members, func(x, y int) int {
			if x >= len(tasks) || y >= len(tasks) {
				return cmp.Compare(x, y) // placeholders after tasks, in edge order
			}
			if c := cmp.Compare(tasks[x].Repo, tasks[y].Repo); c != 0 {
				return c
			}
			return cmp.Compare(tasks[x].ID, tasks[y].ID)
		})
		for row, n := range members {
			pos[n] = row
		}
	}
	order := func(l int, neighbours func(n int) []int) {
		members := byLayer[l]
		weight := make(map[int]float64, len(members))
		for _, n := range members {
			sum, k := 0.0, 0
			for _, m := range neighbours(n) {
				sum += float64(pos[m])
				k++
			}
			if k > 0 {
				weight[n] = sum / float64(k)
			} else {
				weight[n] = float64(pos[n]) // stays about where it is
			}
		}
		slices.SortStableFunc(members, func(x, y int) int { return cmp.Compare(weight[x], weight[y]) })
		for row, n := range members {
			pos[n] = row
		}
	}
	for range sweeps {
		for l := 1; l < layers; l++ {
			order(l, func(n int) []int { return nodes[n].preds })
		}
		for l := layers - 2; l >= 0; l-- {
			order(l, func(n int) []int { return nodes[n].succ })
		}
	}
	for i := range tasks {
		tasks[i].Order = pos[i]
	}
	for e, chain := range chains {
		if len(chain) == 0 {
			continue
		}
		edges[e].Via = make([]int, len(chain))
		for k, n := range chain {
			edges[e].Via[k] = pos[n]
		}
	}
	return layers
}
