package scenes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/graph"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/markdown"
	"github.com/cuedeck/cuedeck/pkg/core/outline"
	"github.com/cuedeck/cuedeck/pkg/core/scene"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// CodeCycle is the error code of a cycle in a scene's references.
const CodeCycle = 1002

// CycleError is error 1002: the root card's references form a cycle. Path
// starts and ends with the same node; cards are named by id, docs by path.
type CycleError struct {
	Path []string
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("Cycle Error (%d): cycle detected: %s; remove one of these references", CodeCycle, graph.FormatPath(e.Path))
}

// Unwrap returns graph.ErrCycle.
func (e *CycleError) Unwrap() error { return graph.ErrCycle }

// Options say which scene to build.
type Options struct {
	// CardID names the root card; "" means the one with status active.
	CardID string
	// Budget is the token limit; zero or less means scene.DefaultBudget.
	Budget int
	// Decisions, when set, gives the anchor its "Recent Decisions": those
	// of Repo ("" for the source's default repo), preferring the ones
	// that touch the scene's focus files. Now is the time they are
	// measured from; zero means the current time.
	Decisions DecisionSource
	Repo      string
	Now       time.Time
	// NoOutlines packs as seed 000 §2 alone does: a node that does not
	// fit whole is not shown as its outline, and packing stops there. For
	// comparisons of what outlines save.
	NoOutlines bool
	// Seen, when set, remembers what each Session was sent: a focus file
	// the session already holds is sent as "unchanged" or as a delta.
	Seen    *Seen
	Session string
	// Importance, when set, orders the nodes of each depth by their
	// file's importance in Repo, highest first, after the depth priority
	// (graph.OrderWithinDepth), so a budget that cuts a depth short keeps
	// its important files.
	Importance ImportanceSource
}

// ImportanceSource scores a repo's files in [0, 1] (seed 000 §5 strategy
// 3, package importance); an *edge.Edge is one. repo "" means the
// source's default repo.
type ImportanceSource interface {
	Importance(repo, path string) float64
}

// DecisionSource is where a scene gets its team's recent decisions; an
// *edge.Edge is one, so a team edge and a laptop daemon show the same.
type DecisionSource interface {
	// RecentDecisions returns at most limit decisions and experiences of
	// repo recent at now, best first, with guarded texts.
	RecentDecisions(repo string, files []string, now time.Time, limit int) []events.MemoryRecord
}

// MaxDecisions bounds the anchor's decisions (seed 004 §3: "keep context
// manageable").
const MaxDecisions = 10

// Dead is a reference that leads nowhere.
type Dead struct {
	From   string // workspace-relative path of the referring file
	Line   int
	Target string
	Anchor string // set when the file exists but the heading does not
}

func (d Dead) String() string {
	t := d.Target
	if d.Anchor != "" {
		t += "#" + d.Anchor
	}
	return fmt.Sprintf("%s:%d: %s", d.From, d.Line, t)
}

// Result is a built scene.
type Result struct {
	Markdown string
	Root     Card
	// Tokens is Markdown's count by package tokens; Budget the limit.
	Tokens, Budget int
	// Nodes is how many nodes the root reaches, itself included; Included
	// how many of them are in the scene.
	Nodes, Included int
	Truncated       bool
	// OverBudget reports that the root card alone exceeds the budget; it
	// is included whole anyway.
	OverBudget bool
	// Outlined are the focus entries (paths, path#heading for sections)
	// shown as their outline because they did not fit whole.
	Outlined []string
	// Dead lists references that were skipped because they lead nowhere.
	Dead []Dead
	// Redacted counts the secrets the guard replaced.
	Redacted int
}

// node is one vertex of the scene graph: a card, a whole file or a section.
type node struct {
	id      string
	display string // what the focus heading shows
	file    string
	text    string
	start   int // the file's line text starts at
	links   []markdown.Link
}

type parsed struct {
	src []byte
	doc markdown.Document
}

// builder follows references from the root card.
type builder struct {
	fsys     fs.FS
	cards    map[string]Card // by id
	cardPath map[string]string
	files    map[string]*parsed
	nodes    map[string]*node
	g        *graph.Graph
	dead     []Dead
}

// Build assembles the scene for opts from fsys, which should be an
// os.Root's FS so that no reference leaves the workspace. A cycle among the
// root's references is a *CycleError; a root that cannot be chosen is
// ErrNoActiveCard, ErrCardNotFound or an error naming the active cards.
func Build(fsys fs.FS, opts Options) (Result, error) {
	cards, err := Cards(fsys)
	if err != nil {
		return Result{}, err
	}
	root, err := Root(cards, opts.CardID)
	if err != nil {
		return Result{}, err
	}
	b := &builder{
		fsys: fsys, cards: map[string]Card{}, cardPath: map[string]string{},
		files: map[string]*parsed{}, nodes: map[string]*node{}, g: graph.New(),
	}
	for _, c := range cards {
		if _, dup := b.cards[c.ID]; !dup {
			b.cards[c.ID] = c
			b.cardPath[c.Path] = c.ID
		}
	}
	b.follow(root)
	if err := b.g.Validate(); err != nil {
		var ce *graph.CycleError
		if errors.As(err, &ce) {
			return Result{}, &CycleError{Path: ce.Path}
		}
		return Result{}, err
	}
	order, err := b.g.Linearise(root.ID)
	if err != nil {
		return Result{}, err
	}
	if opts.Importance != nil {
		graph.OrderWithinDepth(order, func(id string) float64 {
			if n := b.nodes[id]; n != nil {
				return opts.Importance.Importance(opts.Repo, n.file)
			}
			return 0
		})
	}

	redacted := 0
	redact := func(s string) string {
		out, f := guard.Redact(s)
		redacted += len(f)
		return out
	}
	var sw scene.Sandwich
	var focus []*node // sw.Focus's nodes
	for _, e := range order {
		if e.Class == graph.Global {
			continue
		}
		n := b.nodes[e.ID]
		role := "indirect"
		switch e.Class {
		case graph.Root:
			role = "active card"
		case graph.Direct:
			role = "direct"
		}
		sw.Focus = append(sw.Focus, scene.FocusFile{Path: n.display, Role: role, Lang: lang(n.file), Content: redact(n.text)})
		focus = append(focus, n)
	}
	for _, r := range readRules(fsys) {
		sw.Rules = append(sw.Rules, redact(r))
	}
	if opts.Decisions != nil {
		now := opts.Now
		if now.IsZero() {
			now = time.Now()
		}
		files := make([]string, len(sw.Focus))
		for i, f := range sw.Focus {
			files[i], _, _ = strings.Cut(f.Path, "#")
		}
		for _, d := range opts.Decisions.RecentDecisions(opts.Repo, files, now, MaxDecisions) {
			sw.Decisions = append(sw.Decisions, redact(DecisionLine(d, now)))
		}
	}
	sw.Horizon = horizon(fsys, sw.Focus)

	// Outlines are made from the files' own text: a file the session
	// already holds may stand in the page as its delta.
	full := sw.Focus
	if opts.Seen != nil {
		sw.Focus = opts.Seen.since(opts.Session, full)
	}
	outlineOf := func(i int) string {
		o, _ := outline.RenderFrom(focus[i].file, []byte(full[i].Content), focus[i].start)
		return o
	}
	if opts.NoOutlines {
		outlineOf = nil
	}
	res := pack(sw, opts.Budget, outlineOf)
	if opts.Seen != nil {
		// The page holds a prefix of the focus files; those it holds as
		// their outline the session has not received whole.
		outlined := map[string]bool{}
		for _, id := range res.Outlined {
			outlined[id] = true
		}
		var whole []scene.FocusFile
		for _, f := range full[:res.Included] {
			if !outlined[f.Path] {
				whole = append(whole, f)
			}
		}
		opts.Seen.sent(opts.Session, whole)
	}
	res.Root, res.Nodes, res.Dead = root, len(sw.Focus), b.dead
	res.Redacted = redacted
	return res, nil
}

// pack renders the sandwich under budget with the root card whole, and
// checks the page by the project's token count: the sandwich's own tally
// leaves out the truncation warning and the joins between parts, so the
// packer's budget shrinks until the rendered page fits. When a focus file
// does not fit, it and the files before it (the root aside) get their
// outlines from outlineOf (given a focus index; "" for none) and the page
// is packed again, so that a file too long to include whole comes as its
// outline; outlines are made only as far as packing reaches.
func pack(sw scene.Sandwich, budget int, outlineOf func(i int) string) Result {
	if budget <= 0 {
		budget = scene.DefaultBudget
	}
	res := Result{Budget: budget}
	b := budget - tokens.Count("\n"+scene.TruncationWarning+"\n")
	// Re-renders count the same units again; count each once.
	counted := map[string]int{}
	estimate := func(s string) int {
		n, ok := counted[s]
		if !ok {
			n = tokens.Count(s)
			counted[s] = n
		}
		return n
	}
	// sw.Focus[1:next] have their outlines (the root is always whole);
	// they are made as packing reaches them, so a scene that fits whole
	// parses nothing.
	next := 1
	if outlineOf == nil {
		next = len(sw.Focus)
	} else {
		sw.Focus = slices.Clone(sw.Focus)
	}
	for round := 0; round < 8; {
		r := scene.Packer{Budget: b, Estimate: estimate}.Render(sw)
		if k := r.Focus; r.Truncated && k >= next && k < len(sw.Focus) {
			for ; next <= k; next++ {
				sw.Focus[next].Outline = outlineOf(next)
			}
			continue
		}
		round++
		if r.Focus == 0 && len(sw.Focus) > 0 {
			if len(sw.Rules) > 0 || len(sw.Decisions) > 0 {
				// The root card matters more than the rules and decisions.
				sw.Rules, sw.Decisions = nil, nil
				continue
			}
			break // the root alone does not fit
		}
		md, _ := guard.Redact(r.Markdown)
		n, joins := countParts(md, estimate)
		res.Markdown, res.Tokens, res.Included, res.Truncated = md, n, r.Focus, r.Truncated
		res.Outlined = r.Outlined
		if n+joins < budget {
			return res
		}
		b -= n + joins - budget + 8
	}
	// The root card alone: whole, over budget, and the rest marked missing.
	only := scene.Sandwich{Focus: sw.Focus[:min(1, len(sw.Focus))]}
	r := scene.Packer{Budget: 1 << 40}.Render(only)
	md := r.Markdown
	res.Truncated = len(sw.Focus) > 1 || len(sw.Horizon) > 0 || len(sw.Rules) > 0 || len(sw.Decisions) > 0
	if res.Truncated {
		md += "\n" + scene.TruncationWarning + "\n"
	}
	res.Markdown, _ = guard.Redact(md)
	res.Tokens, res.Included = tokens.Count(res.Markdown), len(only.Focus)
	res.OverBudget = res.Tokens >= budget
	return res
}

// countParts counts md as the sum of its parts cut before each focus
// heading, so that the focus files, counted while packing, are looked up
// rather than counted again; this halves the cost of a scene. The sum is
// the count of the whole within a token or so per join, and in practice
// above it, since a join splits the blank line the encoder would take as
// one token; callers keep a token per join in hand.
func countParts(md string, estimate func(string) int) (n, joins int) {
	for {
		i := strings.Index(md, "\n\n### ")
		if i < 0 {
			return n + estimate(md), joins
		}
		n += estimate(md[:i+1])
		md = md[i+1:]
		joins++
	}
}

func (b *builder) parse(p string) (*parsed, error) {
	if f, ok := b.files[p]; ok {
		return f, nil
	}
	src, err := fs.ReadFile(b.fsys, p)
	if err != nil {
		return nil, err
	}
	f := &parsed{src: src}
	if isMarkdown(p) {
		f.doc = markdown.Parse(src)
	}
	b.files[p] = f
	return f, nil
}

// follow adds the root card and everything it reaches, breadth first.
func (b *builder) follow(root Card) {
	b.nodes[root.ID] = &node{id: root.ID, display: root.Path, file: root.Path, text: string(root.Src), start: 1, links: root.Doc.Links}
	b.g.AddNode(root.ID)
	queue := []string{root.ID}
	for len(queue) > 0 {
		n := b.nodes[queue[0]]
		queue = queue[1:]
		var next []string
		if c, ok := b.cards[n.id]; ok && c.Path == n.file {
			for _, dep := range c.DependsOn {
				if _, ok := b.cards[dep]; ok {
					next = append(next, dep)
				} else {
					b.dead = append(b.dead, Dead{From: n.file, Line: depLine(c), Target: dep})
				}
			}
		}
		for _, l := range n.links {
			if id, ok := b.target(n, l); ok {
				next = append(next, id)
			}
		}
		for _, id := range next {
			if id == n.id {
				continue // a node's reference to itself adds nothing
			}
			if _, seen := b.nodes[id]; !seen {
				if !b.add(id) {
					continue
				}
				queue = append(queue, id)
			}
			b.g.AddEdge(n.id, id)
		}
	}
}

// target resolves l, found in n, to a node id, creating nothing yet.
func (b *builder) target(n *node, l markdown.Link) (string, bool) {
	if l.Kind == markdown.KindExternal || (l.Kind == markdown.KindLink && l.Target == "") {
		return "", false
	}
	p, ok := Resolve(b.fsys, n.file, l)
	if !ok {
		b.dead = append(b.dead, Dead{From: n.file, Line: l.Line, Target: l.Target})
		return "", false
	}
	if id, ok := b.cardPath[p]; ok && l.Anchor == "" {
		return id, true
	}
	if l.Anchor == "" || !isMarkdown(p) {
		return p, true
	}
	f, err := b.parse(p)
	if err != nil {
		b.dead = append(b.dead, Dead{From: n.file, Line: l.Line, Target: l.Target})
		return "", false
	}
	i := markdown.FindHeading(f.doc, l.Anchor)
	if i < 0 {
		b.dead = append(b.dead, Dead{From: n.file, Line: l.Line, Target: l.Target, Anchor: l.Anchor})
		return "", false
	}
	return p + "#" + f.doc.Headings[i].Slug, true
}

// add creates the node for id (a card id, a path or path#slug); false if
// its file cannot be read or is not text.
func (b *builder) add(id string) bool {
	if c, ok := b.cards[id]; ok {
		b.nodes[id] = &node{id: id, display: c.Path, file: c.Path, text: string(c.Src), start: 1, links: c.Doc.Links}
		b.g.AddNode(id)
		return true
	}
	p, slug, _ := strings.Cut(id, "#")
	f, err := b.parse(p)
	if err != nil || bytes.IndexByte(f.src, 0) >= 0 {
		return false
	}
	n := &node{id: id, display: p, file: p, text: string(f.src), start: 1, links: f.doc.Links}
	if slug != "" {
		i := markdown.FindHeading(f.doc, slug)
		if i < 0 {
			return false
		}
		h := f.doc.Headings[i]
		n.display = p + "#" + h.Text
		n.text, n.start, _, _ = markdown.Section(f.src, f.doc, slug)
		n.links = nil
		for _, l := range f.doc.Links {
			if l.Line >= h.Line && l.Line <= h.EndLine {
				n.links = append(n.links, l)
			}
		}
	}
	b.nodes[id] = n
	b.g.AddNode(id)
	return true
}

func depLine(c Card) int {
	for i, line := range strings.Split(string(c.Src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "depends_on") {
			return i + 1
		}
	}
	return 1
}

func isMarkdown(p string) bool { return strings.EqualFold(path.Ext(p), ".md") }

func lang(p string) string {
	switch ext := strings.ToLower(strings.TrimPrefix(path.Ext(p), ".")); ext {
	case "md":
		return "markdown"
	case "rs":
		return "rust"
	case "py":
		return "python"
	case "yml":
		return "yaml"
	default:
		return ext
	}
}

// Rules returns the items of the first of RulesFiles found in fsys, as a
// scene shows them, and that file's path ("" when there is none). The
// daemon's hook context (internal/hookserver) puts them on top too.
func Rules(fsys fs.FS) (items []string, file string) {
	for _, p := range RulesFiles {
		if src, err := fs.ReadFile(fsys, p); err == nil {
			return ruleItems(src), p
		}
	}
	return nil, ""
}

// readRules returns the items of the first rules file found: each list
// item, or each paragraph when the file has no list.
func readRules(fsys fs.FS) []string {
	items, _ := Rules(fsys)
	return items
}

// ruleItems splits a rules file into its items.
func ruleItems(src []byte) []string {
	var items []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			items = append(items, s)
		}
		cur.Reset()
	}
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
			flush()
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			flush()
			cur.WriteString(t[2:])
		default:
			if cur.Len() > 0 {
				cur.WriteString("\n")
			}
			cur.WriteString(t)
		}
	}
	flush()
	return items
}

// maxHorizon bounds the directory skeleton.
const maxHorizon = 60

// horizon lists the workspace's directories two levels deep, those holding
// focus files first, each with its number of entries; hidden and vendored
// directories are left out.
func horizon(fsys fs.FS, focus []scene.FocusFile) []scene.HorizonEntry {
	count := map[string]int{}
	var dirs []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return
		}
		count[dir] = len(ents)
		if depth == 2 {
			return
		}
		for _, e := range ents {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || skipDir[name] {
				continue
			}
			p := name
			if dir != "." {
				p = dir + "/" + name
			}
			dirs = append(dirs, p)
			walk(p, depth+1)
		}
	}
	walk(".", 0)
	hot := map[string]bool{}
	for _, f := range focus {
		for d := path.Dir(strings.SplitN(f.Path, "#", 2)[0]); d != "." && d != "/"; d = path.Dir(d) {
			hot[d] = true
		}
	}
	sort.SliceStable(dirs, func(i, j int) bool { return hot[dirs[i]] && !hot[dirs[j]] })
	var out []scene.HorizonEntry
	for _, d := range dirs[:min(len(dirs), maxHorizon)] {
		summary := fmt.Sprintf("%d entries", count[d])
		if count[d] == 1 {
			summary = "1 entry"
		}
		out = append(out, scene.HorizonEntry{Path: d + "/", Summary: summary})
	}
	return out
}

var skipDir = map[string]bool{"node_modules": true, "vendor": true, "target": true, "dist": true, "build": true}

// Vendored reports whether a directory of this name holds vendored or
// built files, which no walk of the workspace for scenes, the finder or
// the doctor enters.
func Vendored(name string) bool { return skipDir[name] }
