package importance

import (
	"slices"
	"testing"
	"time"
)

// fixtureNow is when the fixture repository is scored.
var fixtureNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// fixtureRepo is a small Go service, module example.com/shop, as the
// edge sees it: each file's links and imports, the times its content
// changed after it was first indexed, and the times it appeared in an error
// stack of a session's transcript.
//
//	cmd/shop/main.go             imports api, orders
//	internal/api/api.go          imports auth, types       (in a stack)
//	internal/auth/auth.go        imports types             (edited 3× in 2 days)
//	internal/billing/billing.go  imports api, auth, types
//	internal/orders/orders.go    imports api, types        (top frame of a stack)
//	internal/types/types.go      —                         (edited once, 3 weeks ago)
//	internal/utils/utils.go      —                         (nobody imports it)
//	README.md                    links docs/api.md
//	docs/api.md                  links ../internal/api/api.go
var fixtureRepo = []File{
	{Path: "go.mod"},
	{Path: "cmd/shop/main.go", Imports: []string{"fmt", "example.com/shop/internal/api", "example.com/shop/internal/orders"}},
	{Path: "internal/api/api.go", Imports: []string{"net/http", "example.com/shop/internal/auth", "example.com/shop/internal/types"}},
	{Path: "internal/auth/auth.go", Imports: []string{"errors", "example.com/shop/internal/types"}},
	{Path: "internal/billing/billing.go", Imports: []string{"example.com/shop/internal/api", "example.com/shop/internal/auth", "example.com/shop/internal/types"}},
	{Path: "internal/orders/orders.go", Imports: []string{"example.com/shop/internal/api", "example.com/shop/internal/types"}},
	{Path: "internal/types/types.go", Imports: []string{"time"}},
	{Path: "internal/utils/utils.go", Imports: []string{"strings"}},
	{Path: "README.md", Links: [][]string{{"docs/api.md"}}},
	{Path: "docs/api.md", Links: [][]string{{"../internal/api/api.go", "internal/api/api.go"}}},
}

var (
	fixtureChanges = map[string][]time.Time{
		"internal/auth/auth.go":   {fixtureNow.Add(-40 * time.Hour), fixtureNow.Add(-26 * time.Hour), fixtureNow.Add(-3 * time.Hour)},
		"internal/types/types.go": {fixtureNow.Add(-21 * 24 * time.Hour)},
	}
	// One panic: orders.go at the top, api.go's handler below it.
	fixtureErrors = map[string][]time.Time{
		"internal/orders/orders.go": {fixtureNow.Add(-5 * time.Hour)},
		"internal/api/api.go":       {fixtureNow.Add(-5 * time.Hour)},
	}
)

// fixtureExpected is the order a reader puts the fixture's files in, written
// before the scoring was:
//
//  1. api.go: every package but utils depends on it, and it was in the panic.
//  2. auth.go: edited three times in two days, imported by api and billing.
//  3. orders.go: where the panic happened; main imports it.
//  4. types.go: imported by four files, but untouched for three weeks.
//  5. docs/api.md: the README points to it; helpful, not critical.
//  6. then the files nothing points to and nothing touched, tied at zero
//     and so in path order: README.md, main.go, go.mod, billing.go,
//     utils.go.
var fixtureExpected = []string{
	"internal/api/api.go",
	"internal/auth/auth.go",
	"internal/orders/orders.go",
	"internal/types/types.go",
	"docs/api.md",
	"README.md",
	"cmd/shop/main.go",
	"go.mod",
	"internal/billing/billing.go",
	"internal/utils/utils.go",
}

func fixtureSignals() map[string]Signals {
	refs := References(fixtureRepo, "example.com/shop")
	files := make(map[string]Signals, len(fixtureRepo))
	for _, f := range fixtureRepo {
		files[f.Path] = Signals{References: refs[f.Path], Changes: fixtureChanges[f.Path], Errors: fixtureErrors[f.Path]}
	}
	return files
}

func TestFixtureOrdersFilesAsAReaderWould(t *testing.T) {
	ranked := Rank(Scores(fixtureSignals(), Options{Now: fixtureNow}))
	got := make([]string, len(ranked))
	for i, s := range ranked {
		got[i] = s.Path
	}
	if !slices.Equal(got, fixtureExpected) {
		for _, s := range ranked {
			t.Logf("%-28s %.3f  refs %.2f changes %.2f errors %.2f", s.Path, s.Score, s.References, s.Changes, s.Errors)
		}
		t.Fatalf("order:\n got  %q\n want %q", got, fixtureExpected)
	}
}

// The expected order is not one a single signal gives: a scoring that
// ignored changes and stacks, or the path order of a tie, would fail.
func TestFixtureNeedsEverySignal(t *testing.T) {
	refsOnly := fixtureSignals()
	for p, s := range refsOnly {
		refsOnly[p] = Signals{References: s.References}
	}
	for name, files := range map[string]map[string]Signals{"references only": refsOnly, "no signal": {}} {
		for _, f := range fixtureRepo {
			if _, ok := files[f.Path]; !ok {
				files[f.Path] = Signals{}
			}
		}
		ranked := Rank(Scores(files, Options{Now: fixtureNow}))
		got := make([]string, len(ranked))
		for i, s := range ranked {
			got[i] = s.Path
		}
		if slices.Equal(got, fixtureExpected) {
			t.Errorf("%s already gives the expected order: the fixture does not test the scoring", name)
		}
	}
}
