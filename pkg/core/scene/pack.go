// Package scene builds the scene an agent reads: the greedy "knapsack-lite"
// token pruning of seed 000 §2 over a linearised context graph, and the
// three-layer context sandwich of seed 004 §5 (anchor, focus, horizon)
// rendered to markdown. `cue scene` writes its output to SCENE.md and the
// get_scene tool returns it; both order the nodes with package graph first.
//
// # Choices where the seeds are silent or ambiguous
//
//   - A node fits if UsedTokens + Estimate(node) < N, strictly, as seed 000
//     §2 writes it: a node that would fill the budget exactly is dropped.
//   - A node that does not fit whole but has an outline (package
//     outline, seed 000 §5 strategy 1) that fits is included as its
//     outline, and packing goes on.
//   - At the first node that fits neither whole nor as its outline,
//     packing stops (the seed's Break). Smaller nodes after it are not
//     tried: the scene is always a prefix of the priority order, so
//     whatever the truncation warning marks as missing is everything
//     after it.
//   - The active card is critical and is always included, even when it
//     alone exceeds the budget; the result then says OverBudget and nothing
//     else fits. Failing instead would leave an agent with no scene at all,
//     and error 1003 is for requests, not for a card that grew.
//   - The truncation warning line is not counted against the budget.
//   - In the sandwich, the anchor layer and the page's fixed frame
//     (headings, separators, the closing instruction) play the active
//     card's part; focus files and then horizon entries follow in the order
//     given, as one sequence under one budget. A focus file that does not
//     fit therefore also drops the whole horizon.
//   - The truncation warning is always the last line of the output.
//   - Horizon entries render as a tree in the order given (the seed's
//     example lists auth/ before api/), with comments aligned at column 20
//     as in the example, or further right when names are longer.
//   - `[expand: node_id]` ids come from NodeID, a hash of the cleaned
//     path: stable across runs, edges and machines, and reversible by the
//     expand handler by hashing the paths it knows.
//
// The package is pure: no I/O, no infrastructure.
package scene

import (
	"strings"

	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// DefaultBudget is seed 000 §2's default N.
const DefaultBudget = 32_000

// TruncationWarning is the line appended where packing stopped.
const TruncationWarning = "> [!WARNING] Context Truncated here..."

// Item is one node's content.
type Item struct {
	ID   string
	Text string
	// Outline, if set, is a shorter rendering of the node, packed in
	// Text's place when Text does not fit.
	Outline string
}

// Packer packs items into a token budget. The zero value uses DefaultBudget
// and tokens.Count.
type Packer struct {
	// Budget is N; zero or less means DefaultBudget.
	Budget int
	// Estimate counts a text's tokens; nil means tokens.Count. Negative
	// estimates count as zero.
	Estimate func(text string) int
}

func (p Packer) budget() int {
	if p.Budget <= 0 {
		return DefaultBudget
	}
	return p.Budget
}

func (p Packer) estimate(s string) int {
	f := p.Estimate
	if f == nil {
		f = tokens.Count
	}
	return max(f(s), 0)
}

// Packed is the outcome of Pack.
type Packed struct {
	// Items are the included items, the active card first, then a prefix
	// of the ordered items; an item included as its outline has the
	// outline as its Text.
	Items []Item
	// Outlined are the IDs of the items included as their outline.
	Outlined []string
	// Used is the sum of the included items' estimates.
	Used int
	// Budget is the N that applied.
	Budget int
	// Truncated reports that an item did not fit and packing stopped.
	Truncated bool
	// Dropped is the ID of the first item that did not fit, or "".
	Dropped string
	// Omitted is how many ordered items were left out.
	Omitted int
	// OverBudget reports that the active card alone exceeds the budget
	// (Used > Budget); it was included anyway.
	OverBudget bool
}

// Pack runs seed 000 §2: the active card first, whatever its size, then each
// ordered item while UsedTokens + Estimate(item) < Budget, an item that
// does not fit whole going in as its Outline when that fits; at the first
// item that fits neither way it stops. ordered is the linearised scene
// without the active card (graph.Linearise's entries after the first).
func (p Packer) Pack(active Item, ordered []Item) Packed {
	r := Packed{Budget: p.budget()}
	r.Used = p.estimate(active.Text)
	r.OverBudget = r.Used > r.Budget
	r.Items = append(make([]Item, 0, len(ordered)+1), active)
	for n, it := range ordered {
		if e := p.estimate(it.Text); r.Used+e < r.Budget {
			r.Used += e
			r.Items = append(r.Items, it)
			continue
		}
		if it.Outline != "" {
			if e := p.estimate(it.Outline); r.Used+e < r.Budget {
				r.Used += e
				r.Items = append(r.Items, Item{ID: it.ID, Text: it.Outline})
				r.Outlined = append(r.Outlined, it.ID)
				continue
			}
		}
		r.Truncated, r.Dropped, r.Omitted = true, it.ID, len(ordered)-n
		break // not skip: the scene stays a prefix of the order
	}
	return r
}

// Markdown joins the included items' texts with blank lines and, if packing
// stopped early, ends with TruncationWarning.
func (r Packed) Markdown() string {
	var b strings.Builder
	for i, it := range r.Items {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(strings.TrimRight(it.Text, "\n"))
	}
	if r.Truncated {
		b.WriteString("\n\n" + TruncationWarning)
	}
	b.WriteString("\n")
	return b.String()
}
