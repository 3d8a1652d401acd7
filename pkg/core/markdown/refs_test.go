package markdown

import (
	"reflect"
	"strings"
	"testing"
)

// Anchors with spaces are read where nothing else can be meant: a ref
// alone on its line, a quoted anchor, a link's percent-encoded fragment.
// In prose a space still ends the anchor.
func TestRefAnchorsWithSpaces(t *testing.T) {
	src := strings.Join([]string{
		"# Card",
		"- @docs/otel.md#Tail Sampling",                               // 2: alone on its line (a list of references)
		"@docs/otel.md#Head Sampling Rules.",                          // 3: alone, a sentence's period
		"1. @docs/otel.md#Sampling Costs",                             // 4: ordered list
		"Read @docs/otel.md#Login for details",                        // 5: prose after the ref
		`See @docs/otel.md#"Tail Sampling" first, and @x.md#"".`,      // 6: quoted; an empty quote is no anchor
		"- @docs/otel.md#Tail Sampling *now*",                         // 7: markup after: the first word only
		"[t](docs/otel.md#Tail%20Sampling) [u](<otel.md#Span Links>)", // 8: links
		"> @docs/otel.md#Quoted Block",                                // 9: in a block quote
		"| @docs/otel.md#In Table |",                                  // 10: a table row is no list
	}, "\n")
	got := Parse([]byte(src)).Links
	want := []Link{
		{Target: "docs/otel.md", Anchor: "Tail Sampling", Line: 2, Kind: KindRef},
		{Target: "docs/otel.md", Anchor: "Head Sampling Rules", Line: 3, Kind: KindRef},
		{Target: "docs/otel.md", Anchor: "Sampling Costs", Line: 4, Kind: KindRef},
		{Target: "docs/otel.md", Anchor: "Login", Line: 5, Kind: KindRef},
		{Target: "docs/otel.md", Anchor: "Tail Sampling", Line: 6, Kind: KindRef},
		{Target: "x.md", Line: 6, Kind: KindRef},
		{Target: "docs/otel.md", Anchor: "Tail", Line: 7, Kind: KindRef},
		{Target: "docs/otel.md", Anchor: "Tail Sampling", Text: "t", Line: 8, Kind: KindLink},
		{Target: "otel.md", Anchor: "Span Links", Text: "u", Line: 8, Kind: KindLink},
		{Target: "docs/otel.md", Anchor: "Quoted Block", Line: 9, Kind: KindRef},
		{Target: "docs/otel.md", Anchor: "In", Line: 10, Kind: KindRef},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links:\n got %+v\nwant %+v", got, want)
	}
	// Each resolves to its heading by name.
	doc := Parse([]byte("# OTel\n\n## Tail Sampling\n\nKeep errors.\n\n## Span Links\n"))
	for i, heading := range map[int]int{0: 1, 4: 1, 7: 1, 8: 2} {
		if got := FindHeading(doc, got[i].Anchor); got != heading {
			t.Errorf("anchor of link %d finds heading %d, want %d", i, got, heading)
		}
	}
}
