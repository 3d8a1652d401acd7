package scene

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}

// seedExample is the input behind seed 004 §5's "Rendered Output Example".
func seedExample() Sandwich {
	return Sandwich{
		Rules: []string{
			"Always use async/await for I/O operations",
			"Prefer composition over inheritance",
			"All public APIs must have doc comments",
		},
		Decisions: []string{
			"agent-abc: Used singleton for DB connection (2 hours ago)",
			"agent-xyz: Chose JWT over sessions for auth (yesterday)",
		},
		Focus: []FocusFile{
			{Path: "src/auth/handler.rs", Role: "primary", Lang: "rust", Content: "pub async fn login(req: LoginRequest) -> Result<Token, AuthError> {\n    // ... full content ...\n}\n"},
			{Path: "src/auth/token.rs", Role: "dependency", Lang: "rust", Content: "pub struct Token { ... }\nimpl Token { ... }"},
		},
		Horizon: []HorizonEntry{
			{Path: "src/auth/", Summary: "Authentication module"},
			{Path: "src/api/", Summary: "HTTP handlers"},
			{Path: "src/db/", Summary: "Database layer"},
			{Path: "src/utils/", Summary: "Shared utilities"},
		},
	}
}

// seedRendered is the seed's example output, verbatim but for the node ids.
const seedRendered = "# PROJECT CONTEXT\n\n## Rules\n- Always use async/await for I/O operations\n- Prefer composition over inheritance\n- All public APIs must have doc comments\n\n## Recent Decisions\n- agent-abc: Used singleton for DB connection (2 hours ago)\n- agent-xyz: Chose JWT over sessions for auth (yesterday)\n\n---\n\n## Focus Area\n\n### src/auth/handler.rs (primary)\n```rust\npub async fn login(req: LoginRequest) -> Result<Token, AuthError> {\n    // ... full content ...\n}\n```\n\n### src/auth/token.rs (dependency)\n```rust\npub struct Token { ... }\nimpl Token { ... }\n```\n\n---\n\n## Project Structure (overview)\n```\nsrc/\n├── auth/           # Authentication module [expand: node_123]\n├── api/            # HTTP handlers [expand: node_124]\n├── db/             # Database layer [expand: node_125]\n└── utils/          # Shared utilities [expand: node_126]\n```\n\nTo see details, mention \"expand node_XXX\".\n"

func TestRenderMatchesSeedExample(t *testing.T) {
	r := Packer{}.Render(seedExample())
	if r.Truncated || r.OverBudget || r.Focus != 2 || r.Horizon != 4 || r.Used == 0 {
		t.Fatalf("%+v", r)
	}
	golden(t, "seed_example.golden.md", r.Markdown)

	// Apart from the ids, which NodeID derives from paths, the output is
	// the seed's example character for character.
	got := r.Markdown
	for i, p := range []string{"src/auth/", "src/api/", "src/db/", "src/utils/"} {
		got = strings.Replace(got, NodeID(p), fmt.Sprintf("node_%d", 123+i), 1)
	}
	if got != seedRendered {
		t.Fatalf("render differs from the seed's example:\n--- got\n%s\n--- want\n%s", got, seedRendered)
	}
}

// words estimates one token per whitespace-separated word, so truncation
// points can be read off the input.
var words = Packer{Estimate: func(s string) int { return len(strings.Fields(s)) }}

func TestRenderTruncatedInFocusDropsHorizon(t *testing.T) {
	s := seedExample()
	full := words.Render(s)
	// Room for the anchor, the frame and the first focus file only.
	p := withBudget(words, full.Used-horizonCost(s)-focusCost(s.Focus[1])+1)
	r := p.Render(s)
	if !r.Truncated || r.Focus != 1 || r.Horizon != 0 || r.Dropped != "src/auth/token.rs" {
		t.Fatalf("%+v", r)
	}
	golden(t, "truncated_focus.golden.md", r.Markdown)
}

func TestRenderTruncatedInHorizon(t *testing.T) {
	s := seedExample()
	full := words.Render(s)
	// A budget of exactly the whole page's estimate: the last horizon entry
	// would bring Used to N, which the strict < refuses. The tree closes
	// on the entry before it.
	r := withBudget(words, full.Used).Render(s)
	if !r.Truncated || r.Focus != 2 || r.Horizon != 3 || r.Dropped != "src/utils/" {
		t.Fatalf("%+v", r)
	}
	if !strings.HasSuffix(r.Markdown, "\n\n"+TruncationWarning+"\n") {
		t.Fatal("the warning is not the last line")
	}
	golden(t, "truncated_horizon.golden.md", r.Markdown)
}

func horizonCost(s Sandwich) int {
	n := 0
	for _, u := range horizonUnits(s.Horizon) {
		n += len(strings.Fields(u.Text))
	}
	return n
}

func focusCost(f FocusFile) int { return len(strings.Fields(renderFocus(f))) }

func TestRenderAnchorAloneOverBudget(t *testing.T) {
	r := withBudget(words, 5).Render(seedExample())
	if !r.OverBudget || !r.Truncated || r.Focus != 0 || r.Horizon != 0 || r.Dropped != "src/auth/handler.rs" {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.Markdown, "## Rules") || strings.Contains(r.Markdown, "## Focus Area") {
		t.Fatalf("anchor must stay, focus must go:\n%s", r.Markdown)
	}
}

func TestRenderTree(t *testing.T) {
	s := Sandwich{
		Constraints: []string{"Focus only on the auth module;\nleave db alone"},
		Horizon: []HorizonEntry{
			{Path: "pkg/core/graph/", Summary: "Context DAG"},
			{Path: "pkg/core/scene/scene.go", Summary: "func (p Packer) Render(s Sandwich) Rendered"},
			{Path: "./cmd/cue/", Summary: ""},
			{Path: "pkg/", Summary: "Pure  libraries\n(no I/O)"},
			{Path: "pkg/events/"},
			{Path: "pkg/core/graph/", Summary: "listed twice: the first wins"},
		},
	}
	r := Packer{}.Render(s)
	golden(t, "tree.golden.md", r.Markdown)
	// Implied directories carry no expand id; listed ones do, once.
	if strings.Count(r.Markdown, "[expand: ") != 5 {
		t.Fatalf("want 5 expand ids:\n%s", r.Markdown)
	}
	if strings.Count(r.Markdown, "\n---\n") != 1 {
		t.Fatal("want one separator between the anchor and the horizon")
	}
}

func TestFenceOutgrowsBackticksInContent(t *testing.T) {
	f := FocusFile{Path: "README.md", Lang: "markdown", Content: "```go\nx := 1\n```\n"}
	got := renderFocus(f)
	if !strings.Contains(got, "\n````markdown\n```go\n") || !strings.HasSuffix(got, "```\n````\n") {
		t.Fatalf("fence not lengthened:\n%s", got)
	}
}

func TestHorizonFenceOutgrowsBackticks(t *testing.T) {
	r := Packer{}.Render(Sandwich{Horizon: []HorizonEntry{{Path: "README.md", Summary: "see ```example```"}}})
	if !strings.Contains(r.Markdown, "\n````\nREADME.md") || !strings.Contains(r.Markdown, "]\n````\n") {
		t.Fatalf("fence not lengthened:\n%s", r.Markdown)
	}
}

func TestNodeID(t *testing.T) {
	// Pinned: changing the scheme breaks expand requests in flight.
	if got := NodeID("src/auth"); got != "node_2df12c20eb" {
		t.Fatalf("NodeID(src/auth) = %s", got)
	}
	for _, p := range []string{"src/auth/", "./src/auth", "/src/auth", "src//auth/"} {
		if NodeID(p) != NodeID("src/auth") {
			t.Errorf("NodeID(%q) = %s, want the id of src/auth", p, NodeID(p))
		}
	}
	if NodeID("src/api") == NodeID("src/auth") {
		t.Fatal("distinct paths share an id")
	}
}

func TestRenderEmpty(t *testing.T) {
	r := Packer{}.Render(Sandwich{})
	if r.Markdown != "# PROJECT CONTEXT\n" || r.Truncated {
		t.Fatalf("%+v", r)
	}
}
