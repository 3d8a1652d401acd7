// Package doctor is `cue doctor`: it checks a workspace's config syntax,
// the YAML frontmatter of its markdown and cards, its links and anchors,
// the dependency cycles among its cards and, when a daemon runs, its
// dead-lettered events and consumer lag, and prints each problem with its
// file, line and a caret under the column.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/humanize"
	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/core/card"
	"github.com/cuedeck/cuedeck/pkg/core/graph"
	"github.com/cuedeck/cuedeck/pkg/core/markdown"
)

// Severity orders findings; only errors make the doctor fail.
type Severity int

// The severities.
const (
	Note Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// Finding is one problem, or a note about a check that did not run.
type Finding struct {
	Severity Severity
	Check    string // one of the Check* kinds
	File     string // workspace-relative; "" when about no file
	Line     int    // 1-indexed; 0 for none
	Col      int    // 1-indexed rune column; 0 for none
	Msg      string
	Source   string // the text of Line, for the caret
}

// The kinds of finding, in the order Print lists them among those of
// equal severity.
const (
	CheckConfig       = "config"
	CheckRead         = "read"
	CheckFrontmatter  = "frontmatter"
	CheckLink         = "link"
	CheckAnchor       = "anchor"
	CheckSiteAbsolute = "site-absolute"
	CheckCycle        = "cycle"
	CheckDaemon       = "daemon"
)

// kindNames name each kind's findings in the summary.
var kindNames = map[string]string{
	CheckConfig:       "config errors",
	CheckRead:         "unreadable files",
	CheckFrontmatter:  "frontmatter problems",
	CheckLink:         "dead links",
	CheckAnchor:       "dead anchors",
	CheckSiteAbsolute: "site-absolute links not checked",
	CheckCycle:        "card dependency cycles",
	CheckDaemon:       "daemon",
}

var kindOrder = []string{CheckConfig, CheckRead, CheckFrontmatter, CheckLink, CheckAnchor, CheckCycle, CheckSiteAbsolute, CheckDaemon}

// Report is the outcome of Run.
type Report struct {
	Findings []Finding
	// Files counts the markdown files checked.
	Files int
	// SiteRoot is the configured [docs] site_root, "" when none.
	SiteRoot string
}

// Errors counts the findings of severity Error.
func (r Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == Error {
			n++
		}
	}
	return n
}

// validStatus are the card statuses.
var validStatus = map[string]bool{"todo": true, "active": true, "done": true, "archived": true}

// Run checks ws. ctx bounds the daemon check.
func Run(ctx context.Context, ws *workspace.Workspace) (Report, error) {
	var r Report
	if cfg := checkConfig(ws, &r); cfg != nil {
		r.SiteRoot = path.Clean(filepath.ToSlash(cfg.Docs.SiteRoot))
		if cfg.Docs.SiteRoot == "" {
			r.SiteRoot = ""
		}
	}
	root, err := os.OpenRoot(ws.Root)
	if err != nil {
		return r, err
	}
	defer root.Close()
	fsys := root.FS()
	if r.SiteRoot != "" {
		if st, err := fs.Stat(fsys, r.SiteRoot); err != nil || !st.IsDir() {
			n, line, col := keyLineIn(ws, "site_root")
			r.add(Finding{Severity: Error, Check: CheckConfig, File: workspace.ConfigFile, Line: n, Col: col, Source: line,
				Msg: fmt.Sprintf("[docs] site_root %q is not a directory of the workspace; site-absolute links are not checked", r.SiteRoot)})
			r.SiteRoot = ""
		}
	}
	files, err := markdownFiles(fsys)
	if err != nil {
		return r, err
	}
	r.Files = len(files)
	docs := map[string]markdown.Document{}
	srcs := map[string][]byte{}
	for _, p := range files {
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			r.add(Finding{Severity: Error, Check: CheckRead, File: p, Msg: err.Error()})
			continue
		}
		srcs[p], docs[p] = src, markdown.Parse(src)
	}
	for _, p := range files {
		if src, ok := srcs[p]; ok {
			checkFrontmatter(p, src, docs[p], &r)
			checkLinks(fsys, p, src, docs[p], docs, &r, r.SiteRoot)
		}
	}
	checkCycles(fsys, &r)
	checkDaemon(ctx, ws, fsys, &r)
	return r, nil
}

func (r *Report) add(f Finding) { r.Findings = append(r.Findings, f) }

var lineRE = regexp.MustCompile(`line (\d+)`)

// checkConfig reports a config that does not load, and returns the one
// that does.
func checkConfig(ws *workspace.Workspace, r *Report) *workspace.Config {
	cfg, err := ws.LoadConfig()
	if err != nil {
		f := Finding{Severity: Error, Check: CheckConfig, File: workspace.ConfigFile, Msg: err.Error()}
		if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
			f.Line, _ = strconv.Atoi(m[1])
			if src, err := os.ReadFile(ws.Path(workspace.ConfigFile)); err == nil {
				f.Source = lineOf(src, f.Line)
				f.Col = firstNonSpace(f.Source)
			}
			// The path is in the location already.
			if _, rest, ok := strings.Cut(f.Msg, fmt.Sprintf("line %d: ", f.Line)); ok {
				f.Msg = rest
			}
		}
		r.add(f)
	}
	return cfg
}

// keyLineIn finds key in the workspace's config file.
func keyLineIn(ws *workspace.Workspace, key string) (int, string, int) {
	src, err := os.ReadFile(ws.Path(workspace.ConfigFile))
	if err != nil {
		return 0, "", 0
	}
	for i, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), key); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
			return i + 1, line, firstNonSpace(line)
		}
	}
	return 0, "", 0
}

// markdownFiles lists the workspace's .md files: everywhere but hidden
// directories (.cuedeck is walked, its cache is not) and vendored trees.
func markdownFiles(fsys fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // unreadable entries are not the doctor's business
		}
		if d.IsDir() {
			name := d.Name()
			if p != "." && ((strings.HasPrefix(name, ".") && p != workspace.MetaDir) || scenes.Vendored(name) || p == workspace.CacheDir) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.EqualFold(path.Ext(p), ".md") && p != scenes.SceneFile {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

func isCard(p string) bool { return path.Dir(p) == scenes.CardsDir }

func checkFrontmatter(p string, src []byte, doc markdown.Document, r *Report) {
	if fe := doc.FrontmatterErr; fe != nil {
		line := lineOf(src, fe.Line)
		r.add(Finding{Severity: Error, Check: CheckFrontmatter, File: p, Line: fe.Line, Col: yamlColumn(line, fe.Msg), Msg: fe.Msg, Source: line})
		return
	}
	if !isCard(p) {
		return
	}
	if doc.Frontmatter == nil {
		r.add(Finding{Severity: Error, Check: CheckFrontmatter, File: p, Line: 1, Col: 1, Source: lineOf(src, 1),
			Msg: "card has no frontmatter; start it with a --- block holding id, title and status"})
		return
	}
	for _, key := range []string{"id", "title", "status"} {
		if _, ok := doc.Frontmatter[key]; !ok {
			r.add(Finding{Severity: Warning, Check: CheckFrontmatter, File: p, Line: 1, Msg: fmt.Sprintf("card has no %s", key)})
		}
	}
	if s, ok := doc.Frontmatter["status"]; ok {
		if str, _ := s.(string); !validStatus[str] {
			n, line, col := keyLine(src, "status")
			r.add(Finding{Severity: Error, Check: CheckFrontmatter, File: p, Line: n, Col: col, Source: line,
				Msg: fmt.Sprintf("status %v is not one of todo, active, done, archived", s)})
		}
	}
}

// keyLine finds a top-level frontmatter key: its line number, text and the
// column of its value.
func keyLine(src []byte, key string) (int, string, int) {
	for i, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			return i + 1, line, len([]rune(key)) + 2 + (len(rest) - len(strings.TrimLeft(rest, " ")))
		}
	}
	return 1, "", 0
}

// yamlColumn guesses where on line the YAML parser stumbled; the parser
// reports only lines.
func yamlColumn(line, msg string) int {
	if i := strings.IndexByte(line, '\t'); i >= 0 {
		return runeCol(line, i)
	}
	if strings.Contains(msg, "mapping values") {
		if first := strings.IndexByte(line, ':'); first >= 0 {
			if j := strings.IndexByte(line[first+1:], ':'); j >= 0 {
				return runeCol(line, first+1+j)
			}
		}
	}
	if strings.Contains(msg, "cannot start any token") {
		if i := strings.IndexAny(line, "@`%"); i >= 0 {
			return runeCol(line, i)
		}
	}
	return firstNonSpace(line)
}

func runeCol(line string, byteIdx int) int { return len([]rune(line[:byteIdx])) + 1 }

func firstNonSpace(line string) int {
	t := strings.TrimLeft(line, " \t")
	if t == "" {
		return 1
	}
	return runeCol(line, len(line)-len(t))
}

func lineOf(src []byte, n int) string {
	lines := strings.Split(string(src), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimRight(lines[n-1], "\r")
}

func checkLinks(fsys fs.FS, p string, src []byte, doc markdown.Document, docs map[string]markdown.Document, r *Report, siteRoot string) {
	for _, l := range doc.Links {
		if l.Kind == markdown.KindExternal {
			continue
		}
		line := lineOf(src, l.Line)
		col := 0
		needle := l.Target
		if needle == "" {
			needle = "#" + l.Anchor
		}
		if i := strings.Index(line, needle); i >= 0 {
			col = runeCol(line, i)
		}
		target := p
		if l.Target != "" {
			t, ok := resolveLink(fsys, p, l, siteRoot)
			switch {
			case ok:
				target = t
			case siteAbsolute(l) && siteRoot == "":
				r.add(Finding{Severity: Warning, Check: CheckSiteAbsolute, File: p, Line: l.Line, Col: col, Source: line,
					Msg: fmt.Sprintf("site-absolute link %s not checked: set [docs] site_root in %s (e.g. \"content/en\" for Hugo) to check it", l.Target, workspace.ConfigFile)})
				continue
			case siteAbsolute(l):
				r.add(Finding{Severity: Error, Check: CheckLink, File: p, Line: l.Line, Col: col, Source: line,
					Msg: fmt.Sprintf("dead link: %s is no page under %s (nor a workspace path)", l.Target, siteRoot)})
				continue
			default:
				r.add(Finding{Severity: Error, Check: CheckLink, File: p, Line: l.Line, Col: col, Source: line,
					Msg: fmt.Sprintf("dead link: %s does not exist", l.Target)})
				continue
			}
		}
		if l.Anchor == "" || !strings.EqualFold(path.Ext(target), ".md") {
			continue
		}
		td, ok := docs[target]
		if !ok {
			src, err := fs.ReadFile(fsys, target)
			if err != nil {
				continue
			}
			td = markdown.Parse(src)
			docs[target] = td
		}
		if markdown.FindHeading(td, l.Anchor) < 0 {
			if i := strings.Index(line, "#"+l.Anchor); i >= 0 {
				col = runeCol(line, i)
			}
			r.add(Finding{Severity: Error, Check: CheckAnchor, File: p, Line: l.Line, Col: col, Source: line,
				Msg: fmt.Sprintf("dead anchor: %s has no heading %q", target, l.Anchor)})
		}
	}
}

// siteAbsolute reports whether l is a markdown link to a path from the
// site's root, such as /docs/foo/.
func siteAbsolute(l markdown.Link) bool {
	return l.Kind == markdown.KindLink && strings.HasPrefix(l.Target, "/")
}

// resolveLink finds the file l in from leads to. Besides what
// scenes.Resolve tries (the target beside from, or from the workspace
// root for a site-absolute link), with a site root it reads the target as
// a site URL, the way Hugo serves pages: a site-absolute link from the
// site root, a relative one from the URL of the page from is (a page
// docs/bar.md is served at /docs/bar/).
func resolveLink(fsys fs.FS, from string, l markdown.Link, siteRoot string) (string, bool) {
	if t, ok := scenes.Resolve(fsys, from, l); ok {
		return t, true
	}
	if siteRoot == "" || l.Kind != markdown.KindLink {
		return "", false
	}
	target, _, _ := strings.Cut(l.Target, "?")
	url := target
	if !strings.HasPrefix(target, "/") {
		page, ok := pageURL(siteRoot, from)
		if !ok {
			return "", false
		}
		url = path.Join(page, target)
	}
	for _, c := range siteCandidates(siteRoot, url) {
		if st, err := fs.Stat(fsys, c); err == nil && !st.IsDir() {
			return c, true
		}
	}
	return "", false
}

// pageURL is the URL path Hugo serves the page file at: its path under
// siteRoot without the extension, as a directory; an index.md or
// _index.md is its directory's page.
func pageURL(siteRoot, file string) (string, bool) {
	rel, ok := strings.CutPrefix(file, siteRoot+"/")
	if !ok {
		return "", false
	}
	switch base := path.Base(rel); {
	case strings.EqualFold(base, "index.md"), strings.EqualFold(base, "_index.md"):
		rel = path.Dir(rel)
	default:
		rel = strings.TrimSuffix(rel, path.Ext(rel))
	}
	if rel == "." {
		return "/", true
	}
	return "/" + rel + "/", true
}

// siteCandidates are the files under siteRoot a site URL may be served
// from: the file itself, or for a page the markdown file, a leaf
// bundle's index.md or a section's _index.md (Hugo's conventions); a
// .html URL (ugly URLs) is its page's.
func siteCandidates(siteRoot, url string) []string {
	rel := strings.TrimPrefix(path.Clean("/"+url), "/")
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	base := path.Join(siteRoot, rel)
	switch ext := strings.ToLower(path.Ext(rel)); {
	case rel == "":
		return []string{path.Join(siteRoot, "_index.md"), path.Join(siteRoot, "index.md")}
	case ext == ".md":
		return []string{base}
	case ext == ".html":
		base = strings.TrimSuffix(base, path.Ext(base))
		return []string{base + ".md", path.Join(base, "index.md"), path.Join(base, "_index.md")}
	}
	// A file (an image in a page bundle), else a page; a dot in a page's
	// name (/docs/v1.2/) is no extension.
	return []string{base, base + ".md", path.Join(base, "index.md"), path.Join(base, "_index.md")}
}

// checkCycles looks for a cycle among cards through depends_on and links
// from card to card.
func checkCycles(fsys fs.FS, r *Report) {
	cards, err := scenes.Cards(fsys)
	if err != nil || len(cards) == 0 {
		return
	}
	byPath := map[string]scenes.Card{}
	byID := map[string]scenes.Card{}
	for _, c := range cards {
		byPath[c.Path], byID[c.ID] = c, c
	}
	g := graph.New()
	for _, c := range cards {
		g.AddNode(c.ID)
		for _, d := range c.DependsOn {
			if _, ok := byID[d]; ok {
				g.AddEdge(c.ID, d)
			} else {
				n, line, col := keyLine(c.Src, "depends_on")
				if i := strings.Index(line, d); i >= 0 {
					col = runeCol(line, i)
				}
				r.add(Finding{Severity: Error, Check: CheckLink, File: c.Path, Line: n, Col: col, Source: line,
					Msg: fmt.Sprintf("depends_on names card %q, which does not exist", d)})
			}
		}
		for _, l := range c.Doc.Links {
			if t, ok := scenes.Resolve(fsys, c.Path, l); ok {
				if d, ok := byPath[t]; ok && d.ID != c.ID {
					g.AddEdge(c.ID, d.ID)
				}
			}
		}
	}
	cyc := g.Cycle()
	if cyc == nil {
		return
	}
	first := byID[cyc[0]]
	n, line, col := keyLine(first.Src, "depends_on")
	if line == "" {
		n, line, col = 1, "", 0
	}
	r.add(Finding{Severity: Error, Check: CheckCycle, File: first.Path, Line: n, Col: col, Source: line,
		Msg: fmt.Sprintf("dependency cycle (error %d): %s", scenes.CodeCycle, graph.FormatPath(cyc))})
}

func checkDaemon(ctx context.Context, ws *workspace.Workspace, fsys fs.FS, r *Report) {
	info, err := ws.ReadDaemonInfo()
	if errors.Is(err, workspace.ErrNoDaemon) || (err == nil && info.NATSURL == "") {
		r.add(Finding{Severity: Note, Check: CheckDaemon, Msg: "no daemon runs: dead letters and consumer lag not checked (start one with `cue up`)"})
		return
	}
	if err != nil {
		r.add(Finding{Severity: Warning, Check: CheckDaemon, Msg: err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, info.NATSURL, bus.ConnectOptions{Name: "cue-doctor"})
	if err != nil {
		r.add(Finding{Severity: Warning, Check: CheckDaemon, Msg: fmt.Sprintf("daemon pid %d unreachable: %v", info.PID, err)})
		return
	}
	defer conn.Close()
	rep, err := status.Collect(ctx, conn.JS)
	if err != nil {
		r.add(Finding{Severity: Warning, Check: CheckDaemon, Msg: fmt.Sprintf("reading the pipeline: %v", err)})
		return
	}
	if rep.DeadLetters > 0 {
		msg := fmt.Sprintf("%d events dead-lettered", rep.DeadLetters)
		for _, d := range rep.RecentDead {
			msg += fmt.Sprintf("\n    %s (consumer %s, %s deliveries): %s", d.Subject, d.Consumer, d.Deliveries, d.Error)
		}
		r.add(Finding{Severity: Warning, Check: CheckDaemon, Msg: msg + "\n    see `cue status`"})
	}
	sort.Slice(rep.Consumers, func(i, j int) bool { return rep.Consumers[i].Pending > rep.Consumers[j].Pending })
	for _, c := range rep.Consumers {
		if c.Pending > 0 || c.AckPending > 0 {
			r.add(Finding{Severity: Note, Check: CheckDaemon, Msg: fmt.Sprintf("consumer %s/%s lags: %d pending, %d awaiting ack", c.Stream, c.Name, c.Pending, c.AckPending)})
		}
	}
	if rep.DeadLetters == 0 {
		r.add(Finding{Severity: Note, Check: CheckDaemon, Msg: fmt.Sprintf("daemon pid %d: no dead letters", info.PID)})
	}
	if checkAgreement(ctx, conn.JS, info.Repo, rep, fsys, r) {
		checkEdge(ctx, conn, info.QueryPrefix, rep, r)
	}
}

// checkEdge compares what the daemon's edge serves with cue_docs: a store
// damaged in a way its checks missed would serve other documents, or
// none, while cue_docs is right.
func checkEdge(ctx context.Context, conn *bus.Conn, prefix string, rep status.Report, r *Report) {
	if prefix == "" {
		return
	}
	a, err := status.CompareServingEdge(ctx, conn, prefix, rep)
	switch {
	case err != nil:
		r.add(Finding{Severity: Warning, Check: CheckDaemon, Msg: fmt.Sprintf("the edge could not be compared with cue_docs: %v", err)})
	case a.Moving:
		r.add(Finding{Severity: Note, Check: CheckDaemon, Msg: "cue_docs kept changing: the edge was not compared with it; run `cue doctor` again once indexing has caught up"})
	case len(a.Disagreeing()) == 0:
		r.add(Finding{Severity: Note, Check: CheckDaemon, Msg: fmt.Sprintf("the edge serves what cue_docs holds (revision %d)", a.Revision)})
	default:
		for _, d := range a.Disagreeing() {
			r.add(Finding{Severity: Error, Check: CheckDaemon, Msg: fmt.Sprintf("repo %s: %s; %s", d.Repo, d.Problem(), status.EdgeRemedy)})
		}
	}
}

// restartRemedy is what brings derived state back in line with the files:
// at start ingest compares what it published with cue_docs and the cards
// with the task log, and publishes again what differs.
const restartRemedy = "restart the daemon (`cue down`, then `cue up`): at start it compares the cards with the task log and publishes again what the log lacks"

// checkAgreement compares, once indexing has caught up, the card files of
// the workspace with the task log (a card whose task the log lacks was
// lost with it) and every document of cue_docs with its file. It reports
// whether indexing had caught up. (Files cue_docs lacks are ingest's own
// comparison's to find, at start and every 10 minutes: a scan's count
// goes stale as the watcher indexes single files.)
func checkAgreement(ctx context.Context, js jetstream.JetStream, repo string, rep status.Report, fsys fs.FS, r *Report) bool {
	if rep.Files.Pending > 0 || rep.Files.Scanning || rep.Files.Listing {
		r.add(Finding{Severity: Note, Check: CheckDaemon, Msg: "indexing is under way: cards are compared with the task log once it has caught up"})
		return false
	}
	cards, err := fs.Glob(fsys, scenes.CardsDir+"/*.md")
	if err != nil || repo == "" {
		return true
	}
	board := tasks.NewBoard(js, nil)
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = board.Run(bctx); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case <-board.Ready():
	case <-ctx.Done():
		r.add(Finding{Severity: Warning, Check: CheckDaemon, Msg: "the task log could not be read in time: cards not compared with it"})
		return true
	}
	listed := board.Tasks(repo)
	var missing []string
	for _, p := range cards {
		// A card that does not parse has no task; the frontmatter check
		// reports it.
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			continue
		}
		c, err := card.Parse(src)
		if err != nil {
			continue
		}
		if _, ok := listed[c.Task.ID]; !ok {
			missing = append(missing, c.Task.ID)
		}
	}
	if len(missing) > 0 {
		r.add(Finding{Severity: Error, Check: CheckDaemon, Msg: fmt.Sprintf("%d card files have no task in the task log (%s); %s", len(missing), strings.Join(missing[:min(len(missing), 10)], ", "), restartRemedy)})
	}
	checkDocsMatchFiles(ctx, js, repo, fsys, r)
	return true
}

// checkDocsMatchFiles compares every document cue_docs holds for repo
// with its file, as `cue status` does (status.CompareFiles).
func checkDocsMatchFiles(ctx context.Context, js jetstream.JetStream, repo string, fsys fs.FS, r *Report) {
	a, err := status.CompareFiles(ctx, js, repo, fsys)
	if err != nil {
		r.add(Finding{Severity: Warning, Check: CheckDaemon, Msg: fmt.Sprintf("documents not compared with their files: %v", err)})
		return
	}
	if len(a.Differ) > 0 {
		r.add(Finding{Severity: Error, Check: CheckDaemon, Msg: fmt.Sprintf("%d indexed documents differ from their files (%s); if you just edited them, run `cue doctor` again, else %s", len(a.Differ), status.Sample(a.Differ), status.FilesRemedy)})
	}
	if len(a.Gone) > 0 {
		r.add(Finding{Severity: Error, Check: CheckDaemon, Msg: fmt.Sprintf("%d indexed documents have no file any more (%s); %s", len(a.Gone), status.Sample(a.Gone), status.FilesRemedy)})
	}
	if a.Agrees() {
		r.add(Finding{Severity: Note, Check: CheckDaemon, Msg: fmt.Sprintf("%d indexed documents match their files", a.Documents)})
	}
}

// PrintOptions choose how Print writes.
type PrintOptions struct {
	// Colour adds ANSI colours.
	Colour bool
	// All prints every finding; otherwise the first few of each kind.
	All bool
}

// firstFew is how many findings of a kind Print shows without All.
const firstFew = 3

// kindGroup is the findings of one kind, most severe first.
type kindGroup struct {
	kind     string
	findings []Finding
	counts   map[Severity]int
}

// groups sorts r's findings into kinds: kinds with errors first, then
// warnings, then notes, in kindOrder among equals; in a kind, the most
// severe first, then by file and line.
func (r Report) groups() []*kindGroup {
	byKind := map[string]*kindGroup{}
	var out []*kindGroup
	for _, f := range r.Findings {
		g := byKind[f.Check]
		if g == nil {
			g = &kindGroup{kind: f.Check, counts: map[Severity]int{}}
			byKind[f.Check] = g
			out = append(out, g)
		}
		g.findings = append(g.findings, f)
		g.counts[f.Severity]++
	}
	top := func(g *kindGroup) Severity {
		for _, s := range []Severity{Error, Warning} {
			if g.counts[s] > 0 {
				return s
			}
		}
		return Note
	}
	rank := func(kind string) int {
		if i := slices.Index(kindOrder, kind); i >= 0 {
			return i
		}
		return len(kindOrder)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := top(out[i]), top(out[j]); a != b {
			return a > b
		}
		return rank(out[i].kind) < rank(out[j].kind)
	})
	for _, g := range out {
		fs := g.findings
		sort.SliceStable(fs, func(i, j int) bool {
			if fs[i].Severity != fs[j].Severity {
				return fs[i].Severity > fs[j].Severity
			}
			if fs[i].File != fs[j].File {
				return fs[i].File < fs[j].File
			}
			return fs[i].Line < fs[j].Line
		})
	}
	return out
}

// name is what the summary calls the group's findings.
func (g *kindGroup) name() string {
	if n, ok := kindNames[g.kind]; ok {
		return n
	}
	return g.kind
}

// tally is "8,241 errors, 3 warnings".
func (g *kindGroup) tally() string {
	var parts []string
	for _, s := range []Severity{Error, Warning, Note} {
		if n := g.counts[s]; n > 0 {
			word := s.String() + "s"
			if n == 1 {
				word = s.String()
			}
			parts = append(parts, humanize.Thousands(n)+" "+word)
		}
	}
	return strings.Join(parts, ", ")
}

// Print writes the findings kind by kind, errors first, miette-style: the
// message, the location, the source line and a caret under the column.
// Without opts.All it shows the first few of each kind and counts the
// rest; a summary of every kind with its counts ends the report.
func (r Report) Print(w io.Writer, opts PrintOptions) {
	paint := func(code, s string) string {
		if !opts.Colour {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	colours := map[Severity]string{Error: "1;31", Warning: "1;33", Note: "1;36"}
	groups := r.groups()
	for _, g := range groups {
		shown := g.findings
		if !opts.All && len(shown) > firstFew {
			shown = shown[:firstFew]
		}
		for _, f := range shown {
			printFinding(w, f, paint, colours)
		}
		if rest := len(g.findings) - len(shown); rest > 0 {
			fmt.Fprintf(w, "  ... and %s more %s (cue doctor --all shows every one)\n", humanize.Thousands(rest), g.name())
		}
	}
	if len(groups) > 0 {
		fmt.Fprintln(w, "\nsummary")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, g := range groups {
			hint := ""
			if g.kind == CheckSiteAbsolute {
				hint = "\tset [docs] site_root in " + workspace.ConfigFile + " to check them"
			}
			fmt.Fprintf(tw, "  %s\t%s%s\n", g.name(), g.tally(), hint)
		}
		tw.Flush()
	}
	errs, warns := r.Errors(), 0
	for _, f := range r.Findings {
		if f.Severity == Warning {
			warns++
		}
	}
	summary := fmt.Sprintf("%s markdown files checked: %s errors, %s warnings", humanize.Thousands(r.Files), humanize.Thousands(errs), humanize.Thousands(warns))
	if errs == 0 {
		summary = paint("32", summary)
	}
	fmt.Fprintln(w, summary)
}

func printFinding(w io.Writer, f Finding, paint func(code, s string) string, colours map[Severity]string) {
	fmt.Fprintf(w, "%s[%s]: %s\n", paint(colours[f.Severity], f.Severity.String()), f.Check, f.Msg)
	if f.File == "" {
		return
	}
	loc := f.File
	if f.Line > 0 {
		loc += ":" + strconv.Itoa(f.Line)
		if f.Col > 0 {
			loc += ":" + strconv.Itoa(f.Col)
		}
	}
	fmt.Fprintf(w, "  %s %s\n", paint("34", "-->"), loc)
	if f.Source == "" || f.Line == 0 {
		return
	}
	num := strconv.Itoa(f.Line)
	pad := strings.Repeat(" ", len(num))
	bar := paint("34", "|")
	src := strings.ReplaceAll(f.Source, "\t", " ")
	fmt.Fprintf(w, "  %s %s\n  %s %s %s\n", pad, bar, paint("34", num), bar, src)
	if f.Col > 0 {
		fmt.Fprintf(w, "  %s %s %s%s\n", pad, bar, strings.Repeat(" ", f.Col-1), paint(colours[f.Severity], "^"))
	}
}
