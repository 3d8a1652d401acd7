package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// awsKeyID is a key the guard redacts (split so scanners of this file do
// not flag it).
const awsKeyID = "AKIA" + "Q7ZK2M4N6P8R3T5V"

// gate blocks the materialiser before it applies a cue_docs batch while
// held, so a test sees a replay in progress without racing it.
type gate struct {
	mu      sync.Mutex
	hold    chan struct{} // nil: open
	waiting atomic.Int32
}

func newHeldGate() *gate { return &gate{hold: make(chan struct{})} }

func (g *gate) beforeApply(ctx context.Context, bucket string, _ int) {
	if bucket != events.DocsBucket {
		return
	}
	g.mu.Lock()
	hold := g.hold
	g.mu.Unlock()
	if hold == nil {
		return
	}
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
	select {
	case <-hold:
	case <-ctx.Done():
	}
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hold == nil {
		g.hold = make(chan struct{})
	}
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hold != nil {
		close(g.hold)
		g.hold = nil
	}
}

func docRecord(repo, path, content string) events.DocRecord {
	return events.DocRecord{
		Repo: repo, Path: path, SHA256: events.SHA256Hex([]byte(content)), Size: int64(len(content)),
		SourceSeq: 1, Kind: events.DocMarkdown, Lines: 1, Title: path, Content: content, IndexedAt: time.Now().UTC(),
	}
}

func putDoc(t *testing.T, conn *bus.Conn, rec events.DocRecord) uint64 {
	t.Helper()
	ctx := context.Background()
	kv, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	b, err := events.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := kv.Put(ctx, events.DocKey(rec.Repo, rec.Path), b)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// edgeUnderTest is a materialiser and task board run by the test, with the
// operations endpoints served over HTTP.
type edgeUnderTest struct {
	mat     *edge.Materialiser
	board   *tasks.Board
	mon     *telemetry.Monitor
	metrics *telemetry.Metrics
	url     string
}

func startEdge(t *testing.T, conn *bus.Conn, g *gate) *edgeUnderTest {
	t.Helper()
	opts := edge.Options{}
	if g != nil {
		opts.BeforeApply = g.beforeApply
	}
	mat, err := edge.OpenOnWith(context.Background(), conn.JS, t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	board := tasks.NewBoard(conn.JS, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := mat.Run(ctx); err != nil {
			t.Errorf("materialiser: %v", err)
		}
	})
	wg.Go(func() { board.Run(ctx) })
	t.Cleanup(func() {
		if g != nil {
			g.open()
		}
		cancel()
		wg.Wait()
	})
	e := &edgeUnderTest{mat: mat, board: board, metrics: telemetry.NewMetrics()}
	e.mon = telemetry.NewMonitor(telemetry.EdgeProgress(conn.JS, mat, board), telemetry.MonitorOptions{Timeout: 200 * time.Millisecond})
	e.metrics.RegisterMonitor(e.mon)
	e.metrics.RegisterEdge(mat)
	mcp := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "mcp") })
	srv := httptest.NewServer(telemetry.Mux(mcp, e.metrics, e.mon))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func (e *edgeUnderTest) readyz(t *testing.T) (int, telemetry.Report) {
	t.Helper()
	code, body := get(t, e.url+telemetry.PathReady)
	var r telemetry.Report
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("readyz body %q: %v", body, err)
	}
	return code, r
}

func feedOf(t *testing.T, r telemetry.Report, feed string) telemetry.FeedReport {
	t.Helper()
	for _, f := range r.Feeds {
		if f.Feed == feed {
			return f
		}
	}
	t.Fatalf("report has no feed %s: %+v", feed, r)
	return telemetry.FeedReport{}
}

// scrape reads /metrics over HTTP and parses the text format.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, base+telemetry.PathMetrics)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the sample of name with exactly labels (a histogram's count);
// ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	fam := fams[name]
	if fam == nil {
		return 0, false
	}
next:
	for _, m := range fam.Metric {
		if len(m.Label) != len(labels)/2 {
			continue
		}
		for _, l := range m.Label {
			found := false
			for i := 0; i < len(labels); i += 2 {
				if labels[i] == l.GetName() && labels[i+1] == l.GetValue() {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func mustValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := value(fams, name, labels...)
	if !ok {
		t.Fatalf("/metrics has no %s%v", name, labels)
	}
	return v
}

func TestHealthzAnswersOKAndMCPStaysMounted(t *testing.T) {
	srv := httptest.NewServer(telemetry.Mux(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "mcp") }), nil, nil))
	defer srv.Close()
	if code, body := get(t, srv.URL+telemetry.PathHealth); code != 200 || string(body) != "ok\n" {
		t.Fatalf("/healthz = %d %q, want 200 ok", code, body)
	}
	if code, body := get(t, srv.URL+telemetry.PathMCP); code != 200 || string(body) != "mcp" {
		t.Fatalf("/mcp = %d %q, want the MCP handler", code, body)
	}
}

// TestReadyzFollowsReplayAndLag holds an edge's replay of many records,
// then lets it finish, falls behind again, and loses the cluster: /readyz
// and the lag gauges say which at each step.
func TestReadyzFollowsReplayAndLag(t *testing.T) {
	conn, srv := bustest.Start(t, bus.Settings{})
	const n = 300
	var head uint64
	for i := range n {
		head = putDoc(t, conn, docRecord("app", fmt.Sprintf("docs/note-%03d.md", i), fmt.Sprintf("# Note %d\n\nbody %d\n", i, i)))
	}
	g := newHeldGate()
	e := startEdge(t, conn, g)
	ctx := context.Background()

	// Replaying: the first cue_docs batch waits at the gate.
	bustest.Eventually(t, 10*time.Second, "the replay reaches the gate", func() bool { return g.waiting.Load() == 1 })
	e.mon.CheckHeads(ctx)
	code, r := e.readyz(t)
	docs := feedOf(t, r, events.DocsBucket)
	if code != http.StatusServiceUnavailable || r.Ready || docs.Replayed || docs.Head != head || docs.Behind != head {
		t.Fatalf("replaying: /readyz = %d %+v; want 503, not ready, cue_docs behind %d", code, r, head)
	}
	fams := scrape(t, e.url)
	if lag := mustValue(t, fams, "cue_feed_lag_revisions", "feed", events.DocsBucket); lag != float64(head) {
		t.Fatalf("replaying: lag gauge = %v, want %d", lag, head)
	}
	if ready := mustValue(t, fams, "cue_ready"); ready != 0 {
		t.Fatalf("replaying: cue_ready = %v, want 0", ready)
	}

	// Caught up.
	g.open()
	bustest.Eventually(t, 20*time.Second, "the edge is ready", func() bool {
		code, _ := e.readyz(t)
		return code == http.StatusOK
	})
	e.mon.CheckHeads(ctx)
	code, r = e.readyz(t)
	if docs := feedOf(t, r, events.DocsBucket); code != 200 || !r.Ready || r.Lagging || docs.Behind != 0 || docs.Applied != head || !feedOf(t, r, events.TasksStream).Replayed {
		t.Fatalf("caught up: /readyz = %d %+v", code, r)
	}
	fams = scrape(t, e.url)
	for name, want := range map[string]float64{"cue_ready": 1, "cue_edge_docs": n} {
		if got := mustValue(t, fams, name); got != want {
			t.Errorf("caught up: %s = %v, want %v", name, got, want)
		}
	}
	if lag := mustValue(t, fams, "cue_feed_lag_revisions", "feed", events.DocsBucket); lag != 0 {
		t.Fatalf("caught up: lag gauge = %v, want 0", lag)
	}
	if _, ok := value(fams, "cue_feed_last_applied_age_seconds", "feed", events.DocsBucket); !ok {
		t.Error("caught up: no cue_feed_last_applied_age_seconds for cue_docs")
	}

	// Behind after start: ready stays 200, the body reports the lag.
	g.close()
	next := putDoc(t, conn, docRecord("app", "docs/late.md", "# Late\n"))
	bustest.Eventually(t, 10*time.Second, "the new record reaches the gate", func() bool { return g.waiting.Load() == 1 })
	e.mon.CheckHeads(ctx)
	code, r = e.readyz(t)
	if docs := feedOf(t, r, events.DocsBucket); code != 200 || !r.Lagging || docs.Behind != next-head {
		t.Fatalf("behind: /readyz = %d %+v; want 200, lagging, cue_docs behind %d", code, r, next-head)
	}
	if lag := mustValue(t, scrape(t, e.url), "cue_feed_lag_revisions", "feed", events.DocsBucket); lag != float64(next-head) {
		t.Fatalf("behind: lag gauge = %v, want %d", lag, next-head)
	}
	g.open()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.mat.WaitRevision(wctx, next); err != nil {
		t.Fatal(err)
	}
	e.mon.CheckHeads(ctx)
	if _, r := e.readyz(t); r.Lagging {
		t.Fatalf("caught up again: %+v", r)
	}

	// Cut off from the cluster: still ready (answering from the local
	// copy), lagging, and saying the head cannot be read.
	srv.Shutdown()
	e.mon.CheckHeads(ctx)
	code, r = e.readyz(t)
	docs = feedOf(t, r, events.DocsBucket)
	if code != 200 || !r.Lagging || docs.HeadError == "" || docs.Head != next {
		t.Fatalf("cut off: /readyz = %d %+v; want 200, lagging, a head error, the last head %d", code, r, next)
	}
	if v := mustValue(t, scrape(t, e.url), "cue_feed_head_unreadable", "feed", events.DocsBucket); v != 1 {
		t.Fatalf("cut off: cue_feed_head_unreadable = %v, want 1", v)
	}
}

// TestMetricsCountToolCalls calls a real edge through the middleware, with
// a stand-in rate limiter inside it, and reads the counters over HTTP.
func TestMetricsCountToolCalls(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	rev := putDoc(t, conn, docRecord("app", "docs/guide.md", "# Guide\n\nHow to deploy.\n"))
	secret := "Rotate the deploy key " + awsKeyID + " every quarter"
	mem := events.MemoryRecord{
		Memory: memory.Memory{Content: secret, Kind: memory.KindDecision, Confidence: 0.9, Repo: "app", Session: "sess-1",
			Source: memory.Span{Start: 0, End: 10}, CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()},
		Hash: memory.Hash(secret), Batch: "sess-1@0", Extractions: 1,
	}
	b, err := events.Encode(mem)
	if err != nil {
		t.Fatal(err)
	}
	mkv, err := conn.JS.KeyValue(ctx, events.MemoriesBucket)
	if err != nil {
		t.Fatal(err)
	}
	mrev, err := mkv.Put(ctx, events.MemoryKey(mem.Repo, mem.Hash), b)
	if err != nil {
		t.Fatal(err)
	}
	e := startEdge(t, conn, nil)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.mat.WaitRevision(wctx, rev); err != nil {
		t.Fatal(err)
	}
	if err := e.mat.WaitMemoryRevision(wctx, mrev); err != nil {
		t.Fatal(err)
	}
	// The rate limiter sits inside the middleware; this one rejects every
	// read_context call.
	edg := edge.New(e.mat, nil)
	limited := tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == tools.ReadContext {
			return nil, &tools.Error{Code: tools.CodeRateLimit, Message: "Rate limit exceeded", Data: map[string]any{"retry_after_ms": 1000}}
		}
		return edg.Call(ctx, tool, args)
	})
	caller := e.metrics.Instrument(limited)

	before := scrape(t, e.url)
	call := func(tool, args string) (json.RawMessage, error) {
		return caller.Call(ctx, tool, json.RawMessage(args))
	}
	for range 2 {
		if _, err := call(tools.ReadDoc, `{"path":"docs/guide.md"}`); err != nil {
			t.Fatalf("read_doc: %v", err)
		}
	}
	if _, err := call(tools.ReadDoc, `{"path":"docs/missing.md"}`); err == nil {
		t.Fatal("read_doc of a missing file succeeded")
	}
	if _, err := call(tools.ReadContext, `{"query":"deploy"}`); err == nil {
		t.Fatal("read_context got past the limiter")
	}
	out, err := call("search_memories", `{"query":"deploy key"}`)
	if err != nil {
		t.Fatalf("search_memories: %v", err)
	}
	if strings.Contains(string(out), awsKeyID) || !strings.Contains(string(out), "[REDACTED:aws-access-key-id]") {
		t.Fatalf("search_memories returned %s; want the key redacted", out)
	}
	after := scrape(t, e.url)

	delta := func(name string, labels ...string) float64 {
		v0, _ := value(before, name, labels...)
		return mustValue(t, after, name, labels...) - v0
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cue_tool_calls_total", []string{"tool", "read_doc", "outcome", "ok"}, 2},
		{"cue_tool_calls_total", []string{"tool", "read_doc", "outcome", "1001"}, 1},
		{"cue_tool_calls_total", []string{"tool", "read_context", "outcome", "429"}, 1},
		{"cue_tool_calls_total", []string{"tool", "search_memories", "outcome", "ok"}, 1},
		{"cue_tool_call_duration_seconds", []string{"tool", "read_doc", "outcome", "ok"}, 2},
		{"cue_tool_call_duration_seconds", []string{"tool", "read_context", "outcome", "429"}, 1},
		{"cue_tool_rate_limited_total", []string{"tool", "read_context"}, 1},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := delta("cue_guard_redactions_total"); got < 1 {
		t.Errorf("cue_guard_redactions_total moved by %v, want at least 1", got)
	}
	if _, ok := value(after, "cue_tool_rate_limited_total", "tool", "read_doc"); ok {
		t.Error("read_doc errors counted as rate limited")
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "cue_edge_memories"} {
		if _, ok := value(after, name); !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
}

func TestInstrumentLabelsUnknownTools(t *testing.T) {
	m := telemetry.NewMetrics()
	caller := m.Instrument(tools.CallerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, fmt.Errorf("boom")
	}))
	for i := range 3 {
		caller.Call(context.Background(), fmt.Sprintf("made-up-%d", i), nil)
	}
	srv := httptest.NewServer(telemetry.Mux(nil, m, nil))
	defer srv.Close()
	if got := mustValue(t, scrape(t, srv.URL), "cue_tool_calls_total", "tool", telemetry.ToolUnknown, "outcome", telemetry.OutcomeInternal); got != 3 {
		t.Fatalf("calls of unknown tools = %v, want 3 under one label", got)
	}
}

// Run reads heads in the background until cancelled; a head that fails is
// reported and clears on the next good reading.
func TestMonitorRunReadsHeads(t *testing.T) {
	var fail atomic.Bool
	var applied atomic.Uint64
	mon := telemetry.NewMonitor(func() []telemetry.Progress {
		return []telemetry.Progress{{Feed: "f", Applied: applied.Load(), Replayed: true, GatesReady: true, Head: func(context.Context) (uint64, error) {
			if fail.Load() {
				return 0, fmt.Errorf("no route to the cluster")
			}
			return 7, nil
		}}}
	}, telemetry.MonitorOptions{Interval: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mon.Run(ctx) }()
	bustest.Eventually(t, 5*time.Second, "head read", func() bool { return mon.Report().Feeds[0].Behind == 7 })
	fail.Store(true)
	bustest.Eventually(t, 5*time.Second, "head error reported", func() bool {
		f := mon.Report().Feeds[0]
		return f.HeadError != "" && f.Head == 7
	})
	fail.Store(false)
	applied.Store(7)
	bustest.Eventually(t, 5*time.Second, "caught up", func() bool {
		r := mon.Report()
		return !r.Lagging && r.Feeds[0].HeadError == ""
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}
