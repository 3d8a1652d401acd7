package scene

import (
	"fmt"
	"strings"
	"testing"
)

// items10k are 10,000 nodes of about 200 tokens each, like a linearised
// repository of small documents.
func items10k() []Item {
	body := strings.Repeat("The handler validates the token and returns the session. ", 20)
	items := make([]Item, 10_000)
	for i := range items {
		items[i] = Item{ID: fmt.Sprintf("docs/%05d.md", i), Text: fmt.Sprintf("# Doc %d\n\n%s", i, body)}
	}
	return items
}

// BenchmarkPack10kAllFit walks all 10,000 nodes with a cheap estimator:
// the cost of the packing loop itself.
func BenchmarkPack10kAllFit(b *testing.B) {
	items := items10k()
	p := Packer{Budget: 1 << 40, Estimate: func(s string) int { return len(s) / 4 }}
	active := Item{ID: "card", Text: "# Card"}
	for b.Loop() {
		if r := p.Pack(active, items); r.Truncated {
			b.Fatal("truncated")
		}
	}
}

// BenchmarkPack10kDefault is what `cue scene` pays with the defaults:
// tokens.Count on each node until the 32k budget breaks the loop.
func BenchmarkPack10kDefault(b *testing.B) {
	items := items10k()
	active := Item{ID: "card", Text: "# Card"}
	for b.Loop() {
		if r := (Packer{}).Pack(active, items); !r.Truncated {
			b.Fatal("not truncated")
		}
	}
}

// BenchmarkRender is the seed's example sandwich with a 2,000-entry
// horizon, under the default budget.
func BenchmarkRender(b *testing.B) {
	s := seedExample()
	for i := range 2000 {
		s.Horizon = append(s.Horizon, HorizonEntry{Path: fmt.Sprintf("src/mod%02d/file%04d.rs", i%40, i), Summary: "pub fn handle(req: Request) -> Response"})
	}
	for b.Loop() {
		Packer{}.Render(s)
	}
}
