package tasks

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestPathBackMatchesGraph checks the graph-free cycle search against
// graph.WouldCycle on random boards.
func TestPathBackMatchesGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := 2 + rng.IntN(12)
		cur := map[string]events.Task{}
		for i := range n {
			id := fmt.Sprintf("n%05d", i)
			var deps []string
			for range rng.IntN(3) {
				deps = append(deps, fmt.Sprintf("n%05d", rng.IntN(n)))
			}
			cur[id] = events.Task{ID: id, DependsOn: deps}
		}
		id, d := fmt.Sprintf("n%05d", rng.IntN(n)), fmt.Sprintf("n%05d", rng.IntN(n))
		want := Graph(cur, id).WouldCycle(id, d)
		if got := pathBack(cur, id, d); !slices.Equal(got, want) {
			t.Fatalf("round %d: %s → %s: got %v, want %v (board %v)", round, id, d, got, want, cur)
		}
	}
}
