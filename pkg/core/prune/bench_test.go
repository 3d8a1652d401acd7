package prune

import (
	"fmt"
	"testing"
)

// conversation builds n calls over n/10 turns: reads, edits and greps over
// 200 files, repeated reads, and todo writes and reads, so every rule has
// work to do.
func conversation(n int) []ToolCall {
	calls := make([]ToolCall, n)
	for i := range calls {
		f := fmt.Sprintf("/src/pkg%d/file%d.go", i%17, i%200)
		c := ToolCall{ID: fmt.Sprintf("call_%06d", i), Turn: i/10 + 1, Status: StatusCompleted, OutputTokens: 50 + i%400}
		switch i % 8 {
		case 0, 1, 2:
			c.Tool, c.Params = "read", map[string]any{"filePath": f}
		case 3:
			c.Tool, c.Params = "edit", map[string]any{"filePath": f, "oldString": "a", "newString": fmt.Sprint(i)}
		case 4:
			c.Tool, c.Params = "grep", map[string]any{"path": "/src", "pattern": fmt.Sprintf("func F%d", i%50), "include": "*.go"}
		case 5:
			c.Tool, c.Params = "glob", map[string]any{"path": "/src", "pattern": fmt.Sprintf("pkg%d/*.go", i%17)}
		case 6:
			c.Tool, c.Params = "todowrite", map[string]any{"todos": []any{
				map[string]any{"id": "1", "content": "one", "status": "in_progress"},
				map[string]any{"id": "2", "content": "two", "status": []string{"pending", "in_progress"}[i/8%2]},
			}}
		case 7:
			c.Tool, c.Params = "todoread", nil
		}
		calls[i] = c
	}
	return calls
}

// BenchmarkSupersede runs a fresh conversation's first Supersede (hashing
// every call); each op includes copying the calls. ns/op should grow
// linearly with n.
func BenchmarkSupersede(b *testing.B) {
	p, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			template := conversation(n)
			last := template[n-1].Turn
			calls := make([]ToolCall, n)
			b.ReportAllocs()
			for b.Loop() {
				copy(calls, template)
				p.Supersede(calls, last)
			}
		})
	}
}

// BenchmarkSupersedeAgain is the steady state: Supersede over calls already
// hashed and superseded by an earlier run.
func BenchmarkSupersedeAgain(b *testing.B) {
	p, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	calls := conversation(10_000)
	last := calls[len(calls)-1].Turn
	p.Supersede(calls, last)
	b.ReportAllocs()
	for b.Loop() {
		p.Supersede(calls, last)
	}
}
