package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/memstore"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/suggest"
	"github.com/cuedeck/cuedeck/pkg/core/tiercache"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Edge answers agents' tool calls from a Materialiser's state and, with a
// task Board, the task tools. It is a tools.Caller and is safe for
// concurrent use.
type Edge struct {
	m      *Materialiser
	logger *slog.Logger
	emb    embed.Embedder

	board       *tasks.Board
	writers     *TaskWriters    // nil: every task write is made here
	memories    *memstore.Store // nil: no memory writes (WithMemoryStore)
	actor       string
	defaultRepo string
	clock       clock.Clock

	// progress, when set, says how far indexing got (WithProgress).
	progress func() Progress

	cacheCfg tiercache.Config
	cacheOff bool
	cache    *answerCache // nil when off (cache.go)

	candMu      sync.Mutex
	candGen     uint64
	cands       []string
	candsByRepo map[string][]string
}

var _ tools.Caller = (*Edge)(nil)

// Option configures an Edge.
type Option func(*Edge)

// WithBoard serves the task tools (list_tasks, create_task, update_task,
// get_task_dependencies, validate_task_graph) from b, whose Run the caller
// owns.
func WithBoard(b *tasks.Board) Option { return func(e *Edge) { e.board = b } }

// WithActor names this edge in the task events it writes (default "edge").
func WithActor(name string) Option { return func(e *Edge) { e.actor = name } }

// WithDefaultRepo is the repo task tools use when a call names none.
// Without it they use the first repo with tasks, in name order.
func WithDefaultRepo(repo string) Option { return func(e *Edge) { e.defaultRepo = repo } }

// WithClock sets the clock that stamps created and updated times.
func WithClock(c clock.Clock) Option { return func(e *Edge) { e.clock = c } }

// New returns an Edge answering from m. A nil logger discards. The edge
// embeds queries with m's embedder (Config.Embedder), if it has one. m may
// be nil for an edge that serves only the task tools.
func New(m *Materialiser, logger *slog.Logger, opts ...Option) *Edge {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Edge{m: m, logger: logger, candGen: math.MaxUint64, actor: "edge", clock: clock.System{}}
	if m != nil {
		e.emb = m.cfg.Embedder
	}
	for _, o := range opts {
		o(e)
	}
	e.initCache()
	return e
}

// Call runs one tool. Arguments are checked against the tool's schema and
// completed with its defaults first. Failures an agent should see are
// *tools.Error: CodeMethodMissing for a tool this edge does not serve,
// CodeInvalidParams (also for a read_doc path that leaves the repository:
// '..', absolute, '\', control characters or empty segments, refused before
// any lookup and without a suggestion, which would resolve the traversal;
// and for a read_doc anchor that names no heading, symbol or line range of
// the file: see openAnchor), and CodeFileNotFound (1001) for an unknown file (with a
// suggestion when one is close) or a file ingest saw but did not index
// (message "File Not Indexed", data reason and detail); read_doc's
// since_hash fails with CodeStaleCache (1006) for a version the edge no
// longer keeps (see since). search_memories
// and prune_conversation fail only with CodeInvalidParams; the task tools'
// errors are listed on their methods.
//
// A call sees only the repos its access.Identity (in ctx) may read: other
// repos' documents are not found, never suggested, never ranked, and
// their memories and task boards are not there.
//
// With WithProgress, a read_context call made while indexing runs has a
// notice saying how far it got (tools.Notify), beside its unchanged answer.
//
// Every result and every error's message and data pass the security guard
// (tools.RedactResult, tools.RedactError) on the way out, whichever tool
// made them: repository text, memories and task titles can all hold a
// secret someone committed.
func (e *Edge) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	out, err := e.answer(ctx, tool, args)
	if err == nil && tool == tools.ReadContext && e.progress != nil {
		e.noteProgress(ctx, args, out)
	}
	return out, err
}

// answer is Call without the progress notice.
func (e *Edge) answer(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if out, handled, err := e.cachedCall(ctx, tool, args); handled {
		return out, err
	}
	out, err := e.call(ctx, tool, args)
	if err != nil {
		return nil, tools.RedactError(err)
	}
	return tools.RedactResult(out), nil
}

func (e *Edge) call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case e.m != nil && tool == tools.ReadContext:
		return e.readContext(ctx, args)
	case e.m != nil && tool == tools.ReadDoc:
		return e.readDoc(ctx, args)
	case e.m != nil && tool == tools.SearchMemories:
		return e.searchMemories(ctx, args)
	case e.m != nil && tool == tools.GetMemory:
		return e.getMemory(ctx, args)
	case e.m != nil && tool == tools.ListMemories:
		return e.listMemoriesTool(ctx, args)
	case e.memories != nil && tool == tools.SaveMemory:
		return e.saveMemory(ctx, args)
	case e.memories != nil && tool == tools.UpdateMemory:
		return e.updateMemory(ctx, args)
	case e.memories != nil && tool == tools.ForgetMemory:
		return e.forgetMemory(ctx, args)
	case tool == tools.PruneConversation:
		return pruneConversation(args)
	case e.board != nil:
		if h := e.taskTool(tool); h != nil {
			valid, err := tools.Validate(tool, args)
			if err != nil {
				return nil, err
			}
			if err := e.boardReady(ctx); err != nil {
				return nil, err
			}
			return h(ctx, valid)
		}
	}
	if _, err := tools.Validate(tool, args); err != nil {
		return nil, err
	}
	data := map[string]any{"tool": tool}
	if tool == tools.GetScene {
		data["hint"] = "get_scene reads the workspace's files: call it through `cue mcp` or `cue up` beside the workspace"
	}
	return nil, &tools.Error{Code: tools.CodeMethodMissing, Message: "Tool not served by this edge", Data: data}
}

// readContext is seed 002 §1. A structural query ("who imports X", "what
// calls X", "dependencies of X") is answered from the import and link
// graph when the graph knows X; anything else is ranked in the mode asked
// for (see rank).
func (e *Edge) readContext(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	args, err := tools.Validate(tools.ReadContext, raw)
	if err != nil {
		return nil, err
	}
	var a tools.ReadContextArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, tools.InvalidParams(tools.ReadContext, err.Error())
	}
	sc := docScope{f: a.Filters, id: access.FromContext(ctx)}
	if search.DefaultClassifier.Classify(a.Query) == search.IntentStructural {
		if hits := e.m.graphHits(a.Query, a.Limit, sc); len(hits) > 0 {
			return json.Marshal(hits)
		}
	}
	hits, err := e.rank(ctx, a.Query, searchMode(raw), a.Limit, sc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(hits)
}

// searchMode applies seed 002's priority: an explicit mode, else
// semantic=true means "semantic", else "hybrid". It reads the arguments as
// sent, because after defaults every call seems to set mode.
func searchMode(raw json.RawMessage) string {
	var a struct {
		Mode     *string `json:"mode"`
		Semantic *bool   `json:"semantic"`
	}
	_ = json.Unmarshal(raw, &a)
	switch {
	case a.Mode != nil:
		return *a.Mode
	case a.Semantic != nil && *a.Semantic:
		return "semantic"
	}
	return "hybrid"
}

// filtered returns the keys of searchable docs in sc.
func (m *Materialiser) filtered(sc docScope) map[string]bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]bool)
	for key, d := range m.docs {
		if d.rec.Skip == nil && sc.admits(d) {
			out[key] = true
		}
	}
	return out
}

// readDoc is seed 002 §2, for any indexed file, not only markdown: code,
// configuration, dot-directories (.github) and task cards. A document of a
// repo the caller's identity may not read is, to that caller, not there:
// 1001, with suggestions only from the repos it may read.
func (e *Edge) readDoc(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	id := access.FromContext(ctx)
	args, err := tools.Validate(tools.ReadDoc, raw)
	if err != nil {
		// The schema's pattern error does not say what is wrong with an
		// escaping path; say it plainly.
		var a struct{ Path string }
		if json.Unmarshal(raw, &a) == nil {
			if problem := pathProblem(a.Path); problem != "" {
				e.refused(id, tools.ReadDoc, "path leaves the repository", "path", a.Path)
				return nil, tools.InvalidParams(tools.ReadDoc, problem)
			}
		}
		return nil, err
	}
	var a tools.ReadDocArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, tools.InvalidParams(tools.ReadDoc, err.Error())
	}
	if problem := pathProblem(a.Path); problem != "" {
		e.refused(id, tools.ReadDoc, "path leaves the repository", "path", a.Path)
		return nil, tools.InvalidParams(tools.ReadDoc, problem)
	}
	d, err := e.resolve(a.Path, id)
	if err != nil {
		return nil, err
	}
	if d.rec.Skip != nil {
		return nil, notIndexed(d)
	}
	content, cached, err := e.m.content(d)
	if errors.Is(err, errChangedUnderfoot) {
		// The document was replaced between lookup and read: look again.
		if d, err = e.resolve(a.Path, id); err != nil {
			return nil, err
		}
		if d.rec.Skip != nil {
			return nil, notIndexed(d)
		}
		content, cached, err = e.m.content(d)
	}
	if err != nil {
		return nil, fmt.Errorf("edge: read_doc %s/%s: %w", d.rec.Repo, d.rec.Path, err)
	}
	// Redacted before the hash and token count, which describe what the
	// agent receives; line ranges still hold, as redaction keeps lines.
	content, _ = guard.RedactKeepingLines(content)
	res := tools.ReadDocResult{Path: d.rec.Path, Repo: d.rec.Repo, Cached: cached, ContentTrust: tools.TrustData}
	text := content // untrimmed, so that an outline's line numbers hold
	if a.Anchor == "" {
		res.Content = strings.TrimSpace(content)
		res.Tokens = d.tokensOfTrimmed(res.Content)
	} else {
		var start, end int
		var aerr *tools.Error
		if text, start, end, aerr = openAnchor(&d.rec, content, a.Anchor); aerr != nil {
			return nil, aerr
		}
		anchor := a.Anchor
		res.Anchor = &anchor
		res.Content = text
		res.LineRange = &tools.LineRange{Start: start, End: end}
		res.Tokens = tokens.Count(res.Content)
	}
	res.Hash = events.SHA256Hex([]byte(res.Content))
	if a.SinceHash != "" {
		if a.Detail == tools.DetailOutline {
			return nil, tools.InvalidParams(tools.ReadDoc, `since_hash answers with the changes to the text: omit detail "outline", or omit since_hash to read the outline`)
		}
		return e.since(d, res, a.SinceHash)
	}
	if a.Detail == tools.DetailOutline {
		outlineDoc(&res, text)
	}
	return json.Marshal(res)
}

// tokensOfTrimmed counts the tokens of trimmed, d's trimmed content, once
// per document version.
func (d *doc) tokensOfTrimmed(trimmed string) int {
	if n := d.trimmedTokens.Load(); n > 0 {
		return int(n - 1)
	}
	n := tokens.Count(trimmed)
	d.trimmedTokens.Store(int64(n) + 1)
	return n
}

// pathProblem says why p cannot name a file inside a repository, or "".
func pathProblem(p string) string {
	if p == "" {
		return "path is empty: give a repo-relative path, e.g. docs/api.md"
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Sprintf("path %q contains a control character: give a plain repo-relative path, e.g. docs/api.md", p)
		}
	}
	switch {
	case strings.Contains(p, `\`):
		return fmt.Sprintf("path %q contains '\\': give a repo-relative path with '/' separators, e.g. docs/api.md", p)
	case strings.HasPrefix(p, "/") || len(p) >= 2 && p[1] == ':':
		return fmt.Sprintf("path %q is absolute: give it relative to the repository root, e.g. docs/api.md", p)
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "..":
			return fmt.Sprintf("path %q has a '..' segment: paths must stay inside the repository; give it relative to the root, e.g. docs/api.md", p)
		case "", ".":
			return fmt.Sprintf("path %q has an empty or '.' segment: give a clean repo-relative path, e.g. docs/api.md", p)
		}
	}
	return ""
}

// resolve finds the one document p names among the repos id may read: p
// is looked up as a path in each, and as <repo>/<path> when its first
// segment is a repo.
func (e *Edge) resolve(p string, id access.Identity) (*doc, error) {
	m := e.m
	m.mu.RLock()
	var matches []*doc
	hidden := "" // a repo holding p that id may not read
	for _, k := range m.byPath[p] {
		if d := m.docs[k]; id.MayRead(d.rec.Repo) {
			matches = append(matches, d)
		} else {
			hidden = d.rec.Repo
		}
	}
	if repo, rest, ok := strings.Cut(p, "/"); ok && m.repos[repo] > 0 {
		if d, ok := m.docs[events.DocKey(repo, rest)]; ok && !id.MayRead(repo) {
			hidden = repo
		} else if ok && !slices.Contains(matches, d) {
			matches = append(matches, d)
		}
	}
	m.mu.RUnlock()
	if len(matches) == 0 && hidden != "" {
		// To the caller it is not there; the operator hears of the attempt.
		e.refused(id, tools.ReadDoc, "repo not readable by this client", "path", p, "repo", hidden)
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, tools.FileNotFound(p, e.cachedSuggestPath(p, id))
	}
	names := make([]string, len(matches))
	for i, d := range matches {
		names[i] = d.rec.Repo + "/" + d.rec.Path
	}
	slices.Sort(names)
	err := tools.InvalidParams(tools.ReadDoc, fmt.Sprintf("path %q is in %d repos: name one as <repo>/<path>, e.g. %q", p, len(names), names[0]))
	err.Data["candidates"] = names
	return nil, err
}

// refused logs a call refused for what it tried to reach, with who asked.
func (e *Edge) refused(id access.Identity, tool, reason string, attrs ...any) {
	e.logger.Warn("tool call refused", append([]any{"tool", tool, "reason", reason, "client", id.Client}, attrs...)...)
}

// suggestPath is the indexed path of the repos id may read closest to
// p, or "", one with p's extension first (suggestSameExt). When p starts
// with a repo's name, that repo's paths are tried first, as <repo>/<path>.
func (e *Edge) suggestPath(p string, id access.Identity) string {
	all, byRepo := e.pathCandidates()
	if id.Restricted() {
		var mine []string
		for _, repo := range id.Repos {
			mine = append(mine, byRepo[repo]...)
		}
		slices.Sort(mine)
		all = slices.Compact(mine)
	}
	if repo, rest, ok := strings.Cut(p, "/"); ok && id.MayRead(repo) {
		if s := suggestSameExt(rest, byRepo[repo]); s != "" {
			return repo + "/" + s
		}
	}
	return suggestSameExt(p, all)
}

// suggestSameExt is suggest.Suggest among the candidates with p's
// extension, else among all: "comands.go" means a Go file even when
// "commands.md" is as close.
func suggestSameExt(p string, candidates []string) string {
	ext := strings.ToLower(path.Ext(p))
	var same []string
	for _, c := range candidates {
		if strings.ToLower(path.Ext(c)) == ext {
			same = append(same, c)
		}
	}
	if s := suggest.Suggest(p, same); s != "" {
		return s
	}
	if len(same) == len(candidates) {
		return ""
	}
	return suggest.Suggest(p, candidates)
}

// pathCandidates lists the paths read_doc can name (skipped files too,
// which answer why they are not indexed), in all repos and per repo. It
// is rebuilt only when the set of paths changed.
func (e *Edge) pathCandidates() (all []string, byRepo map[string][]string) {
	e.candMu.Lock()
	defer e.candMu.Unlock()
	m := e.m
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e.candGen == m.pathsGen {
		return e.cands, e.candsByRepo
	}
	all = make([]string, 0, len(m.byPath))
	byRepo = make(map[string][]string, len(m.repos))
	for p, keys := range m.byPath {
		all = append(all, p)
		for _, k := range keys {
			repo := m.docs[k].rec.Repo
			byRepo[repo] = append(byRepo[repo], p)
		}
	}
	slices.Sort(all)
	for _, ps := range byRepo {
		slices.Sort(ps)
	}
	e.cands, e.candsByRepo, e.candGen = all, byRepo, m.pathsGen
	return all, byRepo
}

// notIndexed is error 1001 for a file ingest saw and did not index: the
// file exists, so "File Not Found" would mislead, but to an agent it is
// equally unreadable through CueDeck, so it keeps code 1001 with its own
// message and the reason.
//
// The detail of an escaping symlink names where it leads, outside the
// repository: that is the machine's layout, not the repository's, so the
// agent gets the rule instead.
func notIndexed(d *doc) *tools.Error {
	detail := d.rec.Skip.Detail
	if d.rec.Skip.Reason == events.SkipSymlinkEscapes {
		detail = "a symlink leading outside the repository; symlinks are followed only within it"
	}
	return &tools.Error{
		Code:    tools.CodeFileNotFound,
		Message: "File Not Indexed",
		Data: map[string]any{
			"path":       d.rec.Path,
			"repo":       d.rec.Repo,
			"reason":     string(d.rec.Skip.Reason),
			"detail":     detail,
			"suggestion": "CueDeck saw this file but did not index it; read it from the workspace directly.",
		},
	}
}
