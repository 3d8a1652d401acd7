package scene

import (
	"slices"
	"strings"
	"testing"
)

func TestPackFallsBackToOutline(t *testing.T) {
	p := withBudget(byLen, 20)
	r := p.Pack(Item{ID: "card", Text: "a"}, []Item{
		{ID: "first", Text: "bb"},
		{ID: "big", Text: strings.Repeat("c", 30), Outline: "big-o"}, // 1+2+30 ≥ 20; 1+2+5 < 20
		{ID: "small", Text: "d"},
		{ID: "huge", Text: strings.Repeat("e", 30), Outline: strings.Repeat("o", 12)}, // 9+12 ≥ 20
		{ID: "after", Text: "f"},
	})
	if got := ids(r.Items); !slices.Equal(got, []string{"card", "first", "big", "small"}) {
		t.Fatalf("included %v", got)
	}
	if r.Items[2].Text != "big-o" || !slices.Equal(r.Outlined, []string{"big"}) || r.Used != 1+2+5+1 {
		t.Fatalf("big not packed as its outline: %+v", r)
	}
	// An item whose outline does not fit either stops packing, as before.
	if !r.Truncated || r.Dropped != "huge" || r.Omitted != 2 {
		t.Fatalf("%+v", r)
	}
}

func TestRenderShowsAFocusFileThatDoesNotFitAsItsOutline(t *testing.T) {
	long := strings.Repeat("func body() {}\n", 40)
	s := Sandwich{Focus: []FocusFile{
		{Path: "cards/a.md", Role: "active card", Content: "do it"},
		{Path: "src/big.go", Role: "direct", Lang: "go", Content: long, Outline: "outline of src/big.go (go, 40 lines)\nfunc body() … L1\n"},
		{Path: "docs/b.md", Role: "indirect", Content: "short"},
	}}
	p := withBudget(byLen, 400)
	r := p.Render(s)
	if r.Truncated || r.Focus != 3 || !slices.Equal(r.Outlined, []string{"src/big.go"}) {
		t.Fatalf("rendered %+v", r)
	}
	want := "\n### src/big.go (direct; outline: too long to include whole)\n```text\noutline of src/big.go (go, 40 lines)\nfunc body() … L1\n```\n"
	if !strings.Contains(r.Markdown, want) || strings.Contains(r.Markdown, "func body() {}") || !strings.Contains(r.Markdown, "short") {
		t.Fatalf("markdown:\n%s", r.Markdown)
	}
	// With room, the file is whole.
	r = withBudget(byLen, 2000).Render(s)
	if len(r.Outlined) != 0 || !strings.Contains(r.Markdown, long) {
		t.Fatalf("with room: %+v", r)
	}
}
