// Package bus connects CueDeck's roles to NATS JetStream: it starts an
// embedded nats-server for single-node use, connects to a cluster otherwise,
// provisions every stream, bucket and consumer from one declarative
// Topology, and runs workers (handlers plus middleware) on durable pull
// consumers with acks, redelivery delays and a dead-letter stream.
package bus

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedConfig configures an in-process nats-server.
type EmbeddedConfig struct {
	// StoreDir holds JetStream's file storage. Required.
	StoreDir string
	// Host and Port to listen on for clients; Port 0 picks a free port
	// (other processes of the workspace find it in the daemon file).
	Host string
	Port int
	// SyncAlways fsyncs every write before acknowledging it. Off, a process
	// crash loses nothing (the page cache survives) but a power cut may.
	SyncAlways bool
	// ServerName names the server in monitoring and advisories.
	ServerName string
	// MaxPayload bounds one message; zero means 8 MiB.
	MaxPayload int32
	// LeafRemotes are URLs of team clusters to join as a leaf node.
	LeafRemotes []string
	Logger      *slog.Logger
}

// Embedded is a running in-process nats-server.
type Embedded struct {
	srv    *server.Server
	damage *damageLog
}

// StartEmbedded starts a nats-server with JetStream on file storage and
// waits until it accepts clients.
func StartEmbedded(cfg EmbeddedConfig) (*Embedded, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("bus: embedded server needs a store directory")
	}
	if err := os.MkdirAll(cfg.StoreDir, 0o755); err != nil {
		return nil, fmt.Errorf("bus: create store dir: %w", err)
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Port == 0 {
		cfg.Port = server.RANDOM_PORT
	}
	if cfg.MaxPayload == 0 {
		cfg.MaxPayload = 8 << 20
	}
	opts := &server.Options{
		ServerName:         cfg.ServerName,
		Host:               cfg.Host,
		Port:               cfg.Port,
		JetStream:          true,
		StoreDir:           cfg.StoreDir,
		SyncAlways:         cfg.SyncAlways,
		MaxPayload:         cfg.MaxPayload,
		NoSigs:             true,
		JetStreamMaxMemory: 64 << 20,
	}
	for _, remote := range cfg.LeafRemotes {
		u, err := parseURL(remote)
		if err != nil {
			return nil, fmt.Errorf("bus: leaf remote %q: %w", remote, err)
		}
		opts.LeafNode.Remotes = append(opts.LeafNode.Remotes, &server.RemoteLeafOpts{URLs: []*urlType{u}})
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("bus: embedded nats-server: %w", err)
	}
	damage := &damageLog{found: map[string]string{}}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The logger also hears what the file store says of damaged blocks.
	srv.SetLoggerV2(slogAdapter{l: logger, damage: damage}, false, false, false)
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("bus: embedded nats-server did not start within 30s (store %s)", cfg.StoreDir)
	}
	return &Embedded{srv: srv, damage: damage}, nil
}

// ClientURL is the URL clients connect to.
func (e *Embedded) ClientURL() string { return e.srv.ClientURL() }

// Shutdown stops the server and waits for it to flush and exit.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// slogAdapter routes nats-server's logger into slog, and notes damage.
type slogAdapter struct {
	l      *slog.Logger
	damage *damageLog
}

func (a slogAdapter) Noticef(format string, v ...any) {
	a.l.Debug(fmt.Sprintf(format, v...), "component", "nats-server")
}
func (a slogAdapter) Warnf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	a.damage.note(msg)
	a.l.Warn(msg, "component", "nats-server")
}
func (a slogAdapter) Fatalf(format string, v ...any) {
	a.l.Error(fmt.Sprintf(format, v...), "component", "nats-server")
}
func (a slogAdapter) Errorf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	a.damage.note(msg)
	a.l.Error(msg, "component", "nats-server")
}
func (a slogAdapter) Debugf(format string, v ...any) {}
func (a slogAdapter) Tracef(format string, v ...any) {}
