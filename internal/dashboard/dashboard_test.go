package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/dashboard"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const (
	allSecret = "all-repos-secret-0123456789"
	appSecret = "app-only-secret-0123456789"
)

// fixture is an edge on an embedded JetStream with its tools behind the
// same instrumented, rate-limited caller the MCP endpoint uses, and the
// dashboard mounted on telemetry.Mux as the edge binaries mount it.
type fixture struct {
	t      *testing.T
	conn   *bus.Conn
	mat    *edge.Materialiser
	board  *tasks.Board
	caller tools.Caller
	srv    *httptest.Server
}

type fixtureOptions struct {
	tokens     bool
	rateRules  map[string]resilience.RateRule
	dailyLimit *float64
}

func newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	mat, err := edge.OpenOnWith(ctx, conn.JS, t.TempDir(), edge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	board := tasks.NewBoard(conn.JS, nil)
	edg := edge.New(mat, nil, edge.WithBoard(board), edge.WithDefaultRepo("app"), edge.WithActor("test"))
	bustest.Run(t, "edge", mat.Run)
	bustest.Run(t, "tasks", board.Run)
	rules := o.rateRules
	if rules == nil {
		rules = map[string]resilience.RateRule{tools.ReadContext: {Limit: 1000, Window: time.Minute}}
	}
	limiter, err := resilience.NewRateLimiter(rules, clock.System{})
	if err != nil {
		t.Fatal(err)
	}
	metrics := telemetry.NewMetrics()
	caller := metrics.Instrument(access.RateLimit(edg, limiter, nil))
	mon := telemetry.NewMonitor(telemetry.EdgeProgress(conn.JS, mat, board), telemetry.MonitorOptions{})
	mon.CheckHeads(ctx)
	var tokens *access.Tokens
	if o.tokens {
		if tokens, err = access.NewTokens([]access.TokenConfig{
			{Name: "all", Token: allSecret, Repos: []string{"*"}},
			{Name: "apponly", Token: appSecret, Repos: []string{"app"}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	mux := telemetry.Mux(nil, metrics, mon)
	mux.Handle(dashboard.Path, dashboard.Handler(dashboard.Options{
		Caller: caller, Memories: edg, Repos: func() []string { return append(board.Repos(), "app") }, TaskRepos: board.Repos,
		Monitor: mon, Metrics: metrics, JetStream: conn.JS, DailyLimitUSD: o.dailyLimit, Tokens: tokens,
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	select {
	case <-board.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("task board not replayed within 30s")
	}
	return &fixture{t: t, conn: conn, mat: mat, board: board, caller: caller, srv: srv}
}

// get fetches path with the bearer secret (none when "") and headers.
func (f *fixture) get(path, secret string, header ...string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// getJSON fetches an API path, requires 200 and decodes the body into v.
func (f *fixture) getJSON(path, secret string, v any) {
	f.t.Helper()
	code, body := f.get(path, secret)
	if code != http.StatusOK {
		f.t.Fatalf("GET %s = %d %s", path, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		f.t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// createTask creates a task through the caller as the all-repos token.
func (f *fixture) createTask(repo, title string, deps ...string) string {
	f.t.Helper()
	args, _ := json.Marshal(tools.CreateTaskArgs{Title: title, Repo: repo, DependsOn: deps})
	ctx := access.WithIdentity(context.Background(), access.Identity{Client: "test"})
	out, err := f.caller.Call(ctx, tools.CreateTask, args)
	if err != nil {
		f.t.Fatalf("create_task %q: %v", title, err)
	}
	var res tools.CreateTaskResult
	if err := json.Unmarshal(out, &res); err != nil {
		f.t.Fatal(err)
	}
	return res.ID
}

func (f *fixture) putMemory(repo, content, session string, created time.Time) string {
	f.t.Helper()
	ctx := context.Background()
	kv, err := f.conn.JS.KeyValue(ctx, events.MemoriesBucket)
	if err != nil {
		f.t.Fatal(err)
	}
	rec := events.MemoryRecord{
		Memory: memory.Memory{Content: content, Kind: memory.KindDecision, Rationale: "because", Confidence: 0.8, Repo: repo,
			Session: session, Source: memory.Span{Start: 10, End: 90}, Provider: "rules", CreatedAt: created, UpdatedAt: created},
		Hash: memory.Hash(content), Batch: session + "@0", Extractions: 1,
	}
	b, err := events.Encode(rec)
	if err != nil {
		f.t.Fatal(err)
	}
	rev, err := kv.Put(ctx, events.MemoryKey(repo, rec.Hash), b)
	if err != nil {
		f.t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := f.mat.WaitMemoryRevision(wctx, rev); err != nil {
		f.t.Fatal(err)
	}
	return events.MemoryKey(repo, rec.Hash)
}

func (f *fixture) putDoc(repo, path, content string) {
	f.t.Helper()
	ctx := context.Background()
	kv, err := f.conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		f.t.Fatal(err)
	}
	now := time.Now().UTC()
	rec := events.DocRecord{
		Repo: repo, Path: path, SHA256: events.SHA256Hex([]byte(content)), Size: int64(len(content)), ModTime: now,
		SourceSeq: 1, Kind: events.DocMarkdown, Tokens: len(content) / 4, Lines: strings.Count(content, "\n") + 1,
		Title: strings.TrimPrefix(strings.SplitN(content, "\n", 2)[0], "# "), Content: content, IndexedAt: now,
	}
	b, err := events.Encode(rec)
	if err != nil {
		f.t.Fatal(err)
	}
	rev, err := kv.Put(ctx, events.DocKey(repo, path), b)
	if err != nil {
		f.t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := f.mat.WaitRevision(wctx, rev); err != nil {
		f.t.Fatal(err)
	}
}

func taskByID(b dashboard.Board, id string) (dashboard.BoardTask, bool) {
	i := slices.IndexFunc(b.Tasks, func(t dashboard.BoardTask) bool { return t.ID == id })
	if i < 0 {
		return dashboard.BoardTask{}, false
	}
	return b.Tasks[i], true
}

func TestBoardShowsTasksWithDependenciesScopedToTheToken(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: true})
	schema := f.createTask("app", "Design the schema")
	api := f.createTask("app", "Build the API", schema)
	ui := f.createTask("app", "Wire the UI", api, schema)
	secret := f.createTask("vault", "Rotate the vault keys")

	var b dashboard.Board
	f.getJSON("/dashboard/api/board", allSecret, &b)
	if !slices.Equal(b.Statuses, []string{"todo", "active", "done", "archived"}) {
		t.Errorf("statuses %v", b.Statuses)
	}
	for _, id := range []string{schema, api, ui, secret} {
		if _, ok := taskByID(b, id); !ok {
			t.Errorf("task %s missing from the board: %+v", id, b.Tasks)
		}
	}
	got, _ := taskByID(b, api)
	if got.Title != "Build the API" || got.Status != "todo" || got.Repo != "app" || !slices.Equal(got.DependsOn, []string{schema}) {
		t.Errorf("api task %+v", got)
	}
	if !slices.ContainsFunc(b.Edges, func(e dashboard.BoardEdge) bool {
		return e.Repo == "app" && e.From == schema && e.To == api && !e.Missing
	}) {
		t.Errorf("edge %s→%s missing: %+v", schema, api, b.Edges)
	}
	// Layers: schema, then api, then ui (its deepest dependency is api).
	layers := map[string]int{}
	for _, id := range []string{schema, api, ui} {
		tk, _ := taskByID(b, id)
		layers[id] = tk.Layer
	}
	if layers[schema] != 0 || layers[api] != 1 || layers[ui] != 2 || b.Layers != 3 {
		t.Errorf("layers %v of %d", layers, b.Layers)
	}

	// The app-only token sees app's tasks and not one of the vault's,
	// and cannot ask for the vault by name.
	var scoped dashboard.Board
	f.getJSON("/dashboard/api/board", appSecret, &scoped)
	if _, ok := taskByID(scoped, api); !ok {
		t.Errorf("app-only token does not see %s: %+v", api, scoped.Tasks)
	}
	if _, ok := taskByID(scoped, secret); ok || slices.Contains(scoped.Repos, "vault") {
		t.Errorf("app-only token sees the vault: %+v", scoped)
	}
	code, body := f.get("/dashboard/api/board?repo=vault", appSecret)
	if code != http.StatusBadRequest || strings.Contains(body, "Rotate") {
		t.Errorf("app-only token asking for the vault: %d %s", code, body)
	}
	var who map[string]any
	f.getJSON("/dashboard/api/whoami", appSecret, &who)
	if who["token"] != "apponly" || who["restricted"] != true {
		t.Errorf("whoami %v", who)
	}
}

func TestAuthenticationIsTheMCPEndpoints(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: true})
	for _, path := range []string{"/dashboard/api/board", "/dashboard/api/memories", "/dashboard/api/search?q=x", "/dashboard/api/ops", "/dashboard/api/whoami"} {
		if code, body := f.get(path, ""); code != http.StatusUnauthorized || !strings.Contains(body, "Bearer") {
			t.Errorf("%s without a token: %d %s", path, code, body)
		}
		if code, _ := f.get(path, "not-a-configured-token-at-all"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d", path, code)
		}
		if code, body := f.get(path, allSecret, "Origin", "https://evil.example"); code != http.StatusForbidden {
			t.Errorf("%s from a foreign origin: %d %s", path, code, body)
		}
	}
	// The page's own origin is admitted.
	if code, body := f.get("/dashboard/api/whoami", allSecret, "Origin", f.srv.URL); code != http.StatusOK {
		t.Errorf("same origin: %d %s", code, body)
	}
	// Pages and assets hold no data and need no token.
	for _, path := range []string{"/dashboard/", "/dashboard/memories", "/dashboard/search", "/dashboard/ops"} {
		code, body := f.get(path, "")
		if code != http.StatusOK || !strings.Contains(body, `id="token-form"`) || !strings.Contains(body, "/dashboard/static/app.js") {
			t.Errorf("page %s: %d %.200s", path, code, body)
		}
	}
	if code, body := f.get("/dashboard/static/app.js", ""); code != http.StatusOK || !strings.Contains(body, "dataset.ready") {
		t.Errorf("app.js: %d", code)
	}
	if code, _ := f.get("/dashboard/nowhere", ""); code != http.StatusNotFound {
		t.Errorf("unknown page: %d", code)
	}
}

func TestMemoriesTimeline(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: true})
	now := time.Now().UTC().Truncate(time.Second)
	older := f.putMemory("app", "Use JWT instead of server sessions", "sess-app-1", now.Add(-2*time.Hour))
	newer := f.putMemory("app", "Keep the connection pool a singleton", "sess-app-2", now.Add(-time.Hour))
	vault := f.putMemory("vault", "The vault combination lives in the safe", "sess-vault", now)

	var m dashboard.Memories
	f.getJSON("/dashboard/api/memories", allSecret, &m)
	keys := make([]string, len(m.Memories))
	for i, h := range m.Memories {
		keys[i] = events.MemoryKey(h.Repo, h.Hash)
	}
	if !slices.Equal(keys, []string{older, newer, vault}) {
		t.Fatalf("timeline %v, want oldest first %v", keys, []string{older, newer, vault})
	}
	if h := m.Memories[0]; h.Session != "sess-app-1" || h.Source.End != 90 || h.Provider != "rules" {
		t.Errorf("memory source %+v", h)
	}

	f.getJSON("/dashboard/api/memories", appSecret, &m)
	for _, h := range m.Memories {
		if h.Repo != "app" {
			t.Errorf("app-only token sees %s's memory %q", h.Repo, h.Content)
		}
	}
	if len(m.Memories) != 2 {
		t.Errorf("app-only token sees %d memories, want 2", len(m.Memories))
	}

	// A query ranks by search_memories, shown in time order too.
	f.getJSON("/dashboard/api/memories?q=JWT+sessions&mode=keyword", allSecret, &m)
	if len(m.Memories) != 1 || m.Memories[0].Content != "Use JWT instead of server sessions" {
		t.Errorf("query: %+v", m.Memories)
	}
	if code, body := f.get("/dashboard/api/memories?kind=nonsense", allSecret); code != http.StatusBadRequest {
		t.Errorf("bad kind: %d %s", code, body)
	}
}

func TestSearchModesAndFilters(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: true})
	f.putDoc("app", "docs/mooring.md", "# Quasar mooring\n\nHow the app moors a quasar.\n")
	f.putDoc("vault", "docs/quasar.md", "# Quasar vault\n\nThe vault's quasar notes.\n")
	var s dashboard.Search
	f.getJSON("/dashboard/api/search?q=quasar&mode=keyword", allSecret, &s)
	paths := map[string]bool{}
	for _, h := range s.Results {
		paths[h.Repo+"/"+h.Path] = true
	}
	if !paths["app/docs/mooring.md"] || !paths["vault/docs/quasar.md"] || s.Mode != "keyword" {
		t.Errorf("all repos: %+v", s)
	}
	f.getJSON("/dashboard/api/search?q=quasar&mode=keyword&repo=vault", allSecret, &s)
	if len(s.Results) != 1 || s.Results[0].Path != "docs/quasar.md" {
		t.Errorf("repo filter: %+v", s.Results)
	}
	f.getJSON("/dashboard/api/search?q=quasar&mode=hybrid", appSecret, &s)
	for _, h := range s.Results {
		if h.Repo != "app" {
			t.Errorf("app-only token finds %s/%s", h.Repo, h.Path)
		}
	}
	if len(s.Results) == 0 {
		t.Error("app-only token finds nothing")
	}
	for _, bad := range []string{"/dashboard/api/search", "/dashboard/api/search?q=x&mode=psychic", "/dashboard/api/search?q=x&limit=0"} {
		if code, body := f.get(bad, allSecret); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
}

func TestOpsDeadLettersBudgetAndRateLimits(t *testing.T) {
	limit := 7.5
	f := newFixture(t, fixtureOptions{tokens: true, dailyLimit: &limit,
		rateRules: map[string]resilience.RateRule{tools.ReadContext: {Limit: 1, Window: time.Hour}}})
	ctx := context.Background()

	var ops dashboard.Ops
	f.getJSON("/dashboard/api/ops", allSecret, &ops)
	if ops.DeadLetters == nil || ops.DeadLetters.Count != 0 {
		t.Errorf("dead letters before any: %+v", ops.DeadLetters)
	}
	if b := ops.Budget; b == nil || b.Recorded || b.SpentUSD != 0 || b.LimitUSD == nil || *b.LimitUSD != 7.5 || b.LimitSource != "config" {
		t.Errorf("budget before any spend: %+v", ops.Budget)
	}
	if ops.Materialisation == nil || len(ops.Materialisation.Feeds) == 0 {
		t.Errorf("materialisation lag: %+v", ops.Materialisation)
	}
	if !slices.ContainsFunc(ops.Ingest, func(q dashboard.QueueLag) bool { return q.Stream == events.IngestStream }) {
		t.Errorf("ingest queues: %+v", ops.Ingest)
	}

	// Dead letters as the workers write them: one of app, one of vault.
	for _, repo := range []string{"app", "vault"} {
		msg := nats.NewMsg(events.SubjectDeadLetterPrefix + "indexer")
		msg.Header.Set(events.HeaderDeadSubject, events.FileSubject(repo))
		msg.Header.Set(events.HeaderDeadError, "parse "+repo+": unexpected EOF")
		msg.Header.Set(events.HeaderDeadConsumer, events.IndexerConsumer)
		msg.Header.Set(events.HeaderDeadStream, events.IngestStream)
		msg.Header.Set(events.HeaderDeadSeq, "42")
		msg.Header.Set(events.HeaderDeadDeliver, "5")
		msg.Data = []byte("{}")
		if _, err := f.conn.JS.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	// Today's spend, as the extractors record it.
	kv, err := f.conn.JS.KeyValue(ctx, events.BudgetBucket)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := json.Marshal(events.BudgetState{WindowStart: time.Now().UTC().Truncate(24 * time.Hour), SpentMicros: 1_250_000, LimitMicros: 5_000_000, Calls: 3, Refused: 1})
	if _, err := kv.Put(ctx, events.BudgetKey(time.Now()), st); err != nil {
		t.Fatal(err)
	}
	// read_context allows one call an hour here: the second search is
	// refused, and counted.
	if code, body := f.get("/dashboard/api/search?q=anything", allSecret); code != http.StatusOK {
		t.Fatalf("first search: %d %s", code, body)
	}
	if code, body := f.get("/dashboard/api/search?q=anything", allSecret); code != http.StatusTooManyRequests || !strings.Contains(body, "retry_after_seconds") {
		t.Fatalf("second search: %d %s", code, body)
	}

	f.getJSON("/dashboard/api/ops", allSecret, &ops)
	if d := ops.DeadLetters; d == nil || d.Count != 2 || len(d.Latest) != 2 || d.Latest[0].Repo != "vault" || d.Latest[1].Error != "parse app: unexpected EOF" || d.Latest[1].Deliveries != "5" {
		t.Errorf("dead letters: %+v", ops.DeadLetters)
	}
	if b := ops.Budget; b == nil || !b.Recorded || b.SpentUSD != 1.25 || b.LimitUSD == nil || *b.LimitUSD != 5 || b.LimitSource != "bucket" || b.Calls != 3 || b.Refused != 1 || b.UsedFraction == nil || *b.UsedFraction != 0.25 {
		t.Errorf("budget: %+v", ops.Budget)
	}
	if !slices.Contains(ops.RateLimits, dashboard.ToolCount{Tool: tools.ReadContext, Count: 1}) {
		t.Errorf("rate limits: %+v", ops.RateLimits)
	}

	// The app-only token counts both dead letters but sees only app's.
	f.getJSON("/dashboard/api/ops", appSecret, &ops)
	if d := ops.DeadLetters; d == nil || d.Count != 2 || len(d.Latest) != 1 || d.Latest[0].Repo != "app" || d.Hidden != 1 {
		t.Errorf("app-only dead letters: %+v", ops.DeadLetters)
	}
}

func TestBudgetLimitUnknownWithoutRecordOrConfig(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	var ops dashboard.Ops
	f.getJSON("/dashboard/api/ops", "", &ops)
	if b := ops.Budget; b == nil || b.LimitUSD != nil || b.LimitSource != "unknown" || b.Recorded {
		t.Errorf("budget: %+v", ops.Budget)
	}
	// Without tokens the dashboard reads every repo as its own client.
	var who map[string]any
	f.getJSON("/dashboard/api/whoami", "", &who)
	if who["client"] != dashboard.Client || who["restricted"] != false {
		t.Errorf("whoami %v", who)
	}
}
