// Package bustest starts a real embedded nats-server with JetStream on a
// test's temp dir and provisions CueDeck's topology, for tests of any role.
package bustest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Start returns a connection to a fresh provisioned JetStream server; both
// are shut down when the test ends.
func Start(t testing.TB, s bus.Settings) (*bus.Conn, *bus.Embedded) {
	t.Helper()
	return start(t, s, false)
}

// StartDurable is Start with every write made durable before it is
// acknowledged onward, as `cue up` runs by default: the server syncs
// each write, or the connection syncs the store (Conn.Durable) where the
// system can. For benchmarks whose figure includes a durable write;
// boards and memory stores they build take conn.Durable as the daemon's
// do.
func StartDurable(t testing.TB, s bus.Settings) (*bus.Conn, *bus.Embedded) {
	t.Helper()
	return start(t, s, true)
}

// StartIn is Start on the store in dir: a test that stops the server
// (conn.Close, then Shutdown; both may be called again at the end),
// damages or keeps dir, and starts another on it.
func StartIn(t testing.TB, dir string, s bus.Settings) (*bus.Conn, *bus.Embedded) {
	t.Helper()
	return startIn(t, dir, s, false)
}

func start(t testing.TB, s bus.Settings, syncAlways bool) (*bus.Conn, *bus.Embedded) {
	t.Helper()
	return startIn(t, t.TempDir(), s, syncAlways)
}

func startIn(t testing.TB, dir string, s bus.Settings, syncAlways bool) (*bus.Conn, *bus.Embedded) {
	t.Helper()
	srv, err := bus.StartEmbedded(bus.EmbeddedConfig{StoreDir: dir, ServerName: "test", SyncAlways: syncAlways})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, srv.ClientURL(), bus.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	conn.SetDurable(srv.Durable())
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(s), nil); err != nil {
		t.Fatal(err)
	}
	return conn, srv
}

// Eventually polls cond until it holds or the deadline passes; tests wait
// for effects with it instead of sleeping.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(tick)
		if tick < 50*time.Millisecond {
			tick *= 2
		}
	}
}

// Run runs a role's Run(ctx) in the background until the test ends, then
// cancels it, waits for it, and fails the test if it returned an error
// other than its cancellation.
func Run(t testing.TB, name string, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", name, err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// HubOptions are those of a team's server for laptops to join: loopback,
// free client and leaf ports, no JetStream. Tests add users.
func HubOptions() *server.Options {
	return &server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		LeafNode: server.LeafNodeOpts{Host: "127.0.0.1", Port: server.RANDOM_PORT},
	}
}

// StartHub starts a server with opts (HubOptions, or the same again once
// their ports are known, to restart it) and shuts it down when the test
// ends. The leaf port is opts.LeafNode.Port once it returns.
func StartHub(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	hub, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go hub.Start()
	if !hub.ReadyForConnections(10 * time.Second) {
		t.Fatal("team server did not start")
	}
	t.Cleanup(hub.Shutdown)
	return hub
}

// StartCluster starts a JetStream cluster of n servers on loopback, each
// storing under its own temp dir and syncing every write, provisions the
// topology with s (set s.Replicas to spread streams over the nodes) and
// returns a connection to the first server. The servers are shut down
// when the test ends.
func StartCluster(t testing.TB, n int, s bus.Settings) (*bus.Conn, []*server.Server) {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ports[i] = freePort(t)
	}
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	servers := make([]*server.Server, n)
	for i := range servers {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: server.RANDOM_PORT,
			NoSigs: true, NoLog: os.Getenv("CUE_TEST_NATS_LOG") == "", JetStream: true, StoreDir: t.TempDir(), SyncAlways: true,
			Cluster: server.ClusterOpts{Name: "test", Host: "127.0.0.1", Port: ports[i]},
			Routes:  routes,
		}
		srv, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		srv.ConfigureLogger() // CUE_TEST_NATS_LOG=1 shows the servers' logs
		go srv.Start()
		t.Cleanup(srv.Shutdown)
		servers[i] = srv
	}
	for _, srv := range servers {
		if !srv.ReadyForConnections(20 * time.Second) {
			t.Fatalf("server %s did not start", srv.Name())
		}
	}
	// JetStream requests made before the meta leader is elected go
	// unanswered until they time out, and a replicated stream created
	// before the leader has heard from every peer is refused ("no
	// suitable peers for placement, peer offline").
	Eventually(t, 30*time.Second, "a JetStream meta leader that sees every peer", func() bool {
		for _, srv := range servers {
			if srv.JetStreamIsLeader() {
				return len(srv.JetStreamClusterPeers()) == n
			}
		}
		return false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, servers[0].ClientURL(), bus.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	// The leader marks a peer online only once it has heard from it since
	// its election, a little after it lists it: until then a replicated
	// asset is refused the same way, and provisioning again succeeds. A
	// request made as the meta leadership moves (a loaded machine misses
	// heartbeats) goes unanswered until its deadline: each attempt has
	// its own, and Provision, idempotent, is asked again.
	var err2 error
	Eventually(t, 90*time.Second, "the topology provisioned on every peer", func() bool {
		actx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		err2 = bus.Provision(actx, conn.JS, bus.DeclaredTopology(s), nil)
		return !bus.PlacementRefused(err2) && !errors.Is(err2, context.DeadlineExceeded)
	})
	if err2 != nil {
		t.Fatalf("provisioning the cluster: %v", err2)
	}
	return conn, servers
}

// freePort is a loopback TCP port nothing listens on (cluster routes
// need each node's port before any node starts).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Events decodes every message stream holds, in order, failing the test
// on a message that does not decode.
func Events(t testing.TB, js jetstream.JetStream, stream string) []events.Event {
	t.Helper()
	ctx := context.Background()
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Event
	for n := info.NumPending; n > 0; {
		batch, err := cons.Fetch(int(min(n, 1000)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			ev, err := events.Decode(msg.Data())
			if err != nil {
				t.Fatalf("%s: a message does not decode: %v", stream, err)
			}
			out = append(out, ev)
		}
		if got == 0 {
			t.Fatalf("%s stopped with %d messages unread", stream, n)
		}
		n -= uint64(got)
	}
	return out
}

// Backup reads every message of stream as a backup holds it: subject,
// data and headers, without the writers' compare-and-set expectations,
// which held against this stream and not the one it is restored into.
func Backup(t testing.TB, js jetstream.JetStream, stream string) []*nats.Msg {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*nats.Msg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		raw, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg(raw.Subject)
		m.Data = raw.Data
		for k, vs := range raw.Header {
			if !strings.HasPrefix(k, "Nats-Expected-") {
				m.Header[k] = vs
			}
		}
		out = append(out, m)
	}
	return out
}

// Restore deletes stream, provisions the topology again (an empty stream
// of the same name, another incarnation) and publishes msgs into it.
func Restore(t testing.TB, conn *bus.Conn, stream string, msgs []*nats.Msg) {
	t.Helper()
	RestoreSpaced(t, conn, stream, msgs, 0)
}

// RestoreSpaced is Restore with gap between the messages: a refill by
// hand, which readers see half done.
func RestoreSpaced(t testing.TB, conn *bus.Conn, stream string, msgs []*nats.Msg, gap time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := conn.JS.DeleteStream(ctx, stream); err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if i > 0 && gap > 0 {
			time.Sleep(gap)
		}
		if _, err := conn.JS.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
}
