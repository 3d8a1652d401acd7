package scene

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"unicode/utf8"
)

// Sandwich is seed 004 §5's three-layer context for a (sub-)agent.
type Sandwich struct {
	// ANCHOR: immutable, always rendered.
	Rules       []string // project rules and coding standards
	Constraints []string // the parent agent's constraints
	Decisions   []string // recent team decisions, e.g. "agent-abc: Used singleton for DB connection (2 hours ago)"

	// FOCUS: the working set, in priority order (primary files, then
	// dependencies, types, tests).
	Focus []FocusFile

	// HORIZON: low-detail peripheral vision, in priority order.
	Horizon []HorizonEntry
}

// FocusFile is a file shown in full, or as its outline when it does not
// fit whole.
type FocusFile struct {
	Path    string
	Role    string // "primary", "dependency", "types", "test"; "" for none
	Lang    string // the fence's info string, e.g. "go"; "" for none
	Content string
	// Outline is package outline's rendering of Content; "" for none.
	Outline string
}

// HorizonEntry is a directory, module or API the agent may ask to expand.
type HorizonEntry struct {
	// Path is slash-separated; a trailing slash marks a directory.
	Path string
	// Summary is a short description: a module's purpose, a signature.
	Summary string
}

// NodeID returns the id that `[expand: …]` shows for path: "node_" and the
// first 10 hex digits of the SHA-256 of the cleaned path (no leading "./"
// or "/", no trailing "/"), so "src/auth/" and "src/auth" share an id. It
// is the same on every run and machine; whoever handles an expansion maps
// ids back by hashing the paths it knows. Callers serving several
// repositories put the repository in the path ("repo:src/auth").
func NodeID(p string) string {
	sum := sha256.Sum256([]byte(cleanPath(p)))
	return "node_" + hex.EncodeToString(sum[:5])
}

func cleanPath(p string) string {
	p = path.Clean("/" + p)
	return strings.TrimPrefix(p, "/")
}

// Rendered is a rendered sandwich and what packing it cost.
type Rendered struct {
	Markdown string
	// Used is the sum of the estimates of the anchor with the page frame,
	// and of each included focus file and horizon entry; it may differ from
	// the count of Markdown by a few tokens where the parts join.
	Used       int
	Budget     int
	Truncated  bool
	OverBudget bool // the anchor and frame alone exceed the budget
	// Focus and Horizon count the included entries of each layer; they are
	// prefixes of the sandwich's lists.
	Focus, Horizon int
	// Dropped is the path of the first focus file or horizon entry that did
	// not fit, or "".
	Dropped string
	// Outlined are the paths of the focus files shown as their outline.
	Outlined []string
}

const (
	title          = "# PROJECT CONTEXT\n"
	separator      = "\n---\n"
	focusHeading   = "\n## Focus Area\n"
	horizonHeading = "\n## Project Structure (overview)\n"
	closing        = "\nTo see details, mention \"expand node_XXX\".\n"

	// commentColumn is where the seed's example starts its tree comments.
	commentColumn = 20
)

// Render packs the sandwich into p's budget and renders it as markdown in
// the shape of seed 004 §5's example. The anchor and page frame go first and
// always; then focus files, then horizon entries, each while it fits by
// Pack's rule; at the first that does not, rendering stops and the page
// ends with TruncationWarning.
func (p Packer) Render(s Sandwich) Rendered {
	anchor := renderAnchor(s)
	frame := title + anchor
	if len(s.Focus) > 0 {
		frame += separator + focusHeading
	}
	if len(s.Horizon) > 0 {
		frame += separator + horizonHeading + "```\n```\n" + closing
	}

	units := make([]Item, 0, len(s.Focus)+len(s.Horizon))
	for _, f := range s.Focus {
		u := Item{ID: f.Path, Text: renderFocus(f)}
		if f.Outline != "" {
			u.Outline = renderFocusOutline(f)
		}
		units = append(units, u)
	}
	units = append(units, horizonUnits(s.Horizon)...)

	pk := p.Pack(Item{Text: frame}, units)
	included := len(pk.Items) - 1
	r := Rendered{
		Used: pk.Used, Budget: pk.Budget, Truncated: pk.Truncated,
		OverBudget: pk.OverBudget, Dropped: pk.Dropped, Outlined: pk.Outlined,
		Focus:   min(included, len(s.Focus)),
		Horizon: max(included-len(s.Focus), 0),
	}

	var b strings.Builder
	b.WriteString(title)
	b.WriteString(anchor)
	layers := 0
	if anchor != "" {
		layers++
	}
	if r.Focus > 0 {
		if layers++; layers > 1 {
			b.WriteString(separator)
		}
		b.WriteString(focusHeading)
		for _, u := range pk.Items[1 : 1+r.Focus] {
			b.WriteString(u.Text)
		}
	}
	if r.Horizon > 0 {
		if layers++; layers > 1 {
			b.WriteString(separator)
		}
		tree := renderTree(s.Horizon[:r.Horizon])
		fence := strings.Repeat("`", max(3, longestBacktickRun(tree)+1))
		b.WriteString(horizonHeading + fence + "\n" + tree + fence + "\n" + closing)
	}
	if r.Truncated {
		b.WriteString("\n" + TruncationWarning + "\n")
	}
	r.Markdown = b.String()
	return r
}

// horizonUnits gives each horizon entry the text its cost is estimated
// on: its tree line and the lines of the directories it is the first to
// need, drawn as if each were a middle child (the last child's "└── " costs
// the same).
func horizonUnits(entries []HorizonEntry) []Item {
	drawn := map[string]bool{}
	units := make([]Item, 0, len(entries))
	for _, h := range entries {
		var b strings.Builder
		segs, dir := splitPath(h.Path)
		key := ""
		for i, seg := range segs {
			last := i == len(segs)-1
			if !last || dir {
				seg += "/"
			}
			key += seg
			if drawn[key] {
				if last { // already drawn as an implied directory
					b.WriteString(comment(h) + "\n")
				}
				continue
			}
			drawn[key] = true
			if i > 0 {
				b.WriteString(strings.Repeat("│   ", i-1) + "├── ")
			}
			b.WriteString(seg)
			if last {
				b.WriteString(" " + comment(h))
			}
			b.WriteString("\n")
		}
		units = append(units, Item{ID: h.Path, Text: b.String()})
	}
	return units
}

func renderAnchor(s Sandwich) string {
	var b strings.Builder
	for _, sec := range []struct {
		heading string
		items   []string
	}{
		{"Rules", s.Rules},
		{"Constraints", s.Constraints},
		{"Recent Decisions", s.Decisions},
	} {
		if len(sec.items) == 0 {
			continue
		}
		b.WriteString("\n## " + sec.heading + "\n")
		for _, it := range sec.items {
			// Continuation lines are indented to stay inside the item.
			b.WriteString("- " + strings.ReplaceAll(strings.TrimSpace(it), "\n", "\n  ") + "\n")
		}
	}
	return b.String()
}

func renderFocus(f FocusFile) string {
	heading := "\n### " + f.Path
	if f.Role != "" {
		heading += " (" + f.Role + ")"
	}
	fence := strings.Repeat("`", max(3, longestBacktickRun(f.Content)+1))
	body := strings.TrimRight(f.Content, "\n")
	if body != "" {
		body += "\n"
	}
	return heading + "\n" + fence + f.Lang + "\n" + body + fence + "\n"
}

// renderFocusOutline shows a focus file by its outline, saying so in the
// heading; the outline's line ranges point into the file.
func renderFocusOutline(f FocusFile) string {
	heading := "\n### " + f.Path + " ("
	if f.Role != "" {
		heading += f.Role + "; "
	}
	heading += "outline: too long to include whole)"
	fence := strings.Repeat("`", max(3, longestBacktickRun(f.Outline)+1))
	return heading + "\n" + fence + "text\n" + strings.TrimRight(f.Outline, "\n") + "\n" + fence + "\n"
}

func longestBacktickRun(s string) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

func comment(h HorizonEntry) string {
	c := "#"
	if s := strings.Join(strings.Fields(h.Summary), " "); s != "" {
		c += " " + s
	}
	return c + " [expand: " + NodeID(h.Path) + "]"
}

// splitPath returns the segments of a cleaned path and whether it names a
// directory.
func splitPath(p string) ([]string, bool) {
	dir := strings.HasSuffix(p, "/")
	c := cleanPath(p)
	if c == "" {
		return []string{"."}, true
	}
	return strings.Split(c, "/"), dir
}

type treeNode struct {
	name     string // the segment, with a trailing "/" for a directory
	comment  string // "" for a directory only implied by its contents
	children []*treeNode
	index    map[string]*treeNode
}

func (n *treeNode) child(name string) *treeNode {
	if c, ok := n.index[name]; ok {
		return c
	}
	if n.index == nil {
		n.index = map[string]*treeNode{}
	}
	c := &treeNode{name: name}
	n.index[name] = c
	n.children = append(n.children, c)
	return c
}

// renderTree draws the entries as a tree with box-drawing characters,
// siblings in the order they first appear; only listed entries carry a
// comment with their expand id.
func renderTree(entries []HorizonEntry) string {
	var root treeNode
	for _, h := range entries {
		segs, dir := splitPath(h.Path)
		n := &root
		for i, s := range segs {
			if i < len(segs)-1 || dir {
				s += "/"
			}
			n = n.child(s)
		}
		if n.comment == "" {
			n.comment = comment(h)
		}
	}
	type line struct{ text, comment string }
	var lines []line
	var walk func(n *treeNode, prefix string)
	walk = func(n *treeNode, prefix string) {
		for i, c := range n.children {
			branch, indent := "├── ", "│   "
			if i == len(n.children)-1 {
				branch, indent = "└── ", "    "
			}
			lines = append(lines, line{prefix + branch + c.name, c.comment})
			walk(c, prefix+indent)
		}
	}
	for _, top := range root.children {
		lines = append(lines, line{top.name, top.comment})
		walk(top, "")
	}
	col := commentColumn
	for _, l := range lines {
		if l.comment != "" {
			col = max(col, utf8.RuneCountInString(l.text)+2)
		}
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
		if l.comment != "" {
			b.WriteString(strings.Repeat(" ", col-utf8.RuneCountInString(l.text)))
			b.WriteString(l.comment)
		}
		b.WriteString("\n")
	}
	return b.String()
}
