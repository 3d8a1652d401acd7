package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/tools/toolstest"
)

// env is an embedded NATS server with a connection per role.
type env struct {
	t   testing.TB
	url string
	nc  *nats.Conn
}

func newEnv(t testing.TB) *env {
	conn, srv := bustest.Start(t, bus.Settings{})
	return &env{t: t, url: srv.ClientURL(), nc: conn.NC}
}

// conn opens another connection, as another process would.
func (e *env) conn() *nats.Conn {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := bus.Connect(ctx, e.url, bus.ConnectOptions{Name: e.t.Name()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c.NC
}

// serve runs query.Serve on its own connection until the returned stop is
// called or the test ends, and waits until its endpoints answer.
func (e *env) serve(caller tools.Caller, opts query.Options) (stop func() error) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	nc := e.conn()
	ready, finished := make(chan struct{}), make(chan struct{})
	opts.Ready = func() { close(ready) }
	var err error
	go func() {
		defer close(finished)
		err = query.Serve(ctx, nc, caller, opts)
	}()
	stop = func() error {
		cancel()
		<-finished
		return err
	}
	e.t.Cleanup(func() { stop() })
	select {
	case <-ready:
	case <-finished:
		e.t.Fatalf("Serve: %v", err)
	}
	return stop
}

func (e *env) client(opts query.ClientOptions) *query.Client {
	e.t.Helper()
	c, err := query.NewClient(e.conn(), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func callDoc(c tools.Caller, path string) (tools.ReadDocResult, error) {
	var res tools.ReadDocResult
	out, err := c.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{"path":"`+path+`"}`))
	if err != nil {
		return res, err
	}
	err = json.Unmarshal(out, &res)
	return res, err
}

func TestRoundTrip(t *testing.T) {
	e := newEnv(t)
	e.serve(toolstest.Sample(), query.Options{})
	c := e.client(query.ClientOptions{})

	doc, err := callDoc(c, "docs/auth.md")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Path != "docs/auth.md" || !strings.Contains(doc.Content, "VerifyToken") {
		t.Errorf("read_doc: %+v", doc)
	}
	out, err := c.Call(context.Background(), tools.ReadContext, json.RawMessage(`{"query":"oauth login"}`))
	if err != nil {
		t.Fatal(err)
	}
	var hits []tools.ContextHit
	if err := json.Unmarshal(out, &hits); err != nil || len(hits) == 0 || hits[0].Path != "docs/auth.md" {
		t.Errorf("read_context: %s %v", out, err)
	}
}

func TestToolErrorsCrossIntact(t *testing.T) {
	e := newEnv(t)
	e.serve(failOnBoom(toolstest.Sample()), query.Options{})
	c := e.client(query.ClientOptions{})

	_, err := callDoc(c, "notes/auth.md")
	want := tools.FileNotFound("notes/auth.md", "docs/auth.md")
	var te *tools.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *tools.Error", err, err)
	}
	if te.Code != want.Code || te.Message != want.Message || te.Data["suggestion"] != want.Data["suggestion"] || te.Data["path"] != want.Data["path"] {
		t.Errorf("got %+v, want %+v", te, want)
	}

	_, err = c.Call(context.Background(), tools.ReadContext, json.RawMessage(`{"query":"a","limit":0}`))
	if !errors.As(err, &te) || te.Code != tools.CodeInvalidParams || !strings.Contains(te.Data["detail"].(string), "minimum") {
		t.Errorf("invalid params: %v", err)
	}

	_, err = c.Call(context.Background(), tools.ReadContext, json.RawMessage(`{"query":"boom"}`))
	if !errors.As(err, &te) || te.Code != tools.CodeInternal || te.Message != "Internal error: index unavailable" {
		t.Errorf("internal error: %v", err)
	}
}

func failOnBoom(c tools.Caller) tools.Caller {
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if strings.Contains(string(args), `"boom"`) {
			return nil, errors.New("index unavailable")
		}
		return c.Call(ctx, tool, args)
	})
}

func TestNoResponders(t *testing.T) {
	e := newEnv(t)
	c := e.client(query.ClientOptions{})
	start := time.Now()
	_, err := callDoc(c, "docs/auth.md")
	if !errors.Is(err, query.ErrNoEdge) || !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("got %v, want no edge", err)
	}
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeInternal || !strings.Contains(te.Data["suggestion"].(string), "cue up") {
		t.Errorf("no edge error for the agent: %+v", te)
	}
	if time.Since(start) > query.DefaultTimeout/2 {
		t.Errorf("no responders took %s: it waited for the timeout", time.Since(start))
	}
}

// blocking is a caller whose read_doc calls wait until released, and
// report their start; other tools answer at once.
type blocking struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

// newBlocking returns a blocking caller served for the test; it is released
// when the test ends, before the service stops.
func newBlocking(e *env) *blocking {
	b := &blocking{started: make(chan struct{}, 16), release: make(chan struct{})}
	e.serve(b, query.Options{})
	e.t.Cleanup(b.releaseAll)
	return b
}

func (b *blocking) releaseAll() { b.once.Do(func() { close(b.release) }) }

func (b *blocking) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	if tool != tools.ReadDoc {
		return json.RawMessage(`[]`), nil
	}
	b.started <- struct{}{}
	<-b.release
	return json.RawMessage(`{"ok":true}`), nil
}

func TestTimeouts(t *testing.T) {
	e := newEnv(t)
	newBlocking(e)

	// The client's timeout applies when the context has none.
	c := e.client(query.ClientOptions{Timeout: 50 * time.Millisecond})
	_, err := c.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{}`))
	if !errors.Is(err, query.ErrNoEdge) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("client timeout: %v", err)
	}

	// The context's deadline wins over the client's timeout.
	c = e.client(query.ClientOptions{Timeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Call(ctx, tools.ReadDoc, json.RawMessage(`{}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("context deadline: %v", err)
	}

	// Cancelling is not a timeout.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = c.Call(ctx, tools.ReadDoc, json.RawMessage(`{}`))
	if !errors.Is(err, context.Canceled) || errors.Is(err, query.ErrNoEdge) {
		t.Errorf("cancelled: %v", err)
	}
}

// counting counts the calls it answers.
type counting struct {
	n atomic.Int64
	c tools.Caller
}

func (c *counting) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	c.n.Add(1)
	return c.c.Call(ctx, tool, args)
}

func TestQueueGroupSharesLoad(t *testing.T) {
	e := newEnv(t)
	a, b := &counting{c: toolstest.Sample()}, &counting{c: toolstest.Sample()}
	e.serve(a, query.Options{})
	e.serve(b, query.Options{})
	c := e.client(query.ClientOptions{})
	const calls = 60
	for range calls {
		if _, err := callDoc(c, "docs/api.md"); err != nil {
			t.Fatal(err)
		}
	}
	if a.n.Load()+b.n.Load() != calls || a.n.Load() == 0 || b.n.Load() == 0 {
		t.Errorf("calls split %d/%d, want both serving %d in all", a.n.Load(), b.n.Load(), calls)
	}
}

func TestServiceInfo(t *testing.T) {
	e := newEnv(t)
	prefix := query.WorkspacePrefix("ws1")
	e.serve(toolstest.Sample(), query.Options{Prefix: prefix})
	msg, err := e.nc.Request("$SRV.INFO."+query.ServiceName, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info micro.Info
	if err := json.Unmarshal(msg.Data, &info); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ep := range info.Endpoints {
		if ep.QueueGroup != query.QueueGroup {
			t.Errorf("endpoint %s in queue group %q", ep.Name, ep.QueueGroup)
		}
		got[ep.Name] = ep.Subject
	}
	for _, d := range tools.Definitions() {
		if want := "cue.query.ws1." + d.Name; got[d.Name] != want {
			t.Errorf("endpoint %s on %q, want %q", d.Name, got[d.Name], want)
		}
	}
}

func TestPrefixIsolatesWorkspaces(t *testing.T) {
	e := newEnv(t)
	e.serve(toolstest.Sample(), query.Options{Prefix: query.WorkspacePrefix("a")})
	if _, err := callDoc(e.client(query.ClientOptions{Prefix: query.WorkspacePrefix("a")}), "docs/api.md"); err != nil {
		t.Errorf("own workspace: %v", err)
	}
	if _, err := callDoc(e.client(query.ClientOptions{Prefix: query.WorkspacePrefix("b")}), "docs/api.md"); !errors.Is(err, query.ErrNoEdge) {
		t.Errorf("other workspace: %v, want no edge", err)
	}
	for _, bad := range []string{"cue.*", "cue..x", "cue.>", "a b"} {
		if _, err := query.NewClient(e.nc, query.ClientOptions{Prefix: bad}); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
		if err := query.Serve(context.Background(), e.nc, toolstest.Sample(), query.Options{Prefix: bad}); err == nil {
			t.Errorf("Serve accepted prefix %q", bad)
		}
	}
}

// TestStopFinishesCallsInFlight cancels Serve while a call runs: the call
// still gets its answer, and Serve returns only after it.
func TestStopFinishesCallsInFlight(t *testing.T) {
	e := newEnv(t)
	b := &blocking{started: make(chan struct{}, 16), release: make(chan struct{})}
	stop := e.serve(b, query.Options{})
	t.Cleanup(b.releaseAll)
	c := e.client(query.ClientOptions{})

	answered := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{}`))
		answered <- err
	}()
	<-b.started
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()

	// Once the service has stopped routing here, new calls find no edge;
	// the call in flight is still waiting.
	bustest.Eventually(t, 10*time.Second, "service unsubscribed", func() bool {
		_, err := c.Call(context.Background(), tools.ReadContext, json.RawMessage(`{"query":"x"}`))
		return errors.Is(err, nats.ErrNoResponders)
	})
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned (%v) with a call in flight", err)
	default:
	}
	b.releaseAll()
	if err := <-answered; err != nil {
		t.Errorf("call in flight: %v", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestMCPOverNATS runs the whole chain: the official MCP client, the MCP
// server, a query.Client, NATS, query.Serve and the tool set.
func TestMCPOverNATS(t *testing.T) {
	e := newEnv(t)
	e.serve(toolstest.Sample(), query.Options{})
	server := mcpserver.New(e.client(query.ClientOptions{}), mcpserver.Options{})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- mcpserver.Serve(serveCtx, server, st) }()
	defer func() {
		stopServe()
		if err := <-served; err != nil {
			t.Errorf("mcp serve: %v", err)
		}
	}()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "docs/auth.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["path"] != "docs/auth.md" {
		t.Errorf("read_doc: %+v", res)
	}

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadDoc, Arguments: map[string]any{"path": "notes/auth.md"}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != tools.CodeFileNotFound || !strings.Contains(string(we.Data), `"suggestion":"Did you mean 'docs/auth.md'?"`) {
		t.Errorf("missing file: %v", err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadContext, Arguments: map[string]any{"query": "x", "mode": "magic"}})
	if !errors.As(err, &we) || we.Code != tools.CodeInvalidParams || !strings.Contains(string(we.Data), "enum") {
		t.Errorf("invalid params: %v", err)
	}
}

// An edge whose server went away still stops at once: it does not wait for
// the server to confirm an unsubscribe it can no longer see.
func TestStopWhileCutOffDoesNotWaitForTheServer(t *testing.T) {
	conn, srv := bustest.Start(t, bus.Settings{})
	var logs logtest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready, finished := make(chan struct{}), make(chan error, 1)
	go func() {
		finished <- query.Serve(ctx, conn.NC, toolstest.Sample(), query.Options{
			Ready: func() { close(ready) }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	}()
	select {
	case <-ready:
	case err := <-finished:
		t.Fatalf("Serve: %v", err)
	}
	srv.Shutdown()
	bustest.Eventually(t, 10*time.Second, "the connection notices the server is gone", func() bool {
		return !conn.NC.IsConnected()
	})
	cancel()
	if err := <-finished; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if strings.Contains(logs.String(), "flush after stop") {
		t.Errorf("Serve waited for a server it cannot reach:\n%s", logs.String())
	}
}

// TestNoticesCrossBesideTheResult: what the edge tells the agent beside a
// result reaches the caller's collector, each once and guarded, and the
// result is unchanged; a caller without a collector just gets the result.
func TestNoticesCrossBesideTheResult(t *testing.T) {
	e := newEnv(t)
	sample := toolstest.Sample()
	e.serve(tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		tools.Notify(ctx, "indexing: 1,200 of 3,979 files")
		tools.Notify(ctx, "indexing: 1,200 of 3,979 files")
		tools.Notify(ctx, "token AKIA"+"Q7ZK2M4N6P8R3T5V")
		return sample.Call(ctx, tool, args)
	}), query.Options{})
	c := e.client(query.ClientOptions{})

	ctx, notices := tools.WithNotices(context.Background())
	out, err := c.Call(ctx, tools.ReadContext, json.RawMessage(`{"query":"oauth login"}`))
	if err != nil {
		t.Fatal(err)
	}
	var hits []tools.ContextHit
	if err := json.Unmarshal(out, &hits); err != nil || len(hits) == 0 {
		t.Fatalf("result: %s %v", out, err)
	}
	got := notices.Texts()
	if len(got) != 2 || got[0] != "indexing: 1,200 of 3,979 files" || strings.Contains(got[1], "Q7ZK2M4N6P8R3T5V") {
		t.Errorf("notices = %q", got)
	}
	if _, err := c.Call(context.Background(), tools.ReadContext, json.RawMessage(`{"query":"oauth login"}`)); err != nil {
		t.Errorf("without a collector: %v", err)
	}
}

// A service whose connection drops while it waits for the server to take
// its subscriptions (the daemon's server restarting in place as the edge
// starts) serves once the connection is back, rather than give up.
func TestServeOutlivesADropWhileSubscribing(t *testing.T) {
	_, srv := bustest.Start(t, bus.Settings{})
	proxy := newCutProxy(t, strings.TrimPrefix(srv.ClientURL(), "nats://"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := bus.Connect(ctx, "nats://"+proxy.addr(), bus.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	proxy.armed.Store(true)
	ready, finished := make(chan struct{}), make(chan error, 1)
	go func() {
		finished <- query.Serve(ctx, conn.NC, toolstest.Sample(), query.Options{Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-finished:
		t.Fatalf("Serve gave up when its connection dropped: %v", err)
	}
	select {
	case <-proxy.cut:
	default:
		t.Fatal("the connection was not cut while Serve flushed: the test proved nothing")
	}
	e := &env{t: t, url: srv.ClientURL(), nc: conn.NC}
	if _, err := callDoc(e.client(query.ClientOptions{}), "docs/api.md"); err != nil {
		t.Fatalf("a call once the connection is back: %v", err)
	}
}

// cutProxy passes TCP through to a NATS server; armed, it cuts the first
// connection whose client sends a PING (a flush) without passing it on.
type cutProxy struct {
	ln     net.Listener
	target string
	armed  atomic.Bool
	cut    chan struct{}
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, cut: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pass(c)
		}
	}()
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) pass(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	go io.Copy(client, server)
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 && bytes.Contains(buf[:n], []byte("PING\r\n")) && p.armed.CompareAndSwap(true, false) {
			close(p.cut)
			return
		}
		if n > 0 {
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
