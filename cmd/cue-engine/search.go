package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

const searchUsage = "usage: cue search QUERY [--mode keyword|semantic|hybrid|rrf] [--limit N] [--repo R] [--json]"

// cmdSearch ranks the workspace's files for a query with read_context, as
// an agent's call does, through the running daemon (started in the
// background if none runs, as `cue mcp` does), and prints each hit as
// path:line with the heading of its best section and two lines of it.
func cmdSearch(args []string) error {
	fs, c := newFlags("search")
	mode := fs.String("mode", "", "keyword, semantic, hybrid or rrf (default: the daemon's, hybrid)")
	limit := fs.Int("limit", 10, "hits to print, at most 50")
	repo := fs.String("repo", "", "only hits in this repo")
	asJSON := fs.Bool("json", false, "print read_context's answer as JSON")
	// The query's words may come before or after the flags.
	var words []string
	for rest := args; len(rest) > 0; {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) > 0 {
			words = append(words, rest[0])
			rest = rest[1:]
		}
	}
	query := strings.TrimSpace(strings.Join(words, " "))
	if query == "" {
		return errors.New(searchUsage)
	}
	if *limit < 1 || *limit > tools.MaxContextLimit {
		return fmt.Errorf("cue search: --limit %d: give 1 to %d", *limit, tools.MaxContextLimit)
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	cfg, err := ws.LoadConfig()
	if err != nil {
		return err
	}
	// Hits of other repos are dropped here (read_context ranks them all):
	// ask for as many as it gives, to fill the limit.
	want := *limit
	if *repo != "" {
		want = tools.MaxContextLimit
	}
	started := false
	info, err := ws.ReadDaemonInfo()
	if errors.Is(err, workspace.ErrNoDaemon) {
		fmt.Fprintln(os.Stderr, "cue search: no daemon runs for this workspace: starting one in the background (`cue down` stops it)")
		info, err = startBackground(ws, "info")
		started = true
	}
	if err != nil {
		return fmt.Errorf("cue search: %w", err)
	}
	caller, closeConn, err := dialDaemon(info, envOr("CUE_TOKEN", cfg.MCP.QueryToken), "cue-search")
	if err != nil {
		return err
	}
	defer closeConn()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := json.Marshal(tools.ReadContextArgs{Query: query, Limit: want, Mode: *mode})
	if err != nil {
		return err
	}
	ctx, notices := tools.WithNotices(ctx)
	out, err := caller.Call(ctx, tools.ReadContext, raw)
	if err != nil {
		return fmt.Errorf("cue search: %w", err)
	}
	var hits []tools.ContextHit
	if err := json.Unmarshal(out, &hits); err != nil {
		return fmt.Errorf("cue search: the daemon's answer: %w", err)
	}
	if *repo != "" {
		kept := hits[:0]
		for _, h := range hits {
			if h.Repo == *repo || h.Repo == "" && *repo == info.Repo {
				kept = append(kept, h)
			}
		}
		hits = kept
	}
	hits = hits[:min(len(hits), *limit)]
	for _, n := range notices.Texts() {
		fmt.Fprintln(os.Stderr, "cue search:", n)
	}
	// A fallback is the same for every hit of a call: said once.
	said := map[string]bool{}
	for _, h := range hits {
		if h.Fallback != "" && !said[h.Fallback] {
			said[h.Fallback] = true
			fmt.Fprintln(os.Stderr, "cue search:", h.Fallback)
		}
	}
	if started && len(notices.Texts()) == 0 && len(hits) == 0 {
		fmt.Fprintln(os.Stderr, "cue search: the daemon has just started; `cue status` shows how far indexing got")
	}
	if *asJSON {
		b, err := json.Marshal(hits)
		if err != nil {
			return err
		}
		_, err = fmt.Printf("%s\n", b)
		return err
	}
	roots := repoRoots(ws, cfg, info.Repo)
	printHits(os.Stdout, hits, query, roots, colourful(os.Stdout))
	if len(hits) == 0 {
		return fmt.Errorf("no match for %q", query)
	}
	return nil
}

// repoRoots maps each repo name to its directory, for the snippets: the
// configured repos, and the workspace root as the daemon's own repo.
func repoRoots(ws *workspace.Workspace, cfg *workspace.Config, own string) map[string]string {
	roots := map[string]string{"": ws.Root, own: ws.Root}
	for _, r := range cfg.Repos {
		if r.Path != "" {
			roots[r.Name] = r.Path
		}
	}
	return roots
}

// printHits writes each hit as ripgrep users read them: path:line, the
// heading of its best section, then two lines of that section (those
// holding a query word if any do), and a blank line between hits.
func printHits(w io.Writer, hits []tools.ContextHit, query string, roots map[string]string, colour bool) {
	paint := func(code, s string) string {
		if !colour || s == "" {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	terms := queryWords(query)
	for i, h := range hits {
		if i > 0 {
			fmt.Fprintln(w)
		}
		line := 1
		var snippet []numberedLine
		if h.Section != nil {
			line = h.Section.LineRange.Start
			if dir, ok := roots[h.Repo]; ok {
				snippet = sectionSnippet(filepath.Join(dir, filepath.FromSlash(h.Path)), h.Section.LineRange, h.Section.Heading, terms, 2)
			}
		}
		if len(snippet) > 0 {
			line = snippet[0].n
		}
		path := h.Path
		if h.Repo != "" && roots[h.Repo] != roots[""] {
			path = h.Repo + "/" + h.Path
		}
		head := paint("35", path) + ":" + paint("32", fmt.Sprint(line))
		if h.Section != nil && h.Section.Heading != "" {
			head += "  " + paint("1", h.Section.Heading)
		}
		fmt.Fprintln(w, head)
		for _, l := range snippet {
			fmt.Fprintf(w, "  %s  %s\n", paint("32", fmt.Sprintf("%4d", l.n)), highlight(l.text, terms, paint))
		}
	}
}

type numberedLine struct {
	n    int
	text string
}

// sectionSnippet returns up to n non-blank lines of the file's lines
// r.Start..r.End, the heading line itself left out (it is printed above
// them): the first that hold a query word, else the first. A file that
// cannot be read gives none: the hit is still printed.
func sectionSnippet(path string, r tools.LineRange, heading string, terms []string, n int) []numberedLine {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var first, matching []numberedLine
	for k := 1; sc.Scan() && (r.End == 0 || k <= r.End); k++ {
		if k < r.Start {
			continue
		}
		text := strings.TrimRight(sc.Text(), " \t\r")
		if trimmed := strings.TrimSpace(text); trimmed == "" || k == r.Start && heading != "" && strings.TrimSpace(strings.TrimLeft(trimmed, "#")) == heading {
			continue
		}
		if len([]rune(text)) > 160 {
			text = string([]rune(text)[:160]) + "…"
		}
		l := numberedLine{k, text}
		if len(first) < n {
			first = append(first, l)
		}
		if containsWord(text, terms) {
			matching = append(matching, l)
			if len(matching) == n {
				break
			}
		}
	}
	if len(matching) > 0 {
		return matching
	}
	return first
}

// queryWords are the query's words in lower case, the short ones left
// out: they would light up half of every line.
func queryWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		if len([]rune(w)) >= 3 {
			out = append(out, w)
		}
	}
	return out
}

func containsWord(text string, terms []string) bool {
	lower := strings.ToLower(text)
	for _, t := range terms {
		if strings.Contains(lower, t) {
			return true
		}
	}
	return false
}

// highlight paints each occurrence of a query word in text.
func highlight(text string, terms []string, paint func(code, s string) string) string {
	if paint("1", "x") == "x" || len(terms) == 0 {
		return text
	}
	lower := strings.ToLower(text)
	if len(lower) != len(text) {
		return text // a case change altered byte offsets: leave it plain
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		end := 0
		for _, t := range terms {
			if strings.HasPrefix(lower[i:], t) {
				end = max(end, i+len(t))
			}
		}
		if end == 0 {
			b.WriteByte(text[i])
			i++
			continue
		}
		b.WriteString(paint("1;31", text[i:end]))
		i = end
	}
	return b.String()
}
