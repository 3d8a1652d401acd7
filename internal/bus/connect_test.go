package bus_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
)

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A slow consumer is reported through the role's logger, not printed by
// nats.go.
func TestAsyncErrorsGoToTheLogger(t *testing.T) {
	_, srv := bustest.Start(t, bus.Settings{})
	var logs syncBuffer
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
