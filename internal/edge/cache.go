package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/tiercache"
)

// The edge's answer cache (issue 10, strategy 4). What it keeps is what a
// call recomputes from unchanged state, measured by the benchmarks of
// this package: a read_doc answer redacts its content twice (the content,
// then the whole result), hashes it and, for a section, counts its tokens,
// which together cost ten to twenty times the lookup of the document; a
// read_context answer ranks the whole index; list_tasks walks every task.
// It does not keep documents themselves: those are already in memory, or
// one Badger Get away.
//
// Levels, after seed 000 §5:
//
//   - L1, the active role and workflow: the task board's answers about
//     the work in progress, get_task, get_task_dependencies and
//     list_tasks of active tasks.
//   - L2, the files read lately: read_doc of any other document.
//   - L3, project metadata: answers over the whole project, read_context
//     rankings, path suggestions of unknown paths, and the other
//     list_tasks and validate_task_graph answers.
//   - L4, rules and architecture: read_doc of agent rules files and
//     architecture, design and decision documents.
//
// An answer is keyed by the version of the state it was computed from (a
// document's cue_docs revision; the cue_docs and cue_vectors revisions;
// the task board's applied sequence), read before the answer is computed,
// so an entry can never be served for a newer state. Entries of replaced
// versions are dropped as the materialiser applies a change (tags), or
// age out.

// WithCache sets the answer cache's cap, idle expiry and clock (defaults:
// tiercache.DefaultMaxBytes, tiercache.DefaultIdle, the system clock).
func WithCache(cfg tiercache.Config) Option {
	return func(e *Edge) { e.cacheCfg, e.cacheOff = cfg, false }
}

// WithoutCache turns the answer cache off: every call is computed.
func WithoutCache() Option { return func(e *Edge) { e.cacheOff = true } }

// CacheStats reports the answer cache's counters and holdings; ok is false
// when the edge has no cache.
func (e *Edge) CacheStats() (st tiercache.Stats, ok bool) {
	if e.cache == nil {
		return tiercache.Stats{}, false
	}
	return e.cache.Stats(), true
}

// answerCache is the edge's cache and what it needs to invalidate.
type answerCache struct {
	*tiercache.Cache
	// boardSeq is the board sequence the task entries were last seen at.
	boardSeq atomic.Uint64
}

// Cache tags: a document's answers carry docTag(key); every
// read_context answer tagContext, every task answer tagTasks.
const (
	tagContext = "ctx"
	tagTasks   = "tasks"
)

func docTag(key string) string { return "doc:" + key }

// initCache makes the cache unless it is off and has the materialiser
// drop a document's answers when it applies a change to it.
func (e *Edge) initCache() {
	if e.cacheOff {
		return
	}
	e.cache = &answerCache{Cache: tiercache.New(e.cacheCfg)}
	if e.m != nil {
		e.m.onApplied(func(keys []string) {
			for _, k := range keys {
				e.cache.Invalidate(docTag(k))
			}
			e.cache.Invalidate(tagContext)
		})
	}
}

// cachedCall answers the tools the cache serves. handled is false when
// the call is to be computed by call as usual; otherwise out and err are
// final (already redacted). A hit is a copy: callers own what Call
// returns.
func (e *Edge) cachedCall(ctx context.Context, tool string, args json.RawMessage) (out json.RawMessage, handled bool, err error) {
	if e.cache == nil || ctx.Err() != nil {
		return nil, false, nil
	}
	switch {
	case e.m != nil && tool == tools.ReadDoc:
		return e.cachedReadDoc(ctx, args)
	case e.m != nil && tool == tools.ReadContext:
		return e.cachedReadContext(ctx, args)
	case e.board != nil && (tool == tools.ListTasks || tool == tools.GetTask || tool == tools.GetTaskDependencies || tool == tools.ValidateTaskGraph):
		return e.cachedTaskTool(ctx, tool, args)
	}
	return nil, false, nil
}

// cachedReadDoc serves read_doc by the document's key and revision and
// the anchor, detail and since_hash asked. Invalid arguments, paths that leave the repository and
// skipped documents go the usual way, which explains them.
func (e *Edge) cachedReadDoc(ctx context.Context, raw json.RawMessage) (json.RawMessage, bool, error) {
	valid, err := tools.Validate(tools.ReadDoc, raw)
	if err != nil {
		return nil, false, nil
	}
	var a tools.ReadDocArgs
	if json.Unmarshal(valid, &a) != nil || pathProblem(a.Path) != "" {
		return nil, false, nil
	}
	id := access.FromContext(ctx)
	d, err := e.resolve(a.Path, id)
	if err != nil {
		return nil, true, tools.RedactError(err)
	}
	if d.rec.Skip != nil {
		return nil, false, nil
	}
	level := docLevel(d.rec.Path)
	// Every argument that shapes the answer is in the key; a version kept
	// for since_hash is fixed until the next revision replaces it.
	key := d.key + "\x00" + strconv.FormatUint(d.rev, 10) + "\x00" + a.Anchor + "\x00" + a.Detail + "\x00" + a.SinceHash
	if out, ok := e.cache.Get(level, key); ok {
		return slices.Clone(out), true, nil
	}
	out, err := e.call(ctx, tools.ReadDoc, raw)
	if err != nil {
		return nil, true, tools.RedactError(err)
	}
	out = tools.RedactResult(out)
	// The answer is of d's revision only if the path still resolves to
	// it: revisions only grow, so the same one before and after means
	// the document did not change in between.
	if now, err := e.resolve(a.Path, id); err == nil && now == d {
		e.cache.Put(level, key, docTag(d.key), slices.Clone(out))
	}
	return out, true, nil
}

// cachedReadContext serves read_context by the caller's repos, the
// cue_docs and cue_vectors revisions and the arguments as sent. An answer
// that fell back to keyword search is not kept: the fallback may be
// passing (an embedder that failed once).
func (e *Edge) cachedReadContext(ctx context.Context, raw json.RawMessage) (json.RawMessage, bool, error) {
	e.m.mu.RLock()
	rev, vrev, gen := e.m.rev, e.m.vrev, e.m.startOvers
	e.m.mu.RUnlock()
	key := scopeKey(access.FromContext(ctx)) + "\x00" + strconv.FormatUint(gen, 10) + ":" + strconv.FormatUint(rev, 10) + "/" + strconv.FormatUint(vrev, 10) + "\x00" + string(raw)
	if out, ok := e.cache.Get(tiercache.L3, key); ok {
		return slices.Clone(out), true, nil
	}
	out, err := e.call(ctx, tools.ReadContext, raw)
	if err != nil {
		return nil, true, tools.RedactError(err)
	}
	out = tools.RedactResult(out)
	if !bytes.Contains(out, []byte(`"fallback":`)) {
		e.cache.Put(tiercache.L3, key, tagContext, slices.Clone(out))
	}
	return out, true, nil
}

// cachedTaskTool serves list_tasks, get_task, get_task_dependencies and
// validate_task_graph by the board's applied sequence, the caller's repos
// and the arguments as sent. list_tasks with a created or updated filter
// is not kept: a relative age ("<2w") moves with the clock.
func (e *Edge) cachedTaskTool(ctx context.Context, tool string, raw json.RawMessage) (json.RawMessage, bool, error) {
	select {
	case <-e.board.Ready():
	default:
		return nil, false, nil
	}
	level := tiercache.L3
	switch tool {
	case tools.ListTasks:
		var a tools.ListTasksArgs
		if json.Unmarshal(raw, &a) != nil || a.Created != "" || a.Updated != "" {
			return nil, false, nil
		}
		if a.Status == "active" {
			level = tiercache.L1
		}
	case tools.GetTask, tools.GetTaskDependencies:
		level = tiercache.L1
	}
	seq := e.board.Version()
	for old := e.cache.boardSeq.Load(); seq > old; old = e.cache.boardSeq.Load() {
		if e.cache.boardSeq.CompareAndSwap(old, seq) {
			e.cache.Invalidate(tagTasks) // answers of older sequences
			break
		}
	}
	key := tool + "\x00" + scopeKey(access.FromContext(ctx)) + "\x00" + strconv.FormatUint(seq, 10) + "\x00" + string(raw)
	// A page of list_tasks tells its next cursor in a notice: kept beside
	// the answer (empty when none), so a cached page tells it too; an
	// answer whose notices were evicted is computed again.
	noticeKey := key + "\x00notices"
	if out, ok := e.cache.Get(level, key); ok {
		if texts, ok := e.cache.Get(level, noticeKey); ok {
			for _, t := range strings.Split(string(texts), "\x00") {
				tools.Notify(ctx, t)
			}
			return slices.Clone(out), true, nil
		}
	}
	nctx, notices := tools.WithNotices(ctx)
	out, err := e.call(nctx, tool, raw)
	if err != nil {
		return nil, true, tools.RedactError(err)
	}
	texts := notices.Texts()
	for _, t := range texts {
		tools.Notify(ctx, t)
	}
	out = tools.RedactResult(out)
	e.cache.Put(level, key, tagTasks, slices.Clone(out))
	e.cache.Put(level, noticeKey, tagTasks, []byte(strings.Join(texts, "\x00")))
	return out, true, nil
}

// scopeKey names the repos id may read: answers differ by them.
func scopeKey(id access.Identity) string {
	if id.Repos == nil {
		return "*"
	}
	repos := slices.Clone(id.Repos)
	slices.Sort(repos)
	return strings.Join(repos, ",")
}

// docLevel is the cache level of a document's read_doc answers: rules
// and architecture L4, anything else L2.
func docLevel(p string) tiercache.Level {
	lower := strings.ToLower(p)
	base := path.Base(lower)
	switch {
	// The usual homes of agent rules, architecture and decisions.
	case base == "agents.md", base == "claude.md", base == ".cursorrules",
		base == "architecture.md", base == "design.md", base == "style.md", base == "contributing.md",
		strings.Contains(lower, "/adr/"), strings.HasPrefix(lower, "adr/"),
		strings.Contains(lower, "architecture/"), strings.Contains(base, "rules"):
		return tiercache.L4
	}
	return tiercache.L2
}

// cachedSuggestPath is suggestPath kept in L3 by the caller's repos and the
// generation of the set of paths: a fuzzy match over every path costs
// milliseconds, and an agent that guessed a path wrong tends to guess it
// again.
func (e *Edge) cachedSuggestPath(p string, id access.Identity) string {
	if e.cache == nil {
		return e.suggestPath(p, id)
	}
	e.m.mu.RLock()
	gen := e.m.pathsGen
	e.m.mu.RUnlock()
	key := "suggest\x00" + scopeKey(id) + "\x00" + strconv.FormatUint(gen, 10) + "\x00" + p
	if s, ok := e.cache.Get(tiercache.L3, key); ok {
		return string(s)
	}
	s := e.suggestPath(p, id)
	e.cache.Put(tiercache.L3, key, tagContext, []byte(s))
	return s
}
