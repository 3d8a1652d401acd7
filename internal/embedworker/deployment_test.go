package embedworker

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/embed/builtin"
)

// TestTheDeploymentsIndexerUserMayEmbed runs the indexer and its embed
// worker as the deployment's indexer user (deployments/nats/accounts.conf,
// the file the cluster runs with), so a subject the worker writes and the
// file does not allow fails here rather than on a team's cluster, where
// the worker would only log that it cannot write.
func TestTheDeploymentsIndexerUserMayEmbed(t *testing.T) {
	for _, role := range []string{"SYS", "ADMIN", "INGEST", "INDEXER", "EXTRACTOR", "EDGE", "LAPTOP"} {
		t.Setenv("CUE_NATS_PASSWORD_"+role, "test-"+role)
	}
	opts, err := server.ProcessConfigFile(filepath.Join("..", "..", "deployments", "nats", "accounts.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	opts.JetStream, opts.StoreDir = true, t.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	violations := make(chan string, 16)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := bus.Connect(ctx, srv.ClientURL(), bus.ConnectOptions{Name: t.Name(), User: "indexer", Password: os.Getenv("CUE_NATS_PASSWORD_INDEXER")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	conn.NC.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { violations <- err.Error() })
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
	if c := embedGuide(t, conn, builtin.New()); c.Chunks == 0 {
		t.Fatalf("the indexer user recorded no embedding cost: %+v", c)
	}
	select {
	case v := <-violations:
		t.Fatalf("the indexer user was refused: %s", v)
	default:
	}
}
