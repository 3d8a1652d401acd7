// Package dashboard is the edge's web face for people: a task board with
// its dependency graph, the memories as a timeline, search, and the
// operations view (materialisation and ingest lag, dead letters, the LLM
// budget, rate-limit refusals). cmd/mcp-edge and the `cue up` daemon mount
// Handler at /dashboard/ on the listener that serves /mcp.
//
// The pages are one static HTML shell whose script renders by path; the
// data comes from a JSON API under /dashboard/api/ behind the same
// access.HTTPGuard as /mcp. Tasks, memories and search go through the
// tools.Caller the MCP endpoint uses, with the request's identity in the
// context, so a token sees only its repos and the rate limits and metrics
// count the dashboard's calls like an agent's. Operations data that is
// not per repo (lag, budget, refusals) is shown to any admitted caller;
// dead letters of repos a token may not read are counted but not shown.
package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// Path is where the dashboard is mounted; PathAPI and PathStatic are
// below it.
const (
	Path       = "/dashboard/"
	PathAPI    = Path + "api/"
	PathStatic = Path + "static/"
)

// Client is the rate-limit client of dashboard calls that carry no token
// (a loopback edge without tokens), so that they do not share the budget
// of the process's own calls.
const Client = "dashboard"

// MemoryLister lists memories without a query, newest first, scoped to the
// identity in ctx (edge.Edge implements it). The timeline uses it;
// search_memories needs a query.
type MemoryLister interface {
	ListMemories(ctx context.Context, f *tools.MemoryFilters, limit int) ([]tools.MemoryHit, error)
}

// JetStream is what the operations view reads: the dead-letter and
// ingest streams, and the budget bucket.
type JetStream interface {
	Stream(ctx context.Context, name string) (jetstream.Stream, error)
	KeyValue(ctx context.Context, bucket string) (jetstream.KeyValue, error)
}

// Options configure Handler. Caller is required; each other part, when
// nil, leaves its part of the dashboard empty and says so.
type Options struct {
	// Caller answers the tools: the same (instrumented, rate-limited)
	// caller the MCP endpoint uses.
	Caller tools.Caller
	// Memories lists the timeline; nil: the timeline needs a query.
	Memories MemoryLister
	// Repos lists the repos the edge knows (those with tasks, the
	// workspace's): the board's columns span them and the filters offer
	// them, each only to identities that may read it.
	Repos func() []string
	// TaskRepos lists the repos with a task log (tasks.Board.Repos): the
	// board lists only these, so that its refreshes spend no list_tasks
	// calls of the caller's rate limit on repos without tasks. Nil: Repos.
	TaskRepos func() []string
	// Monitor reports the materialisation lag per feed.
	Monitor *telemetry.Monitor
	// Metrics is the process's registry: rate-limit refusals and tool
	// calls are read from it.
	Metrics *telemetry.Metrics
	// JetStream reads dead letters, the ingest backlog and the budget.
	JetStream JetStream
	// DailyLimitUSD is the extractors' configured daily LLM budget when
	// this process knows it (the daemon does; 0 means no cap); nil when
	// it does not. The limit recorded in the budget bucket wins.
	DailyLimitUSD *float64
	// Tokens and AllowedOrigins guard the API exactly as /mcp.
	Tokens         *access.Tokens
	AllowedOrigins []string
	// Logger receives refusals and failures; nil discards.
	Logger *slog.Logger
	// Now is the clock of the budget's day; nil is time.Now.
	Now func() time.Time
}

//go:embed static
var staticFS embed.FS

// pages are the paths that serve the HTML shell.
var pages = map[string]bool{"": true, "memories": true, "search": true, "ops": true}

// Handler serves the dashboard under Path: the pages and static assets
// to anyone (they hold no data), the API behind access.HTTPGuard.
func Handler(opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &api{opts: opts, log: opts.Logger}
	apiMux := http.NewServeMux()
	apiMux.HandleFunc("GET "+PathAPI+"board", a.board)
	apiMux.HandleFunc("GET "+PathAPI+"memories", a.memories)
	apiMux.HandleFunc("GET "+PathAPI+"search", a.search)
	apiMux.HandleFunc("GET "+PathAPI+"ops", a.ops)
	apiMux.HandleFunc("GET "+PathAPI+"whoami", a.whoami)
	apiMux.HandleFunc(PathAPI, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API: "+r.URL.Path+" (board, memories, search, ops, whoami)", nil)
	})
	guarded := access.HTTPGuard(apiMux, access.HTTPOptions{Tokens: opts.Tokens, AllowedOrigins: opts.AllowedOrigins, Logger: opts.Logger})

	sub, _ := fs.Sub(staticFS, "static")
	shell, _ := fs.ReadFile(sub, "index.html")
	assets := http.StripPrefix(PathStatic, http.FileServerFS(sub))

	mux := http.NewServeMux()
	mux.Handle(PathAPI, guarded)
	mux.Handle(PathStatic, onlyGet(assets))
	mux.Handle(Path, onlyGet(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, Path), "/")
		if !pages[page] {
			http.Error(w, "Not Found: the dashboard's pages are "+Path+", "+Path+"memories, "+Path+"search and "+Path+"ops", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Write(shell)
	})))
	return mux
}

// onlyGet refuses every method but GET and HEAD with 405.
func onlyGet(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed: the dashboard's pages only answer GET", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// api answers the JSON endpoints.
type api struct {
	opts Options
	log  *slog.Logger
}

// identity is the request's identity as HTTPGuard set it; a request
// without a token (no tokens configured) is client Client reading every
// repo.
func identity(r *http.Request) (context.Context, access.Identity) {
	id := access.FromContext(r.Context())
	if id.Token == "" && id.Client == access.LocalClient {
		id = access.Identity{Client: Client}
	}
	return access.WithIdentity(r.Context(), id), id
}

// call runs tool through the caller and decodes its result into out.
func (a *api) call(ctx context.Context, tool string, args, out any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	res, err := a.opts.Caller.Call(ctx, tool, b)
	if err != nil {
		return err
	}
	return json.Unmarshal(res, out)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// apiError is the body of every failed API call.
type apiError struct {
	Error string         `json:"error"`
	Code  int            `json:"code,omitempty"`
	Data  map[string]any `json:"data,omitempty"`
}

func writeError(w http.ResponseWriter, status int, msg string, te *tools.Error) {
	body := apiError{Error: msg}
	if te != nil {
		body.Code, body.Data = te.Code, te.Data
	}
	writeJSON(w, status, body)
}

// fail answers err: a tool error with the HTTP status its code means and
// its data (a 429 with Retry-After), anything else as 500 without detail.
func (a *api) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	var te *tools.Error
	if !errors.As(err, &te) {
		a.log.Warn("dashboard request failed", "path", r.URL.Path, "what", what, "err", err)
		writeError(w, http.StatusInternalServerError, what+" failed; the edge's log has the cause", nil)
		return
	}
	status := http.StatusInternalServerError
	switch te.Code {
	case tools.CodeRateLimit:
		status = http.StatusTooManyRequests
		if s, ok := te.Data["retry_after_seconds"]; ok {
			b, _ := json.Marshal(s)
			w.Header().Set("Retry-After", string(b))
		}
	case tools.CodeInvalidParams:
		status = http.StatusBadRequest
	case tools.CodeFileNotFound:
		status = http.StatusNotFound
	case tools.CodeUnauthorized:
		status = http.StatusUnauthorized
	case tools.CodeMethodMissing:
		status = http.StatusNotImplemented
	}
	msg := te.Message
	if d, ok := te.Data["detail"].(string); ok {
		msg += ": " + d
	}
	writeError(w, status, what+": "+msg, te)
}

// readableRepos returns, sorted, the repos of Options.Repos that id may
// read, and a restricted identity's own repos.
func (a *api) readableRepos(id access.Identity) []string {
	var all []string
	if a.opts.Repos != nil {
		all = a.opts.Repos()
	}
	return mayRead(id, append(slices.Clone(all), id.Repos...))
}

// mayRead returns the repos of all that id may read, sorted, once each.
func mayRead(id access.Identity, all []string) []string {
	out := []string{}
	for _, r := range all {
		if r != "" && id.MayRead(r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// whoami says who the dashboard is talking to: the client, the token
// and the repos it may read.
func (a *api) whoami(w http.ResponseWriter, r *http.Request) {
	_, id := identity(r)
	writeJSON(w, http.StatusOK, map[string]any{
		"client": id.Client, "token": id.Token, "restricted": id.Restricted(),
		"repos": a.readableRepos(id), "tokens_required": a.opts.Tokens.Enabled(),
	})
}
