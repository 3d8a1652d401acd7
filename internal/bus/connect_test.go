package bus_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
)

// A slow consumer is reported through the role's logger, not printed by
// nats.go.
func TestAsyncErrorsGoToTheLogger(t *testing.T) {
	_, srv := bustest.Start(t, bus.Settings{})
	var logs logtest.Buffer
	conn, err := bus.Connect(context.Background(), srv.ClientURL(), bus.ConnectOptions{Name: t.Name(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	release := make(chan struct{})
	sub, err := conn.NC.Subscribe("slow.test", func(*nats.Msg) { <-release })
	if err != nil {
		t.Fatal(err)
	}
	defer close(release)
	if err := sub.SetPendingLimits(1, -1); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := conn.NC.Publish("slow.test", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 10*time.Second, "the slow consumer is logged", func() bool {
		out := logs.String()
		return strings.Contains(out, "nats asynchronous error") && strings.Contains(out, "subject=slow.test")
	})
}

// A server with configured users (as deployments/nats/*.conf has) admits a
// role by its user and password, and refuses it without them; the secret
// stays out of the error a refused role reports.
func TestConnectAsConfiguredUser(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Users: []*server.User{{Username: "indexer", Password: "s3cret-indexer-password"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, err := bus.Connect(ctx, srv.ClientURL(), bus.ConnectOptions{Name: t.Name()}); err == nil {
		t.Fatal("connected without a user to a server that requires one")
	}
	_, err = bus.Connect(ctx, srv.ClientURL(), bus.ConnectOptions{Name: t.Name(), User: "indexer", Password: "wrong-password"})
	if err == nil {
		t.Fatal("connected with a wrong password")
	}
	if strings.Contains(err.Error(), "wrong-password") {
		t.Fatalf("the error shows the password: %v", err)
	}
	conn, err := bus.Connect(ctx, srv.ClientURL(), bus.ConnectOptions{Name: t.Name(), User: "indexer", Password: "s3cret-indexer-password"})
	if err != nil {
		t.Fatalf("the configured user was refused: %v", err)
	}
	defer conn.Close()
	if err := conn.NC.Publish("cue.test", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := conn.NC.Flush(); err != nil {
		t.Fatal(err)
	}
}

// silentServer accepts connections and never answers, as a server behind a
// network that drops its packets looks to a client's handshake. Each
// accepted connection is sent on the returned channel.
func silentServer(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 100)
	var conns []net.Conn
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), ch
}

func startServer(t *testing.T, port int) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	return srv
}

// A role connects with a long deadline (a minute, for a cluster still
// forming), but each attempt of its connection is bounded by
// AttemptTimeout: when its server comes back while the client is in an
// attempt to one that cannot answer (a node still cut off by a partition),
// it reconnects within about that, not within the connect's deadline.
func TestReconnectAttemptsAreBounded(t *testing.T) {
	silent, accepted := silentServer(t)
	srv := startServer(t, -1)
	addr := srv.Addr().String()
	port := srv.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := bus.Connect(ctx, srv.ClientURL()+",nats://"+silent, bus.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for len(accepted) > 0 {
		<-accepted
	}

	srv.Shutdown()
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("the client did not try the other server while its own was down")
	}
	// The client is now in its attempt to the silent server.
	back := time.Now()
	startServer(t, port)
	bustest.Eventually(t, attemptBound, "reconnected to the server that came back", func() bool {
		return conn.NC.IsConnected() && conn.NC.ConnectedAddr() == addr
	})
	t.Logf("reconnected %s after the server came back", time.Since(back).Round(time.Millisecond))
}

// attemptBound is how soon the reconnect must come: an attempt's timeout,
// the reconnect wait, and slack for a loaded machine.
const attemptBound = bus.AttemptTimeout + 5*time.Second
