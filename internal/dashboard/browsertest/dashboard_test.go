package browsertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// What the fixture puts in the workspace, and what the pages must show.
const (
	searchQuery = "quasar mooring"
	searchDoc   = "docs/mooring.md"
	// memoryText is one of the decisions the rule extractor takes from
	// the transcript fixture (internal/extractor/testdata).
	memoryText = "Cap retries at three attempts"
	// transcriptSession is the session of that transcript.
	transcriptSession = "3b9d6c2e-41f7-4a8e-9d10-5e2f7c8a9b01"
	budgetUSD         = 2.5
	// testTimeout bounds the browser's work in one test.
	testTimeout = 45 * time.Second
)

// task is a task the fixture created over MCP, as the board must show it.
type task struct {
	id, title, status string
	dependsOn         []string
}

// fixture is a daemon with a document to search, memories from an agent's
// transcript, and tasks with dependencies created over MCP.
type fixture struct {
	n     *node
	mcp   *mcpClient
	tasks []task
}

func (f *fixture) dependencies() int {
	n := 0
	for _, tk := range f.tasks {
		n += len(tk.dependsOn)
	}
	return n
}

// newFixture starts the daemon, with token as the one configured token
// when it is not "", and waits until the tasks, the document and the
// memories are served.
func newFixture(t *testing.T, token string) *fixture {
	t.Helper()
	root, claude := t.TempDir(), t.TempDir()
	write(t, root, searchDoc, "# Quasar mooring\n\nHow to moor a quasar: tie it to the nearest pulsar.\n")
	n := startDaemon(t, root, func(c *workspace.Config) {
		c.Transcripts.ClaudeDirs = []string{claude}
		c.Extract.DailyBudgetUSD = budgetUSD
		// The fixture polls read_context and list_tasks faster than seed
		// 002's limits allow; read_doc gets one call an hour, so that the
		// ops page has a refusal to show.
		loose := workspace.RateLimitConfig{Limit: 100000, Window: workspace.Duration{Duration: time.Minute}}
		c.MCP.RateLimits = map[string]workspace.RateLimitConfig{
			tools.ReadContext: loose, tools.ListTasks: loose, tools.SearchMemories: loose,
			tools.ReadDoc: {Limit: 1, Burst: 1, Window: workspace.Duration{Duration: time.Hour}},
		}
		if token != "" {
			c.MCP.Tokens = []access.TokenConfig{{Name: "viewer", Token: token, Repos: []string{"*"}}}
		}
	})
	addTranscript(t, root, claude)

	// Three tasks, the later ones depending on the earlier, in three
	// columns of the board.
	mc := connectMCP(t, n, token)
	f := &fixture{n: n, mcp: mc}
	for _, spec := range []struct {
		title, status string
		deps          []int
	}{
		{"Design the quasar mooring", "done", nil},
		{"Build the quasar mooring", "active", []int{0}},
		{"Test the quasar mooring", "todo", []int{0, 1}},
	} {
		var deps []string
		for _, i := range spec.deps {
			deps = append(deps, f.tasks[i].id)
		}
		var created tools.CreateTaskResult
		if err := mc.call(tools.CreateTask, tools.CreateTaskArgs{Title: spec.title, DependsOn: deps}, &created); err != nil {
			t.Fatal(err)
		}
		if created.Metadata.Status != spec.status {
			status := spec.status
			if err := mc.call(tools.UpdateTask, tools.UpdateTaskArgs{ID: created.ID, Updates: tools.TaskUpdates{Status: &status}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		f.tasks = append(f.tasks, task{id: created.ID, title: spec.title, status: spec.status, dependsOn: deps})
	}

	eventually(t, 30*time.Second, "list_tasks to show the tasks with their statuses", func() (bool, error) {
		var listed []tools.TaskSummary
		if err := mc.call(tools.ListTasks, tools.ListTasksArgs{}, &listed); err != nil {
			return false, err
		}
		for _, tk := range f.tasks {
			if !slices.ContainsFunc(listed, func(s tools.TaskSummary) bool { return s.ID == tk.id && s.Status == tk.status }) {
				return false, fmt.Errorf("task %s (%s) not listed in %+v", tk.id, tk.status, listed)
			}
		}
		return true, nil
	})
	eventually(t, 30*time.Second, "read_context to find "+searchDoc, func() (bool, error) {
		var hits []tools.ContextHit
		if err := mc.call(tools.ReadContext, tools.ReadContextArgs{Query: searchQuery, Mode: tools.ModeKeyword}, &hits); err != nil {
			return false, err
		}
		return slices.ContainsFunc(hits, func(h tools.ContextHit) bool { return strings.HasSuffix(h.Path, searchDoc) }), nil
	})
	eventually(t, 60*time.Second, "search_memories to find the transcript's decisions", func() (bool, error) {
		var hits []tools.MemoryHit
		if err := mc.call(tools.SearchMemories, tools.SearchMemoriesArgs{Query: "retries attempts", Mode: tools.ModeKeyword}, &hits); err != nil {
			return false, err
		}
		return slices.ContainsFunc(hits, func(h tools.MemoryHit) bool { return h.Content == memoryText }), nil
	})
	return f
}

// addTranscript writes the extractor's fixture session as a Claude Code
// transcript of the workspace, for the daemon's tailer to find.
func addTranscript(t *testing.T, root, claude string) {
	t.Helper()
	fixture, err := os.ReadFile(filepath.Join("..", "..", "extractor", "testdata", "decisions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	session := strings.ReplaceAll(string(fixture), "/home/dev/src/app", realRoot)
	project := filepath.Join(claude, strings.NewReplacer("/", "-", ".", "-").Replace(realRoot))
	write(t, project, transcriptSession+".jsonl", session)
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// count is the number of elements matching a CSS selector.
func count(t *testing.T, b *browser, selector string) int {
	t.Helper()
	return eval[int](t, b, fmt.Sprintf("document.querySelectorAll(%s).length", js(selector)))
}

// textOf is the text of the first element matching selector, and whether
// there is one.
func textOf(t *testing.T, b *browser, selector string) (string, bool) {
	t.Helper()
	s := eval[*string](t, b, fmt.Sprintf("(() => { const e = document.querySelector(%s); return e ? e.textContent : null })()", js(selector)))
	if s == nil {
		return "", false
	}
	return *s, true
}

// visibleExpr is truthy when an element matching selector is laid out on
// the page (not display:none, nor inside such an element).
func visibleExpr(selector string) string {
	return fmt.Sprintf("(() => { const e = document.querySelector(%s); return !!e && e.getClientRects().length > 0 })()", js(selector))
}

// visible says whether an element matching selector is shown.
func visible(t *testing.T, b *browser, selector string) bool {
	t.Helper()
	return eval[bool](t, b, visibleExpr(selector))
}

// TestDashboardPages opens every page of the dashboard of a daemon without
// tokens, checks that each shows what the daemon holds, and saves a
// screenshot of each.
func TestDashboardPages(t *testing.T) {
	f := newFixture(t, "")
	b := startBrowser(t, testTimeout)
	dash := f.n.base + "/dashboard/"

	t.Run("board", func(t *testing.T) {
		b.open(t, dash)
		if visible(t, b, "#token-form") {
			t.Errorf("#token-form is shown by a daemon that has no tokens")
		}
		for _, tk := range f.tasks {
			sel := fmt.Sprintf(`#board .column[data-status=%q] .task[data-id=%q]`, tk.status, tk.id)
			text, ok := textOf(t, b, sel)
			if !ok {
				t.Errorf("task %s (%q, %s) is not in its column: no %s\n%s", tk.id, tk.title, tk.status, sel, b.pageErrors())
				continue
			}
			if !strings.Contains(text, tk.title) {
				t.Errorf("task %s shows %q, want its title %q", tk.id, text, tk.title)
			}
		}
		// The graph: one node per task, one edge per dependency, drawn.
		ids := eval[[]string](t, b, `[...document.querySelectorAll("#dep-graph svg g.node[data-id]")].map(n => n.dataset.id)`)
		want := make([]string, 0, len(f.tasks))
		for _, tk := range f.tasks {
			want = append(want, tk.id)
		}
		slices.Sort(ids)
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Errorf("#dep-graph nodes %v, want one per task %v", ids, want)
		}
		if got := count(t, b, "#dep-graph svg .edge"); got != f.dependencies() {
			t.Errorf("#dep-graph has %d .edge elements, want one per dependency: %d", got, f.dependencies())
		}
		if w := eval[float64](t, b, `(() => { const s = document.querySelector("#dep-graph svg"); return s ? s.getBoundingClientRect().width * s.getBoundingClientRect().height : 0 })()`); w <= 0 {
			t.Errorf("#dep-graph svg has no area on the page")
		}
		// Every dependency can be seen: the middle of its arrow is not
		// under a task it does not join.
		hidden := eval[[]string](t, b, `document.querySelector("#dep-graph").scrollIntoView(),
			[...document.querySelectorAll("#dep-graph svg .edge")].flatMap(e => {
			const m = e.getPointAtLength(e.getTotalLength() / 2).matrixTransform(e.getScreenCTM());
			const top = document.elementFromPoint(m.x, m.y);
			const over = top && top.closest("g.node");
			return over && over.dataset.id !== e.dataset.from && over.dataset.id !== e.dataset.to
				? [e.dataset.from + " → " + e.dataset.to + " under " + over.dataset.id] : [];
		})`)
		if len(hidden) > 0 {
			t.Errorf("#dep-graph draws dependencies under other tasks, where no one sees them: %v", hidden)
		}
		b.screenshot(t, "dashboard-board")
	})

	t.Run("memories", func(t *testing.T) {
		b.open(t, dash+"memories")
		type item struct{ ID, Text, Source string }
		items := eval[[]item](t, b, `[...document.querySelectorAll("#memories .memory[data-id]")].map(m => ({
			ID: m.dataset.id, Text: m.textContent,
			Source: (m.querySelector(".source") || {}).textContent || "" }))`)
		i := slices.IndexFunc(items, func(it item) bool { return strings.Contains(it.Text, memoryText) })
		if i < 0 {
			t.Errorf("#memories does not show %q: %+v", memoryText, items)
		} else if !strings.Contains(items[i].Source, transcriptSession) {
			t.Errorf("memory %q: .source %q does not name its transcript's session %s", memoryText, items[i].Source, transcriptSession)
		}
		for _, it := range items {
			if strings.TrimSpace(it.Source) == "" {
				t.Errorf("memory %s has no .source naming where it came from: %q", it.ID, it.Text)
			}
		}
		b.screenshot(t, "dashboard-memories")
	})

	t.Run("search", func(t *testing.T) {
		b.open(t, dash+"search")
		modes := eval[[]string](t, b, `[...document.querySelectorAll("#search-mode option")].map(o => o.value)`)
		for _, m := range []string{tools.ModeKeyword, tools.ModeSemantic, tools.ModeHybrid} {
			if !slices.Contains(modes, m) {
				t.Errorf("#search-mode offers %v, missing %q", modes, m)
			}
		}
		if count(t, b, "#search-form #search-repo") != 1 {
			t.Errorf("#search-form has no repo filter #search-repo")
		}
		b.do(t, "type a query",
			chromedp.SetValue(chromedp.CSS("#search-mode"), tools.ModeKeyword),
			chromedp.SendKeys(chromedp.CSS("#search-q"), searchQuery),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("#search-form").requestSubmit()`),
		)
		b.waitFor(t, "search results", `document.querySelectorAll("#search-results .result").length > 0 || document.body.dataset.error`)
		if msg := eval[string](t, b, `document.body.dataset.error || ""`); msg != "" {
			t.Fatalf("search failed: data-error=%q\n%s", msg, b.pageErrors())
		}
		paths := eval[[]string](t, b, `[...document.querySelectorAll("#search-results .result")].map(r => r.dataset.path || "")`)
		if !slices.ContainsFunc(paths, func(p string) bool { return strings.HasSuffix(p, searchDoc) }) {
			t.Errorf("search for %q found %v, want %s", searchQuery, paths, searchDoc)
		}
		b.screenshot(t, "dashboard-search")
	})

	t.Run("ops", func(t *testing.T) {
		// An agent's second read_doc this hour is refused.
		args := tools.ReadDocArgs{Path: searchDoc}
		if err := f.mcp.call(tools.ReadDoc, args, nil); err != nil {
			t.Fatal(err)
		}
		if err := f.mcp.call(tools.ReadDoc, args, nil); err == nil {
			t.Fatal("a second read_doc within the hour was not refused")
		}
		b.open(t, dash+"ops")
		for _, id := range []string{"#lag", "#dead-letters", "#budget", "#rate-limits"} {
			if text, ok := textOf(t, b, id); !ok || strings.TrimSpace(text) == "" {
				t.Errorf("ops page: %s missing or empty", id)
			}
		}
		lag, _ := textOf(t, b, "#lag")
		for _, feed := range []string{events.DocsBucket, events.MemoriesBucket, events.TasksStream} {
			if !strings.Contains(lag, feed) {
				t.Errorf("#lag does not show feed %s: %q", feed, lag)
			}
		}
		if limits, _ := textOf(t, b, "#rate-limits"); !strings.Contains(limits, tools.ReadDoc) {
			t.Errorf("#rate-limits does not show the refused %s: %q", tools.ReadDoc, limits)
		}
		attrs := eval[map[string]string](t, b, `(() => { const e = document.querySelector("#budget"); return e ? {...e.dataset} : {} })()`)
		if v, err := strconv.ParseFloat(attrs["limitUsd"], 64); err != nil || v != budgetUSD {
			t.Errorf("#budget data-limit-usd=%q, want the configured daily limit %v", attrs["limitUsd"], budgetUSD)
		}
		if v, err := strconv.ParseFloat(attrs["spentUsd"], 64); err != nil || v < 0 {
			t.Errorf("#budget data-spent-usd=%q, want a sum spent today", attrs["spentUsd"])
		}
		b.screenshot(t, "dashboard-ops")
	})
}

// TestDashboardAsksForTheToken runs a daemon with a token configured: the
// board asks for it, loads once it is entered, and keeps it for the
// session.
func TestDashboardAsksForTheToken(t *testing.T) {
	const secret = "viewer-0123456789abcdefghij"
	f := newFixture(t, secret)
	b := startBrowser(t, testTimeout)
	dash := f.n.base + "/dashboard/"
	first := f.tasks[0]
	taskSel := fmt.Sprintf(`#board .task[data-id=%q]`, first.id)

	b.navigate(t, dash)
	b.waitFor(t, "the board to ask for a token", visibleExpr("#token-form"))
	if n := count(t, b, "#board .task"); n != 0 {
		t.Errorf("the board shows %d tasks before a token was given", n)
	}
	b.screenshot(t, "dashboard-token-form")

	b.do(t, "enter the token",
		chromedp.SendKeys(chromedp.CSS("#token"), secret),
		chromedp.Click(chromedp.CSS("#token-save")),
	)
	// Saving the token answers the refusal: what waits on the page for
	// "ready or failed" must not see the old 401.
	if stale := eval[string](t, b, `document.body.dataset.error || ""`); stale != "" {
		t.Errorf("data-error %q stands after the token was saved", stale)
	}
	b.waitFor(t, "the board after the token", `document.body.dataset.ready === "1" || !!document.body.dataset.error`)
	if msg := eval[string](t, b, `document.body.dataset.error || ""`); msg != "" {
		t.Fatalf("the board failed with the token: %s", msg)
	}
	b.waitFor(t, "the board's tasks", `!!document.querySelector(`+js(taskSel)+`)`)
	if visible(t, b, "#token-form") {
		t.Errorf("#token-form still shown after the board loaded")
	}

	// The token is kept for the session: a reload loads the board at once.
	b.open(t, dash)
	if _, ok := textOf(t, b, taskSel); !ok {
		t.Errorf("after a reload the board does not show %s\n%s", first.id, b.pageErrors())
	}
	if visible(t, b, "#token-form") {
		t.Errorf("after a reload with the token kept, #token-form is still shown")
	}
}
