package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// Handler handles one event. Returning nil acks the message, so a handler
// returns only once its effect is durable. A handler must be idempotent: a
// message may be delivered again after a crash or an ack that was lost.
type Handler func(ctx context.Context, env events.Envelope) error

// msgKey carries the message in hand in a handler's context, for InProgress.
type msgKey struct{}

// InProgress tells the server that the handler whose ctx this is still works
// on its message, so the consumer's AckWait starts again instead of the
// message going to another worker. A handler that may run longer than
// AckWait (an LLM call) calls it periodically. Outside a Worker's handler
// it does nothing and returns nil.
func InProgress(ctx context.Context) error {
	msg, ok := ctx.Value(msgKey{}).(jetstream.Msg)
	if !ok {
		return nil
	}
	return msg.InProgress()
}

// eventSyncKey carries, in a handler's context, the wait for its event's
// sync (WorkerConfig.SyncEvents).
type eventSyncKey struct{}

// EventDurable returns once the event whose handler's ctx this is would
// survive a power cut, where the worker syncs events (SyncEvents). A
// handler whose writes name the event's sequence calls it before its
// first write and returns its error. Elsewhere it returns nil at once.
func EventDurable(ctx context.Context) error {
	wait, ok := ctx.Value(eventSyncKey{}).(func(context.Context) error)
	if !ok {
		return nil
	}
	return wait(ctx)
}

// Middleware wraps a Handler.
type Middleware func(Handler) Handler

// ErrPermanent marks a failure that no retry can fix (an event that does not
// decode, a repo name that is not valid). Such a message is dead-lettered at
// once instead of being redelivered.
var ErrPermanent = errors.New("permanent failure")

// Permanent wraps err so that errors.Is(err, ErrPermanent) holds.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrPermanent, err)
}

// Recoverer turns a handler panic into an error, so one poisonous event
// costs a redelivery and then a dead letter, not the whole process.
func Recoverer(next Handler) Handler {
	return func(ctx context.Context, env events.Envelope) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("handler panic: %v\n%s", r, debug.Stack())
			}
		}()
		return next(ctx, env)
	}
}

// WorkerConfig describes a worker pool on a durable consumer.
type WorkerConfig struct {
	Stream   string
	Consumer string
	// Concurrency is how many messages are handled at once; default 4.
	Concurrency int
	// MaxDeliver must match the consumer's; the last delivery that fails is
	// dead-lettered. Default 5.
	MaxDeliver int
	// RetryDelay is the redelivery delay after the n-th failed delivery;
	// default grows from 1 s to 30 s.
	RetryDelay func(delivered uint64) time.Duration
	// Interruptible hands handlers a context that ends when Run's does. By
	// default a handler in the middle of its work finishes it and acks;
	// one that may run for long (embedding a large file) is better stopped:
	// it returns the context's error and its message is put back at once,
	// to be handled again after a restart.
	Interruptible bool
	// SyncEvents makes each event durable (Conn.Durable) before its
	// handler writes, for handlers whose effects name the event's stream
	// sequence: after a power cut a store that kept such an effect but
	// lost the event would give the sequence again to another event,
	// which the effect would then outrank. The sync starts as the handler
	// does, and the handler calls EventDurable before its first write:
	// what it does before (parsing a file) overlaps the sync instead of
	// waiting for it. Every worker syncs after its handler, before it
	// acks.
	SyncEvents bool
	// SyncWithin lets the syncs this worker waits for (its events' and
	// its handlers' writes') start up to this long after the sync before
	// them, so that each covers more messages: for bulk work with many
	// messages in flight, where a sync per millisecond costs the disk's
	// journal more than the wait costs the work. Zero syncs as soon as
	// the disk allows, for work someone waits on.
	SyncWithin time.Duration
	Logger     *slog.Logger
}

func (c *WorkerConfig) setDefaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = 5
	}
	if c.RetryDelay == nil {
		c.RetryDelay = func(n uint64) time.Duration {
			d := time.Second << min(n, 5)
			return min(d, 30*time.Second)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Worker runs a Handler on a durable pull consumer.
type Worker struct {
	js      jetstream.JetStream
	nc      *nats.Conn
	conn    *Conn
	cfg     WorkerConfig
	handler Handler

	// putBack holds the messages of handlers interrupted by shutdown
	// until Run has stopped pulling (Interruptible).
	putBackMu sync.Mutex
	putBack   []jetstream.Msg

	// trimmed is the bound of the last trim of the stream created at
	// trimmedIn (trimLoop's alone).
	trimmed   uint64
	trimmedIn time.Time
	// settles counts the messages this pool settled (acked or termed).
	settles atomic.Uint64
}

// NewWorker builds a worker; middleware wraps the handler outermost first.
func NewWorker(conn *Conn, cfg WorkerConfig, h Handler, mw ...Middleware) *Worker {
	cfg.setDefaults()
	h = Recoverer(h)
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return &Worker{js: conn.JS, nc: conn.NC, conn: conn, cfg: cfg, handler: h}
}

// Run consumes until ctx is cancelled, then drains: no new messages are
// taken, and Run returns once every message in hand is handled and acked.
func (w *Worker) Run(ctx context.Context) error {
	cons, err := w.js.Consumer(ctx, w.cfg.Stream, w.cfg.Consumer)
	if err != nil {
		return fmt.Errorf("bus: consumer %s on %s: %w", w.cfg.Consumer, w.cfg.Stream, err)
	}
	// Messages that exhausted MaxDeliver without a handler ever failing
	// them (the process died while holding them) are reported by the
	// server's advisory; they are dead-lettered from there.
	advisory := fmt.Sprintf("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.%s.%s", w.cfg.Stream, w.cfg.Consumer)
	sub, err := w.nc.Subscribe(advisory, func(m *nats.Msg) { w.deadLetterFromAdvisory(m.Data) })
	if err != nil {
		return fmt.Errorf("bus: subscribe %s: %w", advisory, err)
	}
	defer sub.Unsubscribe()

	// Handlers run in their own context: cancelling Run stops intake, but a
	// handler in the middle of a write finishes it and acks, unless the
	// worker is interruptible.
	handlerCtx := context.WithoutCancel(ctx)
	if w.cfg.Interruptible {
		handlerCtx = ctx
	}
	sem := make(chan struct{}, w.cfg.Concurrency)
	var inflight sync.WaitGroup
	// When the connection is lost rather than drained, Closed fires while
	// the client may still be delivering a message to this callback; the
	// flag keeps inflight.Add from racing the final Wait (the message is
	// left unacked and redelivered).
	var (
		stopMu  sync.Mutex
		stopped bool
	)
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		stopMu.Lock()
		if stopped {
			stopMu.Unlock()
			return
		}
		inflight.Add(1)
		stopMu.Unlock()
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; inflight.Done() }()
			if err := waitWritable(handlerCtx, msg); err != nil {
				return // stopping: left unacked, redelivered
			}
			w.handle(handlerCtx, msg)
		}()
	},
		jetstream.PullMaxMessages(2*w.cfg.Concurrency),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if !errors.Is(err, jetstream.ErrNoHeartbeat) {
				w.cfg.Logger.Debug("consume", "consumer", w.cfg.Consumer, "err", err)
			}
		}),
	)
	if err != nil {
		return fmt.Errorf("bus: consume %s: %w", w.cfg.Consumer, err)
	}
	trimCtx, stopTrim := context.WithCancel(ctx)
	trimDone := make(chan struct{})
	go func() { defer close(trimDone); w.trimLoop(trimCtx, cons) }()
	defer func() { stopTrim(); <-trimDone }()
	<-ctx.Done()
	cc.Drain()
	// A drain waits for the server to answer the pulls in flight; a server
	// that cannot (its store deleted under it) would hold the stop forever.
	// What is not acked by then is redelivered.
	select {
	case <-cc.Closed():
	case <-time.After(drainTimeout):
		w.cfg.Logger.Warn("consumer drain unanswered; stopping without it", "consumer", w.cfg.Consumer, "after", drainTimeout)
		cc.Stop()
	}
	stopMu.Lock()
	stopped = true
	stopMu.Unlock()
	inflight.Wait()
	w.putBackMu.Lock()
	for _, msg := range w.putBack {
		_ = msg.Nak()
	}
	w.putBack = nil
	w.putBackMu.Unlock()
	return nil
}

// drainTimeout bounds how long Run waits for its consumer to drain.
const drainTimeout = 5 * time.Second

// waitWritable holds msg while Writes is closed (the disk is nearly
// full): handling it would write. It tells the server the message is in
// progress meanwhile, so that waiting neither redelivers it nor counts
// toward MaxDeliver.
func waitWritable(ctx context.Context, msg jetstream.Msg) error {
	for Writes.Reason() != "" {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := Writes.Wait(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			_ = msg.InProgress()
		}
	}
	return nil
}

func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		w.cfg.Logger.Error("message without metadata", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
	env := events.Envelope{
		Subject:   msg.Subject(),
		MsgID:     msg.Headers().Get(jetstream.MsgIDHeader),
		StreamSeq: meta.Sequence.Stream,
		Delivered: meta.NumDelivered,
		Published: meta.Timestamp,
	}
	log := w.cfg.Logger.With("subject", env.Subject, "stream_seq", env.StreamSeq, "delivered", env.Delivered)
	hctx := context.WithValue(ctx, msgKey{}, msg)
	if w.cfg.SyncEvents {
		hctx = context.WithValue(hctx, eventSyncKey{}, w.conn.DurableLater(w.cfg.SyncWithin))
	}
	ev, err := events.Decode(msg.Data())
	if err == nil {
		env.Event = ev
		err = w.handler(hctx, env)
	} else {
		err = Permanent(err)
	}
	if err == nil {
		// What the handler wrote must outlive a power cut before the
		// ack removes the event that would redo it.
		if derr := w.conn.DurableLater(w.cfg.SyncWithin)(ctx); derr != nil {
			log.Warn("the handler's writes could not be made durable; will retry", "err", derr)
			_ = msg.NakWithDelay(w.cfg.RetryDelay(env.Delivered))
			return
		}
		// Wait for the server to confirm the ack, so that a message is
		// settled when Run returns and a clean restart redelivers nothing.
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		aerr := msg.DoubleAck(actx)
		cancel()
		w.settles.Add(1)
		if aerr != nil {
			// The effect is durable and the handler idempotent: a
			// redelivery after a lost ack changes nothing.
			log.Warn("ack not confirmed; message may be redelivered", "err", aerr)
		}
		return
	}
	if w.cfg.Interruptible && ctx.Err() != nil {
		// Stopped, not failed: put it back for whoever runs next, without
		// a delay and without a dead letter; Run does once this consumer
		// has stopped pulling, or the message would come straight back to
		// it, be dropped and count towards MaxDeliver.
		log.Debug("handler interrupted by shutdown; message put back", "err", err)
		w.putBackMu.Lock()
		w.putBack = append(w.putBack, msg)
		w.putBackMu.Unlock()
		return
	}
	if errors.Is(err, ErrPermanent) || int(env.Delivered) >= w.cfg.MaxDeliver {
		log.Error("giving up on event", "err", err)
		// The letter's id names the event's sequence too.
		if derr := EventDurable(hctx); derr != nil {
			log.Warn("the event could not be made durable; will retry", "err", derr)
			_ = msg.NakWithDelay(w.cfg.RetryDelay(env.Delivered))
			return
		}
		if derr := w.deadLetter(ctx, msg.Subject(), msg.Headers(), msg.Data(), env.StreamSeq, env.Delivered, err); derr != nil {
			// Without a dead letter written, leave the message to be
			// redelivered rather than lose it.
			log.Error("dead-letter publish failed; leaving message for redelivery", "err", derr)
			_ = msg.NakWithDelay(w.cfg.RetryDelay(env.Delivered))
			return
		}
		if derr := w.conn.Durable(ctx); derr != nil {
			log.Error("the dead letter could not be made durable; leaving message for redelivery", "err", derr)
			_ = msg.NakWithDelay(w.cfg.RetryDelay(env.Delivered))
			return
		}
		_ = msg.Term()
		w.settles.Add(1)
		return
	}
	delay := w.cfg.RetryDelay(env.Delivered)
	log.Warn("event failed; will retry", "err", err, "retry_in", delay)
	_ = msg.NakWithDelay(delay)
}

// deadLetter publishes a copy of a failed message to the dead-letter stream.
// Its message id is derived from the source stream and sequence, so the
// handler path and the advisory path never write the same letter twice.
func (w *Worker) deadLetter(ctx context.Context, subject string, hdr nats.Header, data []byte, seq, delivered uint64, cause error) error {
	out := nats.NewMsg(events.SubjectDeadLetterPrefix + w.cfg.Stream + "." + w.cfg.Consumer)
	out.Data = data
	if kind := hdr.Get(events.HeaderKind); kind != "" {
		out.Header.Set(events.HeaderKind, kind)
	}
	msg := cause.Error()
	if len(msg) > 2048 {
		msg = msg[:2048] + "…"
	}
	out.Header.Set(events.HeaderDeadError, msg)
	out.Header.Set(events.HeaderDeadStream, w.cfg.Stream)
	out.Header.Set(events.HeaderDeadConsumer, w.cfg.Consumer)
	out.Header.Set(events.HeaderDeadSubject, subject)
	out.Header.Set(events.HeaderDeadSeq, strconv.FormatUint(seq, 10))
	out.Header.Set(events.HeaderDeadDeliver, strconv.FormatUint(delivered, 10))
	out.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("dead/%s/%d", w.cfg.Stream, seq))
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := w.js.PublishMsg(pctx, out)
	return err
}

type maxDeliveriesAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

func (w *Worker) deadLetterFromAdvisory(data []byte) {
	var adv maxDeliveriesAdvisory
	if err := json.Unmarshal(data, &adv); err != nil || adv.StreamSeq == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := w.js.Stream(ctx, w.cfg.Stream)
	if err != nil {
		return
	}
	raw, err := stream.GetMsg(ctx, adv.StreamSeq)
	if err != nil {
		// Already gone: a handler dead-lettered and termed it.
		return
	}
	cause := fmt.Errorf("no worker acknowledged it in %d deliveries (each worker holding it stopped or timed out)", adv.Deliveries)
	if err := w.deadLetter(ctx, raw.Subject, raw.Header, raw.Data, adv.StreamSeq, adv.Deliveries, cause); err != nil {
		w.cfg.Logger.Error("dead-letter from advisory failed", "stream_seq", adv.StreamSeq, "err", err)
		return
	}
	// A queue keeps an unsettled message until it is settled; the letter
	// now holds it, so remove it from the queue.
	if err := stream.DeleteMsg(ctx, adv.StreamSeq); err != nil {
		w.cfg.Logger.Warn("delete dead-lettered message", "stream_seq", adv.StreamSeq, "err", err)
	}
}
