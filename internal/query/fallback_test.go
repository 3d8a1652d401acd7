package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// answering is a caller that says who answered; read_doc fails as a tool.
func answering(name string) tools.Caller {
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		if tool == tools.ReadDoc {
			return nil, &tools.Error{Code: tools.CodeFileNotFound, Message: "File Not Found", Data: map[string]any{"by": name}}
		}
		return json.Marshal(map[string]string{"from": name})
	})
}

func from(t *testing.T, c tools.Caller) string {
	t.Helper()
	out, err := c.Call(context.Background(), tools.ReadContext, json.RawMessage(`{"query":"x"}`))
	if err != nil {
		return "error: " + err.Error()
	}
	var r struct{ From string }
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r.From
}

// startHub runs a team server whose leaf listener admits the laptop user
// with deployments/nats/accounts.conf's permissions: it may publish
// cue.query.> (and ingest subjects) into the team, and receives only
// replies. Team clients connect without credentials.
func startHub(t *testing.T) (*server.Server, *server.Options) {
	t.Helper()
	opts := bustest.HubOptions()
	opts.Users = []*server.User{
		{Username: "team", Password: "team"},
		{Username: "laptop", Password: "laptop", Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{
				"cue.ingest.file.>", "cue.ingest.transcript.>", "$O.cue_blobs.>", "cue.query.>", "$SRV.>", "_INBOX.>"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
		}},
	}
	opts.NoAuthUser = "team"
	return bustest.StartHub(t, opts), opts
}

// A laptop's `cue mcp` asks the team's edges through the leaf node, and
// its own daemon (on a prefix the leaf does not forward) when no team
// edge answers: when the team's edges stop, and when the team is out of
// reach. It logs each change of who answers.
func TestFallbackAsksTheTeamFirstThenTheLaptop(t *testing.T) {
	hub, hubOpts := startHub(t)
	team := &env{t: t, url: hub.ClientURL()}
	stopEdge := team.serve(answering("team"), query.Options{Prefix: "cue.query"})
	// A team service on the laptop's own prefix: the leaf must not carry
	// the laptop's local calls to it.
	team.serve(answering("team-on-local-prefix"), query.Options{Prefix: "cue.local"})

	laptop, err := bus.StartEmbedded(bus.EmbeddedConfig{
		StoreDir:    t.TempDir(),
		LeafRemotes: []string{fmt.Sprintf("nats-leaf://laptop:laptop@127.0.0.1:%d", hubOpts.LeafNode.Port)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(laptop.Shutdown)
	here := &env{t: t, url: laptop.ClientURL()}
	here.serve(answering("local"), query.Options{Prefix: "cue.local"})

	logs := &logtest.Buffer{}
	nc := here.conn()
	teamClient, _ := query.NewClient(nc, query.ClientOptions{Prefix: "cue.query", Timeout: 2 * time.Second})
	localClient, _ := query.NewClient(nc, query.ClientOptions{Prefix: "cue.local", Timeout: 2 * time.Second})
	f := query.NewFallback(
		query.Route{Name: "team", Prefix: "cue.query", Caller: teamClient},
		query.Route{Name: "local", Prefix: "cue.local", Caller: localClient},
		slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))

	// Until the leaf is up the laptop answers; then the team does.
	bustest.Eventually(t, 20*time.Second, "the team answers through the leaf", func() bool { return from(t, f) == "team" })
	for range 20 {
		if got := from(t, f); got != "team" {
			t.Fatalf("answered by %q with the team's edge up", got)
		}
		if got := from(t, localClient); got != "local" {
			t.Fatalf("the laptop's own prefix answered by %q", got)
		}
	}
	// A tool error from the team is the answer: not asked again locally.
	_, err = f.Call(context.Background(), tools.ReadDoc, json.RawMessage(`{"path":"x.md"}`))
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeFileNotFound || te.Data["by"] != "team" {
		t.Fatalf("read_doc error: %v", err)
	}
	if f.Answering() != "team" {
		t.Fatalf("answering %q", f.Answering())
	}

	// No team edge serves: no responders through the leaf, the laptop answers.
	if err := stopEdge(); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 20*time.Second, "the laptop answers without team edges", func() bool { return from(t, f) == "local" })
	if !strings.Contains(logs.String(), "answering from local") || !strings.Contains(logs.String(), "unanswered_prefix=cue.query") {
		t.Fatalf("the switch to the laptop is not logged:\n%s", logs)
	}
	team.serve(answering("team"), query.Options{Prefix: "cue.query"})
	bustest.Eventually(t, 20*time.Second, "the team answers again", func() bool { return from(t, f) == "team" })

	// Offline: the team's server is gone, then back.
	hub.Shutdown()
	bustest.Eventually(t, 20*time.Second, "the laptop answers offline", func() bool { return from(t, f) == "local" })
	bustest.StartHub(t, hubOpts)
	bustest.Eventually(t, 30*time.Second, "the team answers once back", func() bool { return from(t, f) == "team" })
	if n := strings.Count(logs.String(), "answering from team"); n != 3 {
		t.Fatalf("want 3 switches to the team logged, got %d:\n%s", n, logs)
	}
}

// With neither route serving, the error is the laptop's, naming `cue up`.
func TestFallbackWithNoEdgeAnywhere(t *testing.T) {
	e := newEnv(t)
	nc := e.conn()
	teamClient, _ := query.NewClient(nc, query.ClientOptions{Prefix: "cue.query", Timeout: time.Second})
	localClient, _ := query.NewClient(nc, query.ClientOptions{Prefix: "cue.local", Timeout: time.Second})
	f := query.NewFallback(query.Route{Name: "team", Caller: teamClient}, query.Route{Name: "local", Caller: localClient}, nil)
	_, err := f.Call(context.Background(), tools.ReadContext, nil)
	if !errors.Is(err, query.ErrNoEdge) || !strings.Contains(err.Error(), "No edge") {
		t.Fatalf("err %v", err)
	}
	var te *tools.Error
	if !errors.As(err, &te) || te.Data["subject"] != "cue.local.read_context" {
		t.Fatalf("the error should be the laptop's: %v", err)
	}
	if f.Answering() != "" {
		t.Fatalf("answering %q", f.Answering())
	}
}
