package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// tag is the image tag `make images` built.
func tag() string {
	if t := os.Getenv("IMAGE_TAG"); t != "" {
		return t
	}
	return "dev"
}

func TestMain(m *testing.M) {
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") != "true" {
		fmt.Fprintln(os.Stderr, "e2e: set TESTCONTAINERS_RYUK_DISABLED=true (the reaper image cannot be pulled here); `make e2e` does")
		os.Exit(2)
	}
	// As `make e2e` does: with a local engine, published ports answer on
	// loopback, and testcontainers would otherwise dial the default
	// gateway's address (in a sandbox, one nothing listens on: every
	// cluster test then fails at once with "no servers available").
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		if h := os.Getenv("DOCKER_HOST"); h == "" || strings.HasPrefix(h, "unix://") {
			os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
		}
	}
	os.Exit(m.Run())
}

func run(ctx context.Context, t *testing.T, image string, nw *testcontainers.DockerNetwork, alias string, opts ...testcontainers.ContainerCustomizer) *testcontainers.DockerContainer {
	t.Helper()
	opts = append(opts, network.WithNetwork([]string{alias}, nw))
	c, err := testcontainers.Run(ctx, image, opts...)
	if err != nil {
		t.Fatalf("start %s: %v", image, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if logs, err := c.Logs(context.Background()); err == nil {
				b := new(strings.Builder)
				buf := make([]byte, 64<<10)
				n, _ := logs.Read(buf)
				b.Write(buf[:n])
				t.Logf("%s logs:\n%s", alias, b)
			}
		}
		testcontainers.TerminateContainer(c)
	})
	return c
}

// TestRolesOverContainerNetwork runs the scratch NATS image and the indexer
// and mcp-edge images on a private network: an event published from the
// host is indexed in one container and answered by another.
func TestRolesOverContainerNetwork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nw, err := network.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Remove(context.Background()) })

	natsC := run(ctx, t, "cuedeck/nats:"+tag(), nw, "nats",
		testcontainers.WithExposedPorts("4222/tcp"),
		testcontainers.WithWaitStrategy(wait.ForLog("Server is ready").WithStartupTimeout(60*time.Second)))
	endpoint, err := natsC.PortEndpoint(ctx, "4222/tcp", "nats")
	if err != nil {
		t.Fatal(err)
	}
	run(ctx, t, "cuedeck/indexer:"+tag(), nw, "indexer",
		testcontainers.WithCmd("--nats", "nats://nats:4222"),
		testcontainers.WithWaitStrategy(wait.ForLog("indexer running").WithStartupTimeout(60*time.Second)))
	run(ctx, t, "cuedeck/mcp-edge:"+tag(), nw, "edge",
		testcontainers.WithCmd("--nats", "nats://nats:4222", "--state-dir", "/data/edge", "--http", "",
			// The test polls faster than seed 002 lets an agent call.
			"--rate-limits", "off"),
		testcontainers.WithWaitStrategy(wait.ForLog("level=INFO").WithStartupTimeout(60*time.Second)))

	t.Logf("nats endpoint %s", endpoint)
	nc, err := nats.Connect(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	body := "# Container Guide\n\nQuasar mooring procedures.\n"
	ev := events.FileUpserted{Repo: "app", Path: "docs/guide.md", SHA256: events.SHA256Hex([]byte(body)),
		Size: int64(len(body)), ModTime: time.Unix(1700000000, 0), Content: body}
	data, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	msg := nats.NewMsg(events.FileSubject("app"))
	msg.Data = data
	msg.Header.Set(jetstream.MsgIDHeader, events.FileUpsertedMsgID(ev.Repo, ev.Path, ev.SHA256, ev.ModTime))
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatalf("publish to the provisioned CUE_INGEST: %v", err)
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		reply, err := nc.Request("cue.query.read_context", []byte(`{"query":"quasar mooring"}`), 5*time.Second)
		if err == nil && strings.Contains(string(reply.Data), "docs/guide.md") {
			var r struct {
				Result []struct {
					Path string `json:"path"`
					Hash string `json:"hash"`
				} `json:"result"`
			}
			if err := json.Unmarshal(reply.Data, &r); err != nil || len(r.Result) == 0 || r.Result[0].Hash != ev.SHA256 {
				t.Fatalf("read_context reply: %s", reply.Data)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("edge container never answered with the indexed doc (last: %v %s)", err, replyText(reply))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func replyText(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}
