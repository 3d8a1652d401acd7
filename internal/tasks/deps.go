package tasks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cuedeck/cuedeck/pkg/core/graph"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// MissingDependencyError reports dependencies that name no task of the repo.
type MissingDependencyError struct {
	TaskID  string
	Missing []string
}

func (e *MissingDependencyError) Error() string {
	return fmt.Sprintf("tasks: %s depends on unknown tasks %s", e.TaskID, strings.Join(e.Missing, ", "))
}

// Graph builds the dependency graph of tasks: an edge a → b when a depends
// on b. skip names a task whose edges are left out (the one being changed);
// empty leaves none out.
func Graph(tasks map[string]events.Task, skip string) *graph.Graph {
	g := graph.New()
	for id, t := range tasks {
		g.AddNode(id)
		if id == skip {
			continue
		}
		for _, d := range t.DependsOn {
			g.AddEdge(id, d)
		}
	}
	return g
}

// CheckDependencies checks that task id may depend on deps given the repo's
// current tasks: every dependency exists (else *MissingDependencyError) and
// no dependency closes a cycle (else *graph.CycleError whose path starts and
// ends with id). id need not exist yet.
func CheckDependencies(current map[string]events.Task, id string, deps []string) error {
	var missing []string
	for _, d := range deps {
		if _, ok := current[d]; !ok && d != id {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		return &MissingDependencyError{TaskID: id, Missing: missing}
	}
	sorted := slices.Clone(deps)
	slices.Sort(sorted)
	for _, d := range sorted {
		if p := pathBack(current, id, d); p != nil {
			return &graph.CycleError{Path: p}
		}
	}
	return nil
}

// pathBack returns the cycle that the edge id → d would close, [id d … id],
// or nil. It is graph.WouldCycle without building the graph: a
// breadth-first search from d along depends_on (children in ascending
// order, id's own current edges left out since they are being replaced),
// which touches only the tasks d reaches. A dependency check on a 10k-task
// board therefore costs what d's ancestry costs, not the board.
func pathBack(current map[string]events.Task, id, d string) []string {
	if d == id {
		return []string{id, id}
	}
	prev := map[string]string{d: ""}
	queue := []string{d}
	var kids []string
	for head := 0; head < len(queue); head++ {
		n := queue[head]
		if n == id {
			continue
		}
		kids = append(kids[:0], current[n].DependsOn...)
		slices.Sort(kids)
		for _, c := range kids {
			if _, seen := prev[c]; seen {
				continue
			}
			prev[c] = n
			if c == id {
				back := []string{id}
				for x := n; x != ""; x = prev[x] {
					back = append(back, x)
				}
				// back is [id … d]: the way from d to id, read backwards.
				slices.Reverse(back[1:])
				return append(append([]string{id}, back[1:]...), id)
			}
			queue = append(queue, c)
		}
	}
	return nil
}
