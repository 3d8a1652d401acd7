package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// teamServer runs a team NATS server with a leaf listener; the laptop
// joins it without credentials, as in internal/query's leaf test.
func teamServer(t *testing.T) (*server.Server, int) {
	t.Helper()
	opts := bustest.HubOptions()
	hub := bustest.StartHub(t, opts)
	return hub, opts.LeafNode.Port
}

// serveTeamEdge answers read_doc on the team's server, saying so.
func serveTeamEdge(t *testing.T, url, prefix string) (stop func()) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	edge := tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		var a tools.ReadDocArgs
		json.Unmarshal(args, &a)
		return json.Marshal(tools.ReadDocResult{Path: a.Path, Content: "answered by the team"})
	})
	go func() {
		defer close(done)
		query.Serve(ctx, nc, edge, query.Options{Prefix: prefix, Ready: func() { close(ready) }})
	}()
	<-ready
	stop = sync.OnceFunc(func() {
		cancel()
		<-done
		nc.Close()
	})
	t.Cleanup(stop)
	return stop
}

// A laptop's daemon joined to a team as a leaf node leaves the team's
// query prefix to the team's edges and serves its own on
// LocalQueryPrefix; the caller `cue mcp` builds from the daemon file asks
// the team's edges first and the daemon when none answers.
func TestLeafDaemonAsksTheTeamFirst(t *testing.T) {
	hub, leafPort := teamServer(t)
	teamStop := serveTeamEdge(t, hub.ClientURL(), "cue.team")

	root := t.TempDir()
	write(t, root, "docs/laptop.md", "# Laptop\n\nOnly on this laptop.\n")
	n := startNode(t, root, func(c *workspace.Config) {
		c.NATS.LeafRemotes = []string{fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)}
		c.NATS.TeamQueryPrefix = "cue.team"
		c.Embed.Model = "none"
		c.Transcripts.Disabled = true
	})
	if n.info.QueryPrefix != LocalQueryPrefix || n.info.TeamQueryPrefix != "cue.team" {
		t.Fatalf("daemon info prefixes: query %q, team %q", n.info.QueryPrefix, n.info.TeamQueryPrefix)
	}
	if onDisk, err := n.ws.ReadDaemonInfo(); err != nil || onDisk.TeamQueryPrefix != "cue.team" {
		t.Fatalf("daemon file: %+v %v", onDisk, err)
	}
	// The daemon answers on its own prefix (startNode's caller).
	bustest.Eventually(t, 30*time.Second, "the daemon serves docs/laptop.md locally", func() bool {
		doc, err := n.readDoc("docs/laptop.md", "")
		return err == nil && strings.Contains(doc.Content, "Only on this laptop")
	})

	logs := &logtest.Buffer{}
	caller, err := Caller(n.conn.NC, n.info, "", slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	read := func() string {
		out, err := caller.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{"path":"docs/laptop.md"}`))
		if err != nil {
			return err.Error()
		}
		var doc tools.ReadDocResult
		json.Unmarshal(out, &doc)
		return doc.Content
	}
	bustest.Eventually(t, 20*time.Second, "the team's edge answers through the leaf", func() bool {
		return read() == "answered by the team"
	})
	teamStop()
	bustest.Eventually(t, 20*time.Second, "the daemon answers once no team edge serves", func() bool {
		return strings.Contains(read(), "Only on this laptop")
	})
	if !strings.Contains(logs.String(), "answering from local") {
		t.Fatalf("the fallback is not logged:\n%s", logs)
	}
}

// A team prefix under the daemon's own is refused.
func TestLeafDaemonRefusesTheLocalPrefixAsTeamPrefix(t *testing.T) {
	_, leafPort := teamServer(t)
	ws := &workspace.Workspace{Root: t.TempDir()}
	cfg, err := ws.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATS.LeafRemotes = []string{fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort)}
	cfg.NATS.TeamQueryPrefix = LocalQueryPrefix + ".x"
	err = Run(context.Background(), Options{Workspace: ws, Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "team_query_prefix") {
		t.Fatalf("Run: %v", err)
	}
}
