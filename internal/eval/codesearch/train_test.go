package codesearch

import (
	"os"
	"path/filepath"
	"slices"
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
	got, err := s.TrainingPairs()
	if err != nil {
		t.Fatal(err)
	}
	// G is another version of the query's package, A says what the query
	// says; H and B are left to learn from.
	if len(got) != 2 || got[0].Doc != "func H() {}" || got[1].Doc != "func B() {}" {
		t.Fatalf("training pairs: %+v", got)
	}
}

// TestTrainingPairsTakeEveryComment: besides the set's functions, the
// pairs hold unexported functions', types', fields' and constants' doc
// comments and the comments inside bodies, tests' too, each with what it
// describes, and none from the queries' packages or saying what a query
// says.
func TestTrainingPairsTakeEveryComment(t *testing.T) {
	root := filepath.Join(t.TempDir(), "mod")
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("example.com/lib@v1.0.0/door/door.go", `package door

// Open opens the door wide.
func Open() {}
`)
	write("example.com/lib@v1.1.0/door/lock.go", `package door

// lockAll turns every key in the house.
func lockAll() {}
`)
	write("example.com/lib@v1.0.0/paint/paint.go", `package paint

// Paint coats the wall in colour.
func Paint() {
	// mix the pigment with the oil
	mix(pigment, oil)
	stir()

	// Opens the door wide.
	x := 1
}

// brushes cleans every brush after use.
func brushes() {}

// Colour is a paint's hue and shade.
type Colour struct {
	// Hue is the angle on the colour wheel.
	Hue float64
}

// The most coats a wall takes before it looks even.
const maxCoats = 3

// A comment no line follows.
`)
	write("example.com/lib@v1.0.0/paint/paint_test.go", `package paint

// TestPaint paints one wall twice over.
func TestPaint(t *testing.T) {
	// a second coat hides the first
	Paint()
}
`)
	write("example.com/lib@v1.0.0/door/door_test.go", `package door

func TestOpen(t *testing.T) {
	// the hinge squeaks when opened
	Open()
}
`)
	s := &Set{Functions: []Function{
		{ID: "mod/example.com/lib@v1.0.0/door/door.go#Open", Query: "opens the door wide.", Code: "func Open() {}"},
		{ID: "mod/example.com/lib@v1.0.0/paint/paint.go#Paint", Query: "coats the wall in colour.", Code: "func Paint() {...}"},
	}, Queries: []int{0}}
	got, err := s.TrainingPairs(root)
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, p := range got {
		queries = append(queries, p.Query)
		if p.Query == "mix the pigment with the oil" && p.Doc != "mix(pigment, oil)\nstir()" {
			t.Errorf("the body comment's lines: %q", p.Doc)
		}
	}
	want := []string{
		"coats the wall in colour.",
		"cleans every brush after use.",
		"is a paint's hue and shade.",
		"is the angle on the colour wheel.",
		"The most coats a wall takes before it looks even.",
		"mix the pigment with the oil",
		// Tests describe code too; the set's functions never come from
		// them (TestGenerateLeavesOutTests).
		"paints one wall twice over.",
		"a second coat hides the first",
	}
	if !slices.Equal(queries, want) {
		t.Errorf("training pairs' descriptions:\n got %q\nwant %q", queries, want)
	}
}
