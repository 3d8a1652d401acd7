package role_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
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

// A three-node cluster refuses R4 streams (error 10005, no suitable
// peers); a role that asks for four replicas waits for a fourth node to
// join rather than exiting, as a role started while a node restarts
// waits for it.
func TestConnectWaitsForEnoughPeersToPlaceReplicas(t *testing.T) {
	ports := []int{freePort(t), freePort(t), freePort(t), freePort(t)}
	nodes := startFormedCluster(t, ports[:3])
	rf := flagsFor(t, nodes[0].ClientURL(), "--replicas", "4")
	logged := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(logged, nil))
	done := make(chan error, 1)
	go func() {
		conn, err := rf.Connect(context.Background(), t.Name(), log)
		if err == nil {
			conn.Close()
		}
		done <- err
	}()
	bustest.Eventually(t, 30*time.Second, "the role told of the refused placement", func() bool {
		if strings.Contains(logged.String(), "cannot place the replicated streams yet") {
			return true
		}
		select {
		case err := <-done:
			t.Fatalf("the role stopped with three nodes for four replicas: %v\n%s", err, logged.String())
		default:
		}
		return false
	})
	startNode(t, "n4", ports[3], ports[:3])
	if err := <-done; err != nil {
		t.Fatalf("the role gave up although a fourth node joined: %v", err)
	}
}

// A role that can never place its streams stops at its deadline with an
// error that says what to do.
func TestConnectNamesTheRemedyWhenReplicasCannotBePlaced(t *testing.T) {
	nodes := startFormedCluster(t, []int{freePort(t), freePort(t), freePort(t)})
	rf := flagsFor(t, nodes[0].ClientURL(), "--replicas", "4")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := rf.Connect(ctx, t.Name(), slog.New(slog.DiscardHandler))
	if err == nil {
		conn.Close()
		t.Fatal("four replicas were placed on three nodes")
	}
	if !strings.Contains(err.Error(), "10005") || !strings.Contains(err.Error(), "start the others, or lower --replicas") {
		t.Fatalf("the error does not say what to do: %v", err)
	}
}

// startFormedCluster starts a node on each of ports and waits until the
// meta leader sees them all.
func startFormedCluster(t *testing.T, ports []int) []*server.Server {
	t.Helper()
	var nodes []*server.Server
	for i := range ports {
		nodes = append(nodes, startNode(t, fmt.Sprintf("n%d", i+1), ports[i], ports))
	}
	bustest.Eventually(t, 30*time.Second, "a meta leader that sees every peer", func() bool {
		for _, n := range nodes {
			if n.JetStreamIsLeader() {
				return len(n.JetStreamClusterPeers()) == len(nodes)
			}
		}
		return false
	})
	return nodes
}

func flagsFor(t *testing.T, args ...string) *role.Flags {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	rf := role.Register(fs)
	if err := fs.Parse(append([]string{"--nats"}, args...)); err != nil {
		t.Fatal(err)
	}
	return rf
}
