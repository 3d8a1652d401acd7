package prune_test

import (
	"fmt"

	"github.com/cuedeck/cuedeck/pkg/core/prune"
)

func ExamplePruner_Supersede() {
	p, err := prune.New(prune.Config{})
	if err != nil {
		panic(err)
	}
	read := map[string]any{"filePath": "/src/app.ts"}
	calls := []prune.ToolCall{
		{ID: "call_001", Tool: "read", Params: read, Turn: 1, Status: prune.StatusCompleted, OutputTokens: 1200},
		{ID: "call_002", Tool: "read", Params: read, Turn: 3, Status: prune.StatusCompleted, OutputTokens: 1200},
		{ID: "call_003", Tool: "edit", Params: map[string]any{"filePath": "/src/app.ts", "oldString": "a", "newString": "b"},
			Turn: 5, Status: prune.StatusCompleted, OutputTokens: 40},
	}
	res := p.Supersede(calls, 5)
	for _, line := range res.Log {
		fmt.Println(line)
	}
	fmt.Print(res.Stats.Render())
	// Output:
	// [auto-supersede] 🔄 hash 222a86: call_001 → call_002
	// [auto-supersede] 📝 file /src/app.ts: read call_002 superseded by edit
	// Strategy Effectiveness:
	// ────────────────────────────────────────────────────────────
	//   Auto-Supersede         2 prunes, ~2.4k saved
	//     🔄 hash              1 prunes, ~1.2k
	//     📝 file              1 prunes, ~1.2k
	//     ✅ todo              0 prunes, ~0
}

func ExamplePruner_TodoReminder() {
	p, _ := prune.New(prune.Config{})
	todos := func(status string) map[string]any {
		return map[string]any{"todos": []any{map[string]any{"id": "1", "content": "Split the parser", "status": status}}}
	}
	calls := []prune.ToolCall{
		{ID: "w1", Tool: "todowrite", Params: todos("pending"), Turn: 1, Status: prune.StatusCompleted},
		{ID: "w3", Tool: "todowrite", Params: todos("in_progress"), Turn: 3, Status: prune.StatusCompleted},
		{ID: "w7", Tool: "todowrite", Params: todos("in_progress"), Turn: 7, Status: prune.StatusCompleted},
	}
	st := p.Supersede(calls, 15).Todos
	if p.ReminderDue(st.LastWriteTurn, 15) {
		fmt.Println(p.TodoReminder(st, 15).Text)
	}
	// Output:
	// 🔖 **Todo Reminder**
	// Your todo list was last updated 8 turns ago. Use `todowrite` to mark finished tasks completed and the task you are on in_progress.
	// Open tasks:
	// - [in_progress] Split the parser
	//
	// ⚠️ **Task Breakdown Suggestion**
	// A task has been in progress for 12 turns. If you're finding it difficult to complete, consider:
	// - Breaking it into smaller, more specific subtasks
	// - Identifying blockers or dependencies that need resolution first
	// - Marking it as blocked and moving to another task
	//
	// Use `todowrite` to split the task or update its status.
}
