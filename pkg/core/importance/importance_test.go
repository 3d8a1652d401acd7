package importance

import (
	"maps"
	"math"
	"testing"
	"time"
)

func TestDecayed(t *testing.T) {
	now := fixtureNow
	opts := Options{Now: now}
	for _, c := range []struct {
		name  string
		times []time.Time
		want  float64
	}{
		{"none", nil, 0},
		{"now", []time.Time{now}, 1},
		{"one half-life", []time.Time{now.Add(-DefaultHalfLife)}, 0.5},
		{"three half-lives", []time.Time{now.Add(-3 * DefaultHalfLife)}, 0.125},
		{"beyond the window", []time.Time{now.Add(-DefaultWindow - time.Hour)}, 0},
		{"in the future counts whole", []time.Time{now.Add(time.Hour)}, 1},
		{"sums", []time.Time{now, now, now.Add(-DefaultHalfLife)}, 2.5},
	} {
		if got := Decayed(c.times, opts); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := Decayed([]time.Time{now.Add(-time.Hour)}, Options{Now: now, HalfLife: time.Hour}); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("HalfLife option ignored: %v", got)
	}
}

func TestScoresAreNormalisedPerRepo(t *testing.T) {
	now := fixtureNow
	files := map[string]Signals{
		"top.go":  {References: 45, Changes: []time.Time{now}, Errors: []time.Time{now}},
		"some.go": {References: 3},
		"none.go": {},
	}
	s := Scores(files, Options{Now: now})
	if top := s["top.go"]; math.Abs(top.Score-1) > 1e-9 || top.References != 1 || top.Changes != 1 || top.Errors != 1 {
		t.Errorf("the repo's top file on every term scores %+v, want 1 everywhere", top)
	}
	if s["none.go"].Score != 0 {
		t.Errorf("a file with no signal scores %v", s["none.go"].Score)
	}
	// The log scale keeps a file imported 3 times well above one imported
	// by nobody (3/45 would be 0.07).
	if r := s["some.go"].References; math.Abs(r-math.Log(4)/math.Log(46)) > 1e-9 {
		t.Errorf("3 of 45 references normalise to %v", r)
	}
	// Normalisation is per repo: a small repo's top file gets 1 too.
	other := Scores(map[string]Signals{"a.go": {References: 2}, "b.go": {}}, Options{Now: now})
	if other["a.go"].References != 1 {
		t.Errorf("a small repo's most referenced file gets %v, want 1", other["a.go"].References)
	}
	for _, sc := range s {
		if sc.Score < 0 || sc.Score > 1 {
			t.Errorf("%s scores %v outside [0, 1]", sc.Path, sc.Score)
		}
	}
}

func TestRankBreaksTiesByPath(t *testing.T) {
	r := Rank(map[string]Score{"b": {Path: "b", Score: 0.5}, "a": {Path: "a", Score: 0.5}, "c": {Path: "c", Score: 0.9}})
	if r[0].Path != "c" || r[1].Path != "a" || r[2].Path != "b" {
		t.Errorf("rank %v", r)
	}
}

func TestReferences(t *testing.T) {
	files := []File{
		{Path: "pkg/api/api.go", Imports: []string{"example.com/m/pkg/types"}},
		{Path: "pkg/api/api_test.go", Imports: []string{"example.com/m/pkg/api"}}, // external test: same dir
		{Path: "pkg/types/types.go"},
		{Path: "pkg/types/more.go"},
		{Path: "pkg/types/types_test.go"},
		{Path: "main.go", Imports: []string{"example.com/m/pkg/api", "example.com/m/pkg/api", "fmt", "example.com/other/pkg/types"}},
		{Path: "web/src/index.ts", Imports: []string{"./auth", "../lib", "react"}},
		{Path: "web/src/auth.ts"},
		{Path: "web/lib/index.js"},
		{Path: "app/views.py", Imports: []string{"app.models", "app.util", "os"}},
		{Path: "app/models.py"},
		{Path: "app/util/__init__.py"},
		{Path: "docs/a.md", Links: [][]string{{"b.md", "docs/b.md"}, {"docs/b.md"}, {"missing.md"}, {"/README.md"}}},
		{Path: "docs/b.md", Links: [][]string{{"docs/b.md"}}},
		{Path: "README.md"},
	}
	got := References(files, "example.com/m")
	want := map[string]int{
		"pkg/api/api.go":       1, // main.go, twice; not its own test
		"pkg/types/types.go":   1, // api.go imports the package: every non-test file
		"pkg/types/more.go":    1,
		"web/src/auth.ts":      1,
		"web/lib/index.js":     1,
		"app/models.py":        1,
		"app/util/__init__.py": 1,
		"docs/b.md":            1, // a.md, once however often; not itself
		"README.md":            1,
	}
	if !maps.Equal(got, want) {
		t.Errorf("References:\n got  %v\n want %v", got, want)
	}
	// Without a module, a Go import names the longest suffix directory,
	// but never for the standard library.
	got = References([]File{
		{Path: "cmd/x/main.go", Imports: []string{"github.com/a/b/pkg/types", "encoding/json"}},
		{Path: "pkg/types/types.go"},
		{Path: "json/json.go"},
	}, "")
	if want := map[string]int{"pkg/types/types.go": 1}; !maps.Equal(got, want) {
		t.Errorf("without a module: %v, want %v", got, want)
	}
}

func TestCarryChanges(t *testing.T) {
	now := fixtureNow
	var ts []time.Time
	for i := range 40 {
		ts = CarryChanges(ts, now.Add(time.Duration(i)*time.Minute))
	}
	if len(ts) != MaxChanges || !ts[len(ts)-1].Equal(now.Add(39*time.Minute)) || !ts[0].Equal(now.Add(8*time.Minute)) {
		t.Errorf("40 changes keep %d, %v … %v", len(ts), ts[0], ts[len(ts)-1])
	}
	prev := []time.Time{now.Add(-DefaultWindow - time.Hour), now.Add(-time.Hour)}
	got := CarryChanges(prev, now)
	if len(got) != 2 || !got[0].Equal(now.Add(-time.Hour)) || !got[1].Equal(now) {
		t.Errorf("carry %v", got)
	}
	if !prev[0].Equal(now.Add(-DefaultWindow - time.Hour)) {
		t.Error("prev modified")
	}
}
