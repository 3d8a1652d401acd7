// Package role holds what every separately deployed role binary shares:
// the NATS flags (flag > environment > default), the logger, and connecting
// with the topology provisioned, so each cmd/*/main.go is only wiring.
package role

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
)

// Flags are the settings every role takes.
type Flags struct {
	NATSURL     string
	Credentials string
	// User and Password name a user of the server's config; the password
	// comes only from the environment, so it shows in no process listing.
	User     string
	Password string
	LogLevel string
	LogJSON  bool
	Replicas int
}

// Register adds the common flags to fs, with defaults from the environment
// (CUE_NATS_URL, CUE_NATS_CREDS, CUE_NATS_USER, CUE_LOG_LEVEL, CUE_LOG_JSON,
// CUE_REPLICAS); the user's password is CUE_NATS_PASSWORD, never a flag.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{Password: os.Getenv("CUE_NATS_PASSWORD")}
	fs.StringVar(&f.NATSURL, "nats", env("CUE_NATS_URL", "nats://127.0.0.1:4222"), "NATS URL(s), comma-separated")
	fs.StringVar(&f.Credentials, "creds", env("CUE_NATS_CREDS", ""), "NATS credentials file")
	fs.StringVar(&f.User, "nats-user", env("CUE_NATS_USER", ""), "NATS user of the server's config (password from CUE_NATS_PASSWORD)")
	fs.StringVar(&f.LogLevel, "log-level", env("CUE_LOG_LEVEL", "info"), "debug, info, warn or error")
	fs.BoolVar(&f.LogJSON, "log-json", env("CUE_LOG_JSON", "") == "true", "log as JSON")
	replicas, _ := strconv.Atoi(env("CUE_REPLICAS", "1"))
	fs.IntVar(&f.Replicas, "replicas", replicas, "replicas of streams and buckets (3 in a cluster)")
	return f
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Logger builds the role's logger on stderr.
func (f *Flags) Logger(role string) (*slog.Logger, error) {
	log, err := NewLogger(f.LogLevel, f.LogJSON)
	if err != nil {
		return nil, err
	}
	return log.With("role", role), nil
}

// NewLogger logs to stderr at level (debug, info, warn, error), as text or
// JSON. Stdout is left to command output and the MCP stdio protocol.
func NewLogger(level string, asJSON bool) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	if asJSON {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
}

// Settings are the topology settings these flags select.
func (f *Flags) Settings() bus.Settings { return bus.Settings{Replicas: f.Replicas} }

// Connect connects and provisions the topology (idempotent; every role
// does it, so any may start first).
func (f *Flags) Connect(ctx context.Context, name string, log *slog.Logger) (*bus.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if f.User != "" && f.Password == "" {
		return nil, fmt.Errorf("--nats-user %s: set its password in CUE_NATS_PASSWORD", f.User)
	}
	conn, err := bus.Connect(cctx, f.NATSURL, bus.ConnectOptions{Name: name, Credentials: f.Credentials, User: f.User, Password: f.Password, Logger: log})
	if err != nil {
		return nil, err
	}
	if err := f.Settings().Validate(); err != nil {
		conn.Close()
		return nil, err
	}
	if err := provision(cctx, conn, f.Settings(), log); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// provisionAttempt bounds one provisioning pass. A JetStream API request
// made before a cluster has elected its leader is never answered, so a
// role started with its NATS nodes (a first `docker compose up`) would
// otherwise wait out the whole deadline on a request that was dropped.
const provisionAttempt = 10 * time.Second

// provisionPause is the wait before asking again when the cluster
// answered that it cannot place the streams yet.
const provisionPause = time.Second

// provision provisions the topology, asking again after an attempt that
// got no answer, and after one the cluster refused for want of peers (a
// node still joining or restarting: error 10005 "no suitable peers for
// placement", or 10008 while it is unavailable); create-or-update is
// idempotent, so a repeat is harmless.
func provision(ctx context.Context, conn *bus.Conn, s bus.Settings, log *slog.Logger) error {
	var refused error
	for {
		actx, cancel := context.WithTimeout(ctx, provisionAttempt)
		err := bus.Provision(actx, conn.JS, bus.DeclaredTopology(s), log)
		cancel()
		if bus.PlacementRefused(err) {
			refused = err
		}
		if err == nil || ctx.Err() != nil {
			if err != nil && refused != nil {
				return fmt.Errorf("%w (the cluster has had fewer JetStream nodes up than --replicas %d: start the others, or lower --replicas)", refused, s.Replicas)
			}
			return err
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			log.Warn("provisioning the topology got no answer (is the NATS cluster still forming?); asking again", "err", err)
		case bus.PlacementRefused(err):
			log.Warn("the cluster cannot place the replicated streams yet (a node still joining?); asking again", "replicas", s.Replicas, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(provisionPause):
			}
		default:
			return err
		}
	}
}

// AsksVersion reports whether a role's arguments ask for its version
// (`ROLE version [--json]`, or --version); the role then answers with
// version.Print instead of starting.
func AsksVersion(args []string) bool {
	return len(args) > 0 && (args[0] == "version" || args[0] == "--version")
}
