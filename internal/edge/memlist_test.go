package edge

import (
	"context"
	"slices"
	"testing"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// ListMemories lists newest first within the filters and the caller's
// repos, without a query.
func TestListMemoriesNewestFirstWithinTheIdentitysRepos(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.waitMemories(h.putMemories(fixtureMemories()))
	e := r.memEdge()
	ctx := context.Background()

	all, err := e.ListMemories(ctx, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Use JWT instead of server sessions for auth",             // 2 h ago
		"Prefer CSS modules over global stylesheets",              // 3 h
		"Use a singleton for the database connection pool",        // 26 h
		"The deploy pipeline rolls back on a failed health check", // 10 d
		"Should refresh tokens rotate on every use?",              // 40 d
	}
	if got := contents(all); !slices.Equal(got, want) {
		t.Errorf("all: %q\nwant %q", got, want)
	}
	if all[0].Session != "sess-1111aaaa" || all[0].Source.End != 480 || all[0].Hash == "" {
		t.Errorf("hit lost its source: %+v", all[0])
	}
	two, _ := e.ListMemories(ctx, nil, 2)
	if !slices.Equal(contents(two), want[:2]) {
		t.Errorf("limit 2: %q", contents(two))
	}
	appOnly := access.WithIdentity(ctx, access.Identity{Client: "c", Repos: []string{"app"}})
	scoped, _ := e.ListMemories(appOnly, nil, 0)
	for _, m := range scoped {
		if m.Repo != "app" {
			t.Errorf("app-only identity sees %s: %q", m.Repo, m.Content)
		}
	}
	if len(scoped) != 4 {
		t.Errorf("app-only identity sees %d memories, want 4", len(scoped))
	}
	decisions, _ := e.ListMemories(ctx, &tools.MemoryFilters{Kind: "decision", Since: "2d"}, 0)
	if !slices.Equal(contents(decisions), []string{want[0], want[2]}) {
		t.Errorf("decisions of the last 2 days: %q", contents(decisions))
	}
	if _, err := e.ListMemories(ctx, &tools.MemoryFilters{Since: "yesterday"}, 0); err == nil {
		t.Error("a bad since was accepted")
	}
}
