package scenes

import (
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/edge"
)

// importanceOf is an ImportanceSource over fixed scores of one repo.
type importanceOf map[string]float64

func (s importanceOf) Importance(repo, path string) float64 {
	if repo != "shop" {
		return 0
	}
	return s[path]
}

// Files of one depth are packed most important first, after the depth
// priority: a deeper file stays behind the direct ones however important,
// and a budget that cuts the direct files short keeps the important one.
func TestScenePacksEachDepthByImportance(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".cuedeck/cards/a.md": card("a", "active", "Add auth to the API: see @docs/utils.md, @docs/api.md and @docs/auth.md."),
		"docs/api.md":         "# API\n\nThe handler; see @docs/deep.md.\n\n" + filler(300),
		"docs/auth.md":        "# Auth\n\nTokens.\n\n" + filler(300),
		"docs/utils.md":       "# Utils\n\nString helpers.\n\n" + filler(300),
		"docs/deep.md":        "# Deep\n\nInternals.\n\n" + filler(300),
	})
	fsys := openRoot(t, dir).FS()
	// Linearise orders the direct files by path: api, auth, utils.
	scores := importanceOf{"docs/auth.md": 0.65, "docs/utils.md": 0.3, "docs/api.md": 0, "docs/deep.md": 1}
	order := func(md string) []string {
		var out []string
		for _, h := range []string{"# API", "# Auth", "# Utils", "# Deep"} {
			if strings.Contains(md, "\n"+h+"\n") {
				out = append(out, h)
			}
		}
		slices.SortFunc(out, func(a, b string) int {
			return strings.Index(md, "\n"+a+"\n") - strings.Index(md, "\n"+b+"\n")
		})
		return out
	}

	plain, err := Build(fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order(plain.Markdown), ", "); got != "# API, # Auth, # Utils, # Deep" {
		t.Fatalf("without importance the references' order holds: %s", got)
	}

	ranked, err := Build(fsys, Options{Importance: scores, Repo: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order(ranked.Markdown), ", "); got != "# Auth, # Utils, # API, # Deep" {
		t.Fatalf("with importance: %s, want auth, utils, api, then deep (depth 2) last", got)
	}

	// Room for the card and two files: the important two (whole; the
	// third would come as its outline, which is not what this is about).
	tight, err := Build(fsys, Options{Importance: scores, Repo: "shop", Budget: ranked.Tokens - 500, NoOutlines: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order(tight.Markdown), ", "); !tight.Truncated || got != "# Auth, # Utils" {
		t.Fatalf("under a tight budget (truncated %v): %s, want the two important files", tight.Truncated, got)
	}
}

// get_scene finds an edge's importance as it finds its decisions.
var _ ImportanceSource = (*edge.Edge)(nil)
