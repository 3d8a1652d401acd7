package dashboard

import (
	"fmt"
	"testing"

	"github.com/cuedeck/cuedeck/internal/tools"
)

func task(id string, deps ...string) BoardTask {
	if deps == nil {
		deps = []string{}
	}
	return BoardTask{TaskSummary: tools.TaskSummary{ID: id, Title: id}, Repo: "app", DependsOn: deps}
}

func edgesOf(tasks []BoardTask) []BoardEdge {
	var out []BoardEdge
	for _, t := range tasks {
		for _, d := range t.DependsOn {
			out = append(out, BoardEdge{Repo: t.Repo, From: d, To: t.ID})
		}
	}
	return out
}

// Every task and every placeholder of a long edge gets a slot of its own,
// and a long edge passes through its layers beside the tasks, not across.
func TestLayoutGivesLongEdgesTheirOwnRows(t *testing.T) {
	tasks := []BoardTask{
		task("docs01", "wireui"),
		task("logapi", "schema"),
		task("perf01"),
		task("schema"),
		task("wireui", "logapi", "schema"),
		task("orphan", "ghost9"), // a missing dependency
	}
	edges := edgesOf(tasks)
	layers := layout(tasks, edges)
	if layers != 4 {
		t.Fatalf("layers = %d, want 4", layers)
	}
	at := map[string]BoardTask{}
	slot := map[string]string{}
	for _, tk := range tasks {
		at[tk.ID] = tk
		s := fmt.Sprint(tk.Layer, "/", tk.Order)
		if other, ok := slot[s]; ok {
			t.Errorf("%s and %s share layer/row %s", tk.ID, other, s)
		}
		slot[s] = tk.ID
	}
	for id, want := range map[string]int{"schema": 0, "perf01": 0, "orphan": 0, "logapi": 1, "wireui": 2, "docs01": 3} {
		if at[id].Layer != want {
			t.Errorf("%s in layer %d, want %d", id, at[id].Layer, want)
		}
	}
	for _, e := range edges {
		span := at[e.To].Layer - at[e.From].Layer
		if e.From == "ghost9" {
			if e.Via != nil {
				t.Errorf("missing dependency routed: %+v", e)
			}
			continue
		}
		if len(e.Via) != max(span-1, 0) {
			t.Errorf("edge %s→%s spans %d layers but has via %v", e.From, e.To, span, e.Via)
		}
		for k, row := range e.Via {
			s := fmt.Sprint(at[e.From].Layer+1+k, "/", row)
			if id, ok := slot[s]; ok {
				t.Errorf("edge %s→%s runs across %s at %s", e.From, e.To, id, s)
			}
		}
	}
}

func TestLayoutSurvivesACycle(t *testing.T) {
	tasks := []BoardTask{task("aaaaaa", "bbbbbb"), task("bbbbbb", "aaaaaa")}
	if layers := layout(tasks, edgesOf(tasks)); layers < 1 || layers > 2 {
		t.Errorf("layers = %d", layers)
	}
}
