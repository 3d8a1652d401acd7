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
	if len(deps) == 0 {
		return nil
	}
	g := Graph(current, id)
	sorted := slices.Clone(deps)
	slices.Sort(sorted)
	for _, d := range sorted {
		if p := g.WouldCycle(id, d); p != nil {
			return &graph.CycleError{Path: p}
		}
	}
	return nil
}
