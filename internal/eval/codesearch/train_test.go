package codesearch

import (
	"testing"
)

func TestTrainingPairsLeaveOutTheQueriesPackages(t *testing.T) {
	s := &Set{Functions: []Function{
		{ID: "mod/github.com/x/y@v1.2.0/z/f.go#F", Query: "opens the door", Code: "func F() {}"},
		{ID: "mod/github.com/x/y@v1.1.0/z/g.go#G", Query: "closes the door", Code: "func G() {}"},
		{ID: "mod/github.com/x/y@v1.2.0/w/h.go#H", Query: "paints the door", Code: "func H() {}"},
		{ID: "src/net/http/a.go#A", Query: "Opens the door", Code: "func A() {}"},
		{ID: "src/net/url/b.go#B", Query: "parses a URL", Code: "func B() {}"},
	}, Queries: []int{0}}
	got := s.TrainingPairs()
	// G is another version of the query's package, A says what the query
	// says; H and B are left to learn from.
	if len(got) != 2 || got[0].Doc != "func H() {}" || got[1].Doc != "func B() {}" {
		t.Fatalf("training pairs: %+v", got)
	}
}
