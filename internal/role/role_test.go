package role_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/role"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNode starts one node of a three-node JetStream cluster whose route
// ports are routePorts.
func startNode(t *testing.T, name string, routePort int, routePorts []int) *server.Server {
	t.Helper()
	var routes []*url.URL
	for _, p := range routePorts {
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: name, Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir(), JetStreamMaxMemory: 64 << 20,
		Cluster: server.ClusterOpts{Name: "test", Host: "127.0.0.1", Port: routePort},
		Routes:  routes,
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatalf("%s did not start", name)
	}
	return srv
}

// A role started before its cluster has a JetStream leader (the first
// `docker compose up`: roles and NATS nodes start together) provisions the
// R3 topology once the cluster forms, rather than failing.
func TestConnectWaitsForTheClusterToForm(t *testing.T) {
	ports := []int{freePort(t), freePort(t), freePort(t)}
	first := startNode(t, "n1", ports[0], ports)

	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	rf := role.Register(fs)
	if err := fs.Parse([]string{"--nats", first.ClientURL(), "--replicas", "3"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		conn, err := rf.Connect(context.Background(), t.Name(), slog.New(slog.DiscardHandler))
		if err == nil {
			conn.Close()
		}
		done <- err
	}()
	bustest.Eventually(t, 10*time.Second, "the role has connected to the lone node", func() bool { return first.NumClients() > 0 })
	startNode(t, "n2", ports[1], ports)
	startNode(t, "n3", ports[2], ports)
	if err := <-done; err != nil {
		t.Fatalf("the role gave up although the cluster formed: %v", err)
	}
}
