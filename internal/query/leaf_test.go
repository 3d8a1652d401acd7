package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/tools"
)

// A laptop's embedded server joined to a team's NATS as a leaf node: a
// `cue mcp` on the laptop asks the team's edges, which share the calls in
// their queue group, and a team that requires tokens sees the laptop's.
func TestCallsReachTeamEdgesThroughALeafNode(t *testing.T) {
	hubOpts := bustest.HubOptions()
	hub := bustest.StartHub(t, hubOpts)
	team := &env{t: t, url: hub.ClientURL()}

	tokens, err := access.NewTokens([]access.TokenConfig{{Name: "laptop", Token: "laptop-0123456789abcdefghij", Repos: []string{"app"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Two team edges, each saying who answered and for whom.
	for _, name := range []string{"edge-1", "edge-2"} {
		team.serve(tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
			id := access.FromContext(ctx)
			return json.Marshal(map[string]any{"edge": name, "client": id.Client, "repos": id.Repos})
		}), query.Options{Tokens: tokens})
	}

	laptop, err := bus.StartEmbedded(bus.EmbeddedConfig{
		StoreDir:    t.TempDir(),
		LeafRemotes: []string{fmt.Sprintf("nats-leaf://127.0.0.1:%d", hubOpts.LeafNode.Port)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(laptop.Shutdown)
	local := (&env{t: t, url: laptop.ClientURL()}).conn()

	anonymous, _ := query.NewClient(local, query.ClientOptions{Timeout: 2 * time.Second})
	var te *tools.Error
	bustest.Eventually(t, 20*time.Second, "the team's edges reachable from the laptop", func() bool {
		_, err := anonymous.Call(context.Background(), tools.ReadContext, nil)
		return errors.As(err, &te) && te.Code == tools.CodeUnauthorized
	})

	c, _ := query.NewClient(local, query.ClientOptions{Token: "laptop-0123456789abcdefghij"})
	ctx := access.WithIdentity(context.Background(), access.Identity{Client: "cue-mcp:42"})
	answered := map[string]int{}
	for range 40 {
		out, err := c.Call(ctx, tools.ReadContext, json.RawMessage(`{"query":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Edge, Client string
			Repos        []string
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if r.Client != "token:laptop/cue-mcp:42" || len(r.Repos) != 1 || r.Repos[0] != "app" {
			t.Fatalf("identity at the edge: %s", out)
		}
		answered[r.Edge]++
	}
	// The queue group spreads calls at random: both edges answer some of
	// 40 (the chance one answers none is 2·2⁻⁴⁰).
	if answered["edge-1"] == 0 || answered["edge-2"] == 0 {
		t.Errorf("calls per edge: %v", answered)
	}
}
