package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cuedeck/cuedeck/internal/daemon"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// TestMain gives the tests a home of their own: a daemon tails the Claude
// Code transcripts under $HOME, and the developer's sessions are not
// fixtures.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "cue-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// browserNames are the programs findBrowser looks for on PATH, in order.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findBrowser returns the Chromium to drive: $CUE_CHROME, else the first of
// browserNames on PATH. With none it fails the test, in CI and out of it:
// a browser test that skips proves nothing.
func findBrowser(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CUE_CHROME"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("CUE_CHROME=%s is not an executable: %v; unset it or point it at a Chromium", p, err)
		}
		return p
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatalf("no Chromium for the dashboard's browser tests: none of %s is on PATH and CUE_CHROME is unset; "+
		"run scripts/ensure-chromium.sh (it installs Debian's chromium with apt-get) or `make test`, which runs it", strings.Join(browserNames, ", "))
	return ""
}

// browser is one headless Chromium tab, with the page's uncaught
// exceptions and console errors kept for failure messages.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	errs []string
}

// startBrowser launches a headless Chromium for the test, with a tab open.
// Everything the test does in it must finish within timeout.
func startBrowser(t *testing.T, timeout time.Duration) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(findBrowser(t)),
		chromedp.WindowSize(1280, 900),
	)
	if os.Geteuid() == 0 {
		// Chromium's sandbox refuses to run as root; CI runs as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	ctx, cancelTimeout := context.WithTimeout(context.Background(), timeout)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	ctx, cancelTab := chromedp.NewContext(ctx)
	b := &browser{ctx: ctx}
	// Start the browser now, so that a missing or broken one fails here
	// with its own message.
	if err := chromedp.Do(ctx); err != nil {
		cancelTab()
		cancelAlloc()
		cancelTimeout()
		t.Fatalf("start Chromium: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev, err := range chromedp.Events(ctx, runtime.ExceptionThrown) {
			if err != nil {
				return
			}
			msg := ev.ExceptionDetails.Text
			if ex := ev.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
				msg += " " + ex.Description
			}
			b.note("uncaught: " + msg)
		}
	})
	wg.Go(func() {
		for ev, err := range chromedp.Events(ctx, runtime.ConsoleAPICalled) {
			if err != nil {
				return
			}
			if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeWarning {
				continue
			}
			var parts []string
			for _, a := range ev.Args {
				if a.Description != "" {
					parts = append(parts, a.Description)
				} else {
					parts = append(parts, string(a.Value))
				}
			}
			b.note("console." + string(ev.Type) + ": " + strings.Join(parts, " "))
		}
	})
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		cancelTimeout()
		wg.Wait()
	})
	return b
}

func (b *browser) note(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = append(b.errs, s)
}

// pageErrors says what the page complained of, for a failure message.
func (b *browser) pageErrors() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errs) == 0 {
		return "(the page logged no errors)"
	}
	return "page errors:\n\t" + strings.Join(b.errs, "\n\t")
}

// do runs actions in the tab and fails the test with what went wrong.
func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, b.pageErrors())
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v\n%s", expr, err, b.pageErrors())
	}
	return v
}

// waitFor polls a JavaScript expression until it is truthy, and fails the
// test after 20 s.
func (b *browser) waitFor(t *testing.T, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("waiting for %s (%s): %v\n%s", what, expr, err, b.pageErrors())
	}
}

// readyExpr is truthy once a dashboard page has rendered its data, or has
// given up with an error (the contract's body data-ready and data-error).
const readyExpr = `document.body && (document.body.dataset.ready === "1" || document.body.dataset.error !== undefined)`

// navigate loads a dashboard page, which must be served.
func (b *browser) navigate(t *testing.T, url string) {
	t.Helper()
	resp, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("navigate to %s: %v\n%s", url, err, b.pageErrors())
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("%s answers %d %s, want 200 with the dashboard's page", url, resp.Status, resp.StatusText)
	}
}

// open navigates to a dashboard page and waits until it has rendered its
// data without an error.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	b.navigate(t, url)
	b.waitFor(t, url+" to render its data", readyExpr)
	if msg := eval[string](t, b, `document.body.dataset.error || ""`); msg != "" {
		t.Fatalf("%s failed to load: data-error=%q\n%s", url, msg, b.pageErrors())
	}
}

// artifactsDir is where test artefacts go: $CUE_ARTIFACTS, else artifacts/
// at the root of the module (git ignores it).
func artifactsDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("CUE_ARTIFACTS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(mod, []byte("module github.com/cuedeck/cuedeck\n")) {
			return filepath.Join(dir, "artifacts")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no module root above the test's directory; set CUE_ARTIFACTS to where screenshots should go")
		}
		dir = parent
	}
}

// screenshot saves the whole page as artifacts/screenshots/<name>.png and
// returns its path, after checking that a PNG was written.
func (b *browser) screenshot(t *testing.T, name string) string {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join(artifactsDir(t), "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot %s: not a PNG on disk (%v)", path, err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, st.Size())
	return path
}

// node is a laptop daemon running in-process on a temp workspace.
type node struct {
	root string
	info workspace.DaemonInfo
	// base is the URL of its HTTP listener, where /mcp and /dashboard/ are.
	base string
}

// startDaemon runs a laptop daemon on root with no embedding model and
// the MCP HTTP endpoint on a free loopback port, until the test ends.
func startDaemon(t *testing.T, root string, tweak func(*workspace.Config)) *node {
	t.Helper()
	ws := &workspace.Workspace{Root: root}
	cfg, err := ws.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace.Name = "app"
	cfg.Embed.Model = "none"
	cfg.MCP.HTTPAddr = "127.0.0.1:0"
	cfg.Ingest.Debounce.Duration = 50 * time.Millisecond
	if tweak != nil {
		tweak(cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan workspace.DaemonInfo, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Workspace: ws, Config: cfg, Ready: func(i workspace.DaemonInfo) { ready <- i }})
	}()
	var info workspace.DaemonInfo
	select {
	case info = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("daemon failed to start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("daemon not ready within 60s")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon stopped with error: %v", err)
		}
	})
	base, ok := strings.CutSuffix(info.MCPURL, telemetry.PathMCP)
	if !ok {
		t.Fatalf("MCP URL %q does not end in %s", info.MCPURL, telemetry.PathMCP)
	}
	return &node{root: root, info: info, base: base}
}

// write puts a file in the workspace.
func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bearer adds a token to every request of the MCP client.
type bearer struct{ secret string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.secret != "" {
		r.Header.Set("Authorization", "Bearer "+b.secret)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpClient is an MCP session with the daemon over its HTTP endpoint, as
// an agent would hold one.
type mcpClient struct{ cs *mcp.ClientSession }

func connectMCP(t *testing.T, n *node, token string) *mcpClient {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "browser-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: n.info.MCPURL, HTTPClient: &http.Client{Transport: bearer{secret: token}},
	}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", n.info.MCPURL, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpClient{cs: cs}
}

// call runs a tool and decodes its JSON result into out.
func (c *mcpClient) call(tool string, args any, out any) error {
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return fmt.Errorf("%s: %s", tool, text.String())
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal([]byte(text.String()), out); err != nil {
		return fmt.Errorf("%s result %s: %w", tool, text.String(), err)
	}
	return nil
}

// eventually polls cond until it holds, and fails the test after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return
		}
		if err != nil {
			lastErr = err
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last error: %v)", what, timeout, lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
