package dashboard

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/card"
)

// maxBoardTasks bounds the tasks one board answer carries (each costs a
// get_task_dependencies call); the answer says when it was cut.
const maxBoardTasks = 2000

// Board is what /dashboard/api/board answers: the tasks of the repos
// asked for (all the caller may read by default), the statuses in board
// order, the dependency edges and a layered layout of the graph.
type Board struct {
	Repos    []string    `json:"repos"`
	Statuses []string    `json:"statuses"`
	Tasks    []BoardTask `json:"tasks"`
	Edges    []BoardEdge `json:"edges"`
	// Layers is the number of layers of the layout.
	Layers int `json:"layers"`
	// Truncated is true when the repos hold more than maxBoardTasks.
	Truncated bool `json:"truncated,omitempty"`
}

// BoardTask is one task on the board, with its place in the graph's
// layout: Layer 0 depends on nothing shown, each other task sits one
// layer right of its deepest dependency; Order is its row in the layer.
type BoardTask struct {
	tools.TaskSummary
	Repo      string   `json:"repo"`
	DependsOn []string `json:"depends_on"`
	Layer     int      `json:"layer"`
	Order     int      `json:"order"`
}

// BoardEdge is a dependency: task To depends on task From, both of Repo.
// Missing is true when From names no task. Via are the rows the edge
// passes through in each layer strictly between From's and To's, so that
// a long edge runs through a gap instead of across a task.
type BoardEdge struct {
	Repo    string `json:"repo"`
	From    string `json:"from"`
	To      string `json:"to"`
	Missing bool   `json:"missing,omitempty"`
	Via     []int  `json:"via,omitempty"`
}

func (a *api) board(w http.ResponseWriter, r *http.Request) {
	ctx, id := identity(r)
	var repos []string
	if a.opts.TaskRepos != nil {
		repos = mayRead(id, a.opts.TaskRepos())
	} else {
		repos = a.readableRepos(id)
	}
	if q := r.URL.Query().Get("repo"); q != "" {
		repos = []string{q} // list_tasks refuses a repo the identity may not read
	}
	b, err := a.loadBoard(ctx, repos)
	if err != nil {
		a.fail(w, r, "the task board", err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// loadBoard lists the tasks of repos and their dependencies through the
// caller. With no repos it asks for the edge's default repo, and an edge
// without one has an empty board.
func (a *api) loadBoard(ctx context.Context, repos []string) (Board, error) {
	b := Board{Repos: repos, Statuses: slices.Clone(card.Statuses), Tasks: []BoardTask{}, Edges: []BoardEdge{}}
	ask := repos
	if len(ask) == 0 {
		ask = []string{""}
	}
	for _, repo := range ask {
		list, err := tools.ListAllTasks(ctx, a.opts.Caller, tools.ListTasksArgs{Repo: repo})
		if err != nil {
			var te *tools.Error
			if repo == "" && errors.As(err, &te) && te.Code == tools.CodeInvalidParams {
				break // no repo has tasks yet
			}
			return b, err
		}
		for _, t := range list {
			if len(b.Tasks) == maxBoardTasks {
				b.Truncated = true
				break
			}
			var deps tools.TaskDependencies
			if err := a.call(ctx, tools.GetTaskDependencies, tools.GetTaskDependenciesArgs{ID: t.ID, Repo: repo}, &deps); err != nil {
				var te *tools.Error
				if errors.As(err, &te) && te.Code == tools.CodeFileNotFound {
					continue // deleted between the two calls
				}
				return b, err
			}
			bt := BoardTask{TaskSummary: t, Repo: repo, DependsOn: []string{}}
			for _, d := range deps.Tasks {
				bt.DependsOn = append(bt.DependsOn, d.ID)
				b.Edges = append(b.Edges, BoardEdge{Repo: repo, From: d.ID, To: t.ID, Missing: d.Status == "missing"})
			}
			b.Tasks = append(b.Tasks, bt)
		}
	}
	b.Layers = layout(b.Tasks, b.Edges)
	return b, nil
}
