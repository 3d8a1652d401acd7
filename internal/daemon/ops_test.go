package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The daemon serves the operations endpoints beside /mcp, and a call over
// the NATS query service shows in /metrics.
func TestOperationsEndpointsBesideMCP(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.md", "# Alpha quokka\n")
	n := startNode(t, root, func(c *workspace.Config) { c.Embed.Model = "none" })
	base := strings.TrimSuffix(n.info.MCPURL, telemetry.PathMCP)
	if base == n.info.MCPURL {
		t.Fatalf("MCP URL %s does not end in %s", n.info.MCPURL, telemetry.PathMCP)
	}
	if code, body := httpGet(t, base+telemetry.PathHealth); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	// Announced means replayed, so ready at once.
	code, body := httpGet(t, base+telemetry.PathReady)
	var r telemetry.Report
	if err := json.Unmarshal([]byte(body), &r); err != nil || code != 200 || !r.Ready {
		t.Fatalf("/readyz = %d %s (%v)", code, body, err)
	}
	feeds := map[string]bool{}
	for _, f := range r.Feeds {
		feeds[f.Feed] = true
	}
	for _, want := range []string{events.DocsBucket, events.MemoriesBucket, events.TasksStream} {
		if !feeds[want] {
			t.Errorf("/readyz reports no feed %s: %s", want, body)
		}
	}
	bustest.Eventually(t, 30*time.Second, "indexed", func() bool { return n.finds(t, "quokka", "a.md") })
	if _, err := n.readDoc("nowhere.md", ""); err == nil {
		t.Fatal("read_doc of a missing file succeeded")
	}
	code, body = httpGet(t, base+telemetry.PathMetrics)
	if code != 200 {
		t.Fatalf("/metrics = %d", code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, m := range fams["cue_tool_calls_total"].GetMetric() {
		key := ""
		for _, l := range m.GetLabel() {
			key += l.GetName() + "=" + l.GetValue() + " "
		}
		counts[strings.TrimSpace(key)] = m.GetCounter().GetValue()
	}
	if counts["outcome=ok tool="+tools.ReadContext] < 1 || counts["outcome=1001 tool="+tools.ReadDoc] != 1 {
		t.Fatalf("cue_tool_calls_total = %v; want read_context ok and one read_doc 1001", counts)
	}
	// MCP still answers at /mcp (cmd/cue's tests drive it with real clients).
	resp, err := http.Post(n.info.MCPURL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		t.Fatal("/mcp is not mounted")
	}
}
