package bus

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

type urlType = url.URL

func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("want scheme://host:port, e.g. nats-leaf://team.example:7422")
	}
	return u, nil
}

// Conn is a NATS connection with its JetStream context.
type Conn struct {
	NC     *nats.Conn
	JS     jetstream.JetStream
	closed chan struct{}
	// kvs and objects keep the bucket handles KV and Objects looked up.
	kvs, objects sync.Map
	// durable, when set, makes the server's writes durable on request
	// (Durable): the embedded server's store, which the server itself
	// does not sync per write.
	durable *GroupSync
}

// SetDurable hands the connection the sync of its server's store; a
// connection to a cluster has none (its servers sync as configured).
func (c *Conn) SetDurable(g *GroupSync) { c.durable = g }

// Durable returns once every write the server acknowledged on any
// connection before the call would survive a power cut. Call it before
// acknowledging onward (an ack, an answer to a client) what such a write
// did. Without a store to sync (a cluster) it returns at once.
func (c *Conn) Durable(ctx context.Context) error {
	if c == nil {
		return nil
	}
	return c.durable.Sync(ctx)
}

// DurableLater is Durable in two steps, for bulk work: the wait it
// returns returns once every write acknowledged before DurableLater was
// called would survive a power cut, by a sync that starts within the
// given time of the one before (GroupSync.Join).
func (c *Conn) DurableLater(within time.Duration) (wait func(context.Context) error) {
	if c == nil {
		return func(context.Context) error { return nil }
	}
	return c.durable.Join(within)
}

// ConnectOptions tune Connect.
type ConnectOptions struct {
	// Name identifies the client in server monitoring, e.g. "cue-indexer".
	Name string
	// Credentials is an optional .creds file; Token an optional auth token;
	// User and Password a server-configured user (deployments/nats/*.conf),
	// passed apart from the URL so no log line or error carries the secret.
	Credentials string
	Token       string
	User        string
	Password    string
	Logger      *slog.Logger
}

// AttemptTimeout bounds one attempt to connect to one server: the dial
// and the handshake, at start and at each reconnect.
const AttemptTimeout = 5 * time.Second

// Connect dials url (a comma-separated list for a cluster) and reconnects
// forever: a role outlives a server restart or a leader election.
func Connect(ctx context.Context, url string, o ConnectOptions) (*Conn, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	closed := make(chan struct{})
	opts := []nats.Option{
		nats.Name(o.Name),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				logger.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			logger.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
		}),
		// Without it nats.go prints asynchronous errors (slow consumers,
		// inactive consumers) to stderr as bare text, outside the logs.
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				logger.Warn("nats asynchronous error", "err", err, "subject", sub.Subject)
				return
			}
			logger.Warn("nats asynchronous error", "err", err)
		}),
	}
	if o.Credentials != "" {
		opts = append(opts, nats.UserCredentials(o.Credentials))
	}
	if o.Token != "" {
		opts = append(opts, nats.Token(o.Token))
	}
	if o.User != "" {
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	// The timeout bounds each attempt, the first connect's and every
	// reconnect's: nats.go holds the connection's lock through an attempt,
	// so a long one to a server that cannot answer (a partitioned
	// network drops the packets) would delay the reconnect after the
	// network heals, and block every publish, by as long.
	attempt := AttemptTimeout
	if deadline, ok := ctx.Deadline(); ok {
		attempt = min(attempt, time.Until(deadline))
	}
	opts = append(opts, nats.Timeout(attempt))
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect to %s: %w (is the NATS server running? `cue up` starts one for this workspace)", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	return &Conn{NC: nc, JS: js, closed: closed}, nil
}

// Close drains the connection: pending publishes are flushed and
// subscriptions finish their in-flight messages before it closes.
func (c *Conn) Close() {
	if c == nil || c.NC == nil {
		return
	}
	if err := c.NC.Drain(); err != nil {
		c.NC.Close()
	}
	// Drain is bounded by the connection's drain timeout (30 s by default).
	<-c.closed
}
