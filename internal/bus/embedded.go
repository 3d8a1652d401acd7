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
	"net"
	"os"
	"sync"
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
	// SyncAlways makes every write durable before anything acknowledges
	// it onward. Where the system can sync a file system as a whole
	// (Linux), the server writes each message to its file and the roles
	// sync the store in groups before they ack or answer (GroupSync,
	// Conn.Durable); elsewhere the server syncs every write. Off, a
	// process crash loses nothing (the page cache survives) but a power
	// cut may.
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
	mu     sync.Mutex
	srv    *server.Server
	opts   *server.Options
	logger *slog.Logger
	damage *damageLog
	// durable syncs the store for the roles when SyncAlways is met so.
	durable *GroupSync
}

// Durable is the sync of the store that the roles' connections take
// (Conn.SetDurable), nil when the server syncs each write itself or
// SyncAlways is off.
func (e *Embedded) Durable() *GroupSync { return e.durable }

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
	var durable *GroupSync
	serverSyncs := cfg.SyncAlways
	if cfg.SyncAlways {
		// A sync per message costs the disk's latency per file indexed;
		// one per group of acknowledgements keeps the same promise.
		if g, err := NewGroupSync(cfg.StoreDir); err == nil {
			durable, serverSyncs = g, false
		}
	}
	opts := &server.Options{
		ServerName:         cfg.ServerName,
		Host:               cfg.Host,
		Port:               cfg.Port,
		JetStream:          true,
		StoreDir:           cfg.StoreDir,
		SyncAlways:         serverSyncs,
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
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Embedded{opts: opts, logger: logger, damage: &damageLog{found: map[string]string{}}, durable: durable}
	srv, err := e.start()
	if err != nil {
		_ = durable.Close()
		return nil, err
	}
	e.srv = srv
	// A restart listens where clients already connect.
	if addr, ok := srv.Addr().(*net.TCPAddr); ok {
		e.opts.Port = addr.Port
	}
	return e, nil
}

func (e *Embedded) start() (*server.Server, error) {
	srv, err := server.NewServer(e.opts.Clone())
	if err != nil {
		return nil, fmt.Errorf("bus: embedded nats-server: %w", err)
	}
	// The logger also hears what the file store says of damaged blocks.
	srv.SetLoggerV2(slogAdapter{l: e.logger, damage: e.damage}, false, false, false)
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("bus: embedded nats-server did not start within 30s (store %s)", e.opts.StoreDir)
	}
	return srv, nil
}

// ErrStuck is Restart's error when the server did not stop in time.
var ErrStuck = errors.New("bus: the embedded nats-server did not stop")

// Restart stops the server and starts it again on the same port and
// store: what clears a stream's write error once the disk has room again
// (the server keeps it until then). Clients reconnect by themselves. A
// server that does not stop within timeout is left as it is (ErrStuck).
func (e *Embedded) Restart(timeout time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	stopped := make(chan struct{})
	go func() {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(timeout):
		return ErrStuck
	}
	srv, err := e.start()
	if err != nil {
		return err
	}
	e.srv = srv
	e.damage.clearWriteErrors()
	return nil
}

// WriteErrors are the streams a write failed on since the server last
// started, with the server's report: it accepts nothing more into them
// until it restarts. They are read from the server's log, not asked of
// it: a server whose disk filled may not answer.
func (e *Embedded) WriteErrors() map[string]string {
	return e.damage.writeErrors()
}

// ClientURL is the URL clients connect to.
func (e *Embedded) ClientURL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.srv.ClientURL()
}

// Shutdown stops the server and waits for it to flush and exit.
func (e *Embedded) Shutdown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
	// The writes are on disk now (the server syncs its store at shutdown).
	_ = e.durable.Close()
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
