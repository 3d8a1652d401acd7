package prune

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Task is one todo of the agent's list, as its latest todowrite left it.
type Task struct {
	ID      string // the todo's id, or its content when it has none
	Content string
	Status  string
	// InProgressSince is the turn the task last went in_progress; zero
	// unless Status is in_progress.
	InProgressSince int
}

// InProgress reports whether the task is being worked on.
func (t Task) InProgress() bool { return t.Status == string(StatusInProgress) }

// TodoState is the todo list after the latest completed todowrite.
type TodoState struct {
	Tasks []Task
	// LastWriteTurn is the turn of the latest completed todowrite; zero
	// (the start of the conversation) when there was none.
	LastWriteTurn int
}

// trackTodos replays the completed todowrite calls in order, comparing each
// list with the previous one: a task that goes in_progress gets
// InProgressSince = the turn of that todowrite, a task that stays
// in_progress keeps its turn, and a task that leaves in_progress loses it.
func (p *Pruner) trackTodos(calls []ToolCall) TodoState {
	var st TodoState
	since := map[string]int{}
	for i := range calls {
		c := &calls[i]
		if c.Status != StatusCompleted || p.roles[c.Tool] != roleTodoWrite {
			continue
		}
		tasks := p.cfg.Tools.parseTodos(c.Params)
		next := make(map[string]int, len(tasks))
		for k := range tasks {
			t := &tasks[k]
			if !t.InProgress() {
				continue
			}
			if s, ok := since[t.ID]; ok {
				t.InProgressSince = s
			} else {
				t.InProgressSince = c.Turn
			}
			next[t.ID] = t.InProgressSince
		}
		since = next
		st = TodoState{Tasks: tasks, LastWriteTurn: c.Turn}
	}
	return st
}

// parseTodos reads the todo list of a todowrite's params: a JSON array of
// objects, or a string holding one. Entries that are not objects are
// skipped.
func (t Tools) parseTodos(params map[string]any) []Task {
	var items []any
	switch v := params[t.TodosParam].(type) {
	case []any:
		items = v
	case []map[string]any:
		for _, m := range v {
			items = append(items, m)
		}
	case string:
		if json.Unmarshal([]byte(v), &items) != nil {
			return nil
		}
	}
	tasks := make([]Task, 0, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		task := Task{Content: str(m[t.TodoContentField]), Status: str(m[t.TodoStatusField])}
		switch id := m[t.TodoIDField].(type) {
		case string:
			task.ID = id
		case float64, int, json.Number:
			task.ID = fmt.Sprint(id)
		}
		if task.ID == "" {
			task.ID = task.Content
		}
		tasks = append(tasks, task)
	}
	return tasks
}

// StuckTurns returns how long the longest-running in_progress task has been
// in progress at currentTurn, and whether that reaches stuckTaskTurns.
func StuckTurns(tasks []Task, currentTurn, stuckTaskTurns int) (turns int, stuck bool) {
	found := false
	for _, t := range tasks {
		if !t.InProgress() {
			continue
		}
		if d := currentTurn - t.InProgressSince; !found || d > turns {
			turns, found = d, true
		}
	}
	return turns, found && turns >= stuckTaskTurns
}

// StuckGuidance is the seed's task breakdown suggestion for a task in
// progress for n turns; todoTool names the todowrite tool the agent has
// ("todowrite" in the seed's naming).
func StuckGuidance(n int, todoTool string) string {
	return fmt.Sprintf("⚠️ **Task Breakdown Suggestion**\n"+
		"A task has been in progress for %d turns. If you're finding it difficult to complete, consider:\n"+
		"- Breaking it into smaller, more specific subtasks\n"+
		"- Identifying blockers or dependencies that need resolution first\n"+
		"- Marking it as blocked and moving to another task\n"+
		"\n"+
		"Use `%s` to split the task or update its status.", n, todoTool)
}

// ReminderDue reports whether the todo reminder is due at currentTurn, the
// last todowrite having been at lastWriteTurn (zero if none): after
// InitialTurns turns without a todowrite, then every RepeatTurns turns until
// the next todowrite. With the defaults and a todowrite at turn 0 it is due
// at turns 8, 12, 16 and so on.
func (p *Pruner) ReminderDue(lastWriteTurn, currentTurn int) bool {
	c := p.cfg.TodoReminder
	if c.Disabled {
		return false
	}
	n := currentTurn - lastWriteTurn
	switch {
	case n < c.InitialTurns:
		return false
	case n == c.InitialTurns:
		return true
	}
	return (n-c.InitialTurns)%c.RepeatTurns == 0
}

// TodoReminder builds the todo reminder for currentTurn from st, with the
// stuck-task guidance when a task has been in_progress for StuckTaskTurns
// or more ({N} is the longest such run). It builds it whether or not the
// reminder is due; ask ReminderDue first.
func (p *Pruner) TodoReminder(st TodoState, currentTurn int) Reminder {
	tool := "todowrite"
	if len(p.cfg.Tools.TodoWrite) > 0 {
		tool = p.cfg.Tools.TodoWrite[0]
	}
	var b strings.Builder
	b.WriteString("🔖 **Todo Reminder**\n")
	if st.LastWriteTurn == 0 && len(st.Tasks) == 0 {
		fmt.Fprintf(&b, "You have no todo list yet. Use `%s` to plan the work and track it.", tool)
	} else {
		fmt.Fprintf(&b, "Your todo list was last updated %d turns ago. "+
			"Use `%s` to mark finished tasks completed and the task you are on in_progress.",
			currentTurn-st.LastWriteTurn, tool)
	}
	var open []string
	for _, t := range st.Tasks {
		if t.Status != string(StatusCompleted) && t.Status != "cancelled" {
			open = append(open, fmt.Sprintf("- [%s] %s", t.Status, t.Content))
		}
	}
	if len(open) > 0 {
		b.WriteString("\nOpen tasks:\n" + strings.Join(open, "\n"))
	}
	if n, stuck := StuckTurns(st.Tasks, currentTurn, p.cfg.TodoReminder.StuckTaskTurns); stuck {
		b.WriteString("\n\n" + StuckGuidance(n, tool))
	}
	return Reminder{Kind: KindTodoReminder, Turn: currentTurn, Text: b.String()}
}
