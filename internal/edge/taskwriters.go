package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// TaskWriters routes each repo's task writes to one edge: the edge holding
// the repo's lease in events.TaskWritersBucket. Edges of one team that
// each wrote for their own clients would race for the task log's last
// sequence and retry; forwarded to one writer, the writes join its
// batches (see tasks.Board) and none is lost to another edge. The lease
// only routes: a write still expects the log's last sequence wherever it
// is made, so an edge that writes while another holds the lease (its
// lease expired unseen, the bucket was lost) is slower, never wrong.
//
// Anyone who may publish on the bus may already append to the task log;
// a forwarded write is trusted as the log would trust it. The forwarding
// edge has resolved the repo and checked the caller may use it.
type TaskWriters struct {
	js      jetstream.JetStream
	nc      *nats.Conn
	subject string
	log     *slog.Logger

	mu   sync.Mutex
	kv   jetstream.KeyValue   // nil until Run has the bucket
	held map[string]uint64    // repo → revision of this edge's lease
	seen map[string]seenLease // repo → the holder another edge is, as last read

	ready chan struct{} // closed once Run routes
	// sent and answered count the writes this edge forwarded and the
	// forwarded writes it made.
	sent, answered atomic.Int64
}

type seenLease struct {
	subject string
	at      time.Time
}

// seenFor is how long a holder once read is trusted without reading the
// lease again: a new holder is found within it.
const seenFor = time.Second

// maxForwardedAtOnce bounds the forwarded writes an edge makes at once;
// more wait for the subscription to hand them over.
const maxForwardedAtOnce = 256

// NewTaskWriters returns the routing of an edge that takes forwarded
// writes on a subject of its own. Run makes it route; until then every
// write is made locally.
func NewTaskWriters(nc *nats.Conn, js jetstream.JetStream, logger *slog.Logger) *TaskWriters {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &TaskWriters{
		js: js, nc: nc, log: logger,
		subject: "cue.taskwriter." + uuid.NewString(),
		held:    map[string]uint64{},
		seen:    map[string]seenLease{},
		ready:   make(chan struct{}),
	}
}

// WithTaskWriters has the edge's task writes routed by tw; tw.Run must run
// with the edge's Forwarded as its handler.
func WithTaskWriters(tw *TaskWriters) Option { return func(e *Edge) { e.writers = tw } }

// forwardedKey marks the context of a write another edge forwarded here,
// holding the forwarding edge's actor: the write is made here whoever
// holds the lease now, so a write is forwarded at most once, and it is
// recorded as made by the edge its client called.
type forwardedKey struct{}

// actorOf names who makes a task write: this edge, or the edge that
// forwarded it.
func (e *Edge) actorOf(ctx context.Context) string {
	if actor, ok := ctx.Value(forwardedKey{}).(string); ok && actor != "" {
		return actor
	}
	return e.actor
}

// Forwarded answers a write another edge forwarded: as a call made here
// by that edge's actor, for a client authenticated with token, not
// forwarded again. It also returns the sequence of the write's event in
// the task log (the first call's, for a request_id seen already). Only
// the task writes are taken: the subject is no way around a token.
func (e *Edge) Forwarded(ctx context.Context, w ForwardedWrite) (json.RawMessage, uint64, error) {
	if w.Tool != tools.CreateTask && w.Tool != tools.UpdateTask {
		return nil, 0, tools.InvalidParams(w.Tool, "only create_task and update_task are forwarded between edges")
	}
	ctx = context.WithValue(ctx, forwardedKey{}, w.Actor)
	ctx = access.WithIdentity(ctx, access.Identity{Client: "forwarded:" + w.Actor, Token: w.Token})
	var seq uint64
	ctx = context.WithValue(ctx, writeSeqKey{}, &seq)
	out, err := e.call(ctx, w.Tool, w.Args)
	return out, seq, err
}

// writeSeqKey holds where a forwarded write's handler notes the sequence
// its event got: the forwarding edge waits for its board to apply it, so
// that its client reads its own write there.
type writeSeqKey struct{}

func noteWriteSeq(ctx context.Context, seq uint64) {
	if p, ok := ctx.Value(writeSeqKey{}).(*uint64); ok {
		*p = seq
	}
}

// forwardTaskWrite sends a write of repo to the edge holding the repo's
// lease. It reports false when the write is to be made here: no routing,
// a forwarded write, this edge the holder, or the lease unreadable.
func (e *Edge) forwardTaskWrite(ctx context.Context, tool, repo string, args json.RawMessage) (json.RawMessage, bool, error) {
	if e.writers == nil || ctx.Value(forwardedKey{}) != nil {
		return nil, false, nil
	}
	// A holder gone without releasing its lease answers no one: take the
	// lease over, once.
	for range 2 {
		subject, here := e.writers.route(ctx, repo)
		if here {
			return nil, false, nil
		}
		w := ForwardedWrite{Tool: tool, Actor: e.actor, Token: access.FromContext(ctx).Token}
		out, seq, err := e.writers.forward(ctx, subject, repo, w, args)
		if errors.Is(err, nats.ErrNoResponders) {
			e.writers.vacate(ctx, repo, subject)
			continue
		}
		if err == nil {
			// The client reads its own write here next, as when this
			// edge wrote it. The write is made: a wait cut short does
			// not undo it.
			wait := e.board.Sync
			if seq > 0 {
				wait = func(ctx context.Context) error { return e.board.WaitSeq(ctx, seq) }
			}
			start := time.Now()
			if werr := wait(ctx); werr != nil {
				e.logger.Warn("task writers: a forwarded write is not applied here yet; answering without it", "repo", repo, "seq", seq, "waited", time.Since(start).Round(time.Millisecond), "err", werr)
			} else if waited := time.Since(start); waited > slowApply {
				// The client waited on this edge's board, not on the write.
				e.logger.Warn("task writers: this edge's board took long to apply a forwarded write", "repo", repo, "seq", seq, "waited", waited.Round(time.Millisecond))
			}
		}
		return out, true, err
	}
	return nil, false, nil
}

// slowApply is how long a forwarded write may wait for this edge's board
// before the wait is worth a warning.
const slowApply = time.Second

// ForwardedWrite is a task write one edge hands the repo's writer.
type ForwardedWrite struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// Actor is the forwarding edge's; Token the name of the token its
	// client authenticated with, "" for none.
	Actor string `json:"actor,omitempty"`
	Token string `json:"token,omitempty"`
	// TimeoutMS is what is left of the forwarding call's deadline.
	TimeoutMS int64 `json:"timeout_ms"`
}

type forwardedAnswer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Seq    uint64          `json:"seq,omitempty"`
	Error  *tools.Error    `json:"error,omitempty"`
}

// forwardTimeout bounds a forwarded write when the call has no deadline
// of its own: the query service's call timeout.
const forwardTimeout = 30 * time.Second

func (tw *TaskWriters) forward(ctx context.Context, subject, repo string, w ForwardedWrite, args json.RawMessage) (json.RawMessage, uint64, error) {
	// The holder may have another default repo: the write names the one
	// resolved here.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return nil, 0, err
	}
	named, err := json.Marshal(repo)
	if err != nil {
		return nil, 0, err
	}
	fields["repo"] = named
	w.Args, err = json.Marshal(fields)
	if err != nil {
		return nil, 0, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, forwardTimeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	w.TimeoutMS = time.Until(deadline).Milliseconds()
	body, err := json.Marshal(w)
	if err != nil {
		return nil, 0, err
	}
	reply, err := tw.nc.RequestWithContext(ctx, subject, body)
	if errors.Is(err, nats.ErrNoResponders) {
		return nil, 0, err
	}
	tw.sent.Add(1)
	switch {
	case err != nil:
		// The holder may have made the write: only a request_id makes
		// a retry safe.
		return nil, 0, &tools.Error{Code: tools.CodeInternal, Message: "The repo's task writer did not answer in time", Data: map[string]any{
			"repo": repo, "retryable": true, "outcome": "unknown", "error": err.Error(),
			"suggestion": "Retry with the same request_id; without one, check list_tasks first: the write may have been made.",
		}}
	}
	var a forwardedAnswer
	if err := json.Unmarshal(reply.Data, &a); err != nil {
		return nil, 0, fmt.Errorf("edge: the task writer of %s answered %d bytes that are not an answer: %w", repo, len(reply.Data), err)
	}
	if a.Error != nil {
		return nil, 0, a.Error
	}
	return a.Result, a.Seq, nil
}

// Ready is closed once Run routes writes and takes forwarded ones.
func (tw *TaskWriters) Ready() <-chan struct{} { return tw.ready }

// Counts returns how many writes this edge forwarded to another and how
// many forwarded writes it made.
func (tw *TaskWriters) Counts() (sent, answered int64) { return tw.sent.Load(), tw.answered.Load() }

// route returns the subject of the edge that writes repo's tasks, or here
// when that is this edge: it claims a lease nobody holds.
func (tw *TaskWriters) route(ctx context.Context, repo string) (subject string, here bool) {
	tw.mu.Lock()
	kv := tw.kv
	if _, ok := tw.held[repo]; ok || kv == nil {
		tw.mu.Unlock()
		return "", true
	}
	if s, ok := tw.seen[repo]; ok && time.Since(s.at) < seenFor {
		tw.mu.Unlock()
		return s.subject, false
	}
	tw.mu.Unlock()

	key := events.TaskWriterKey(repo)
	for range 2 {
		entry, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			rev, err := kv.Create(ctx, key, []byte(tw.subject))
			if errors.Is(err, jetstream.ErrKeyExists) {
				continue // another edge claimed it first
			}
			if err != nil {
				tw.log.Debug("task writers: cannot claim a repo's lease; writing here", "repo", repo, "err", err)
				return "", true
			}
			tw.mu.Lock()
			tw.held[repo] = rev
			delete(tw.seen, repo)
			tw.mu.Unlock()
			tw.log.Debug("task writers: this edge writes the repo's tasks", "repo", repo)
			return "", true
		}
		if err != nil {
			tw.log.Debug("task writers: cannot read a repo's lease; writing here", "repo", repo, "err", err)
			return "", true
		}
		holder := string(entry.Value())
		tw.mu.Lock()
		defer tw.mu.Unlock()
		if holder == tw.subject {
			tw.held[repo] = entry.Revision()
			return "", true
		}
		tw.seen[repo] = seenLease{subject: holder, at: time.Now()}
		return holder, false
	}
	return "", true
}

// vacate removes the lease of a holder that answered no one, unless
// another edge has taken it since.
func (tw *TaskWriters) vacate(ctx context.Context, repo, holder string) {
	tw.mu.Lock()
	delete(tw.seen, repo)
	kv := tw.kv
	tw.mu.Unlock()
	key := events.TaskWriterKey(repo)
	entry, err := kv.Get(ctx, key)
	if err != nil || string(entry.Value()) != holder {
		return
	}
	if err := kv.Delete(ctx, key, jetstream.LastRevision(entry.Revision())); err == nil {
		tw.log.Info("task writers: the repo's writer answered no one; an edge takes its lease over", "repo", repo)
	}
}

// Run takes forwarded writes on this edge's subject, answering them with
// handle (the edge's Forwarded), and renews the leases it holds until ctx
// ends; then it gives them up, so that another edge takes over at once.
func (tw *TaskWriters) Run(ctx context.Context, handle func(context.Context, ForwardedWrite) (json.RawMessage, uint64, error)) error {
	kv, err := tw.js.KeyValue(ctx, events.TaskWritersBucket)
	if err != nil {
		// Routing only saves retries: without it the edge writes its
		// own clients' tasks, as every edge did before.
		if ctx.Err() == nil {
			tw.log.Warn("task writers: no lease bucket; this edge writes its clients' tasks itself (every role provisions the bucket at start: restart one to create it)", "bucket", events.TaskWritersBucket, "err", err)
		}
		<-ctx.Done()
		return nil
	}
	slots := make(chan struct{}, maxForwardedAtOnce)
	var running sync.WaitGroup
	sub, err := tw.nc.Subscribe(tw.subject, func(msg *nats.Msg) {
		slots <- struct{}{}
		running.Go(func() {
			defer func() { <-slots }()
			tw.answer(ctx, msg, handle)
		})
	})
	if err != nil {
		return fmt.Errorf("task writers: subscribe: %w", err)
	}
	if err := tw.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("task writers: subscribe: %w", err)
	}
	tw.mu.Lock()
	tw.kv = kv
	tw.mu.Unlock()
	close(tw.ready)

	tick := time.NewTicker(events.TaskWriterLease / 3)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			tw.renew(ctx)
			continue
		case <-ctx.Done():
		}
		break
	}
	// Route nothing more here, answer what came, then let the leases go.
	tw.mu.Lock()
	tw.kv = nil
	held := tw.held
	tw.held = map[string]uint64{}
	tw.mu.Unlock()
	_ = sub.Drain()
	running.Wait()
	release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	for repo, rev := range held {
		_ = kv.Delete(release, events.TaskWriterKey(repo), jetstream.LastRevision(rev))
	}
	return nil
}

// renew extends every lease this edge holds; one it lost (expired,
// taken) is dropped, and the next write finds the holder.
func (tw *TaskWriters) renew(ctx context.Context) {
	tw.mu.Lock()
	kv := tw.kv
	held := make(map[string]uint64, len(tw.held))
	for repo, rev := range tw.held {
		held[repo] = rev
	}
	tw.mu.Unlock()
	for repo, rev := range held {
		next, err := kv.Update(ctx, events.TaskWriterKey(repo), []byte(tw.subject), rev)
		tw.mu.Lock()
		if err != nil {
			delete(tw.held, repo)
			tw.log.Debug("task writers: lease lost", "repo", repo, "err", err)
		} else if _, ok := tw.held[repo]; ok {
			tw.held[repo] = next
		}
		tw.mu.Unlock()
	}
}

func (tw *TaskWriters) answer(ctx context.Context, msg *nats.Msg, handle func(context.Context, ForwardedWrite) (json.RawMessage, uint64, error)) {
	var w ForwardedWrite
	var a forwardedAnswer
	if err := json.Unmarshal(msg.Data, &w); err != nil {
		a.Error = &tools.Error{Code: tools.CodeInternal, Message: "forwarded write unreadable: " + err.Error()}
	} else {
		timeout := time.Duration(w.TimeoutMS) * time.Millisecond
		if timeout <= 0 || timeout > forwardTimeout {
			timeout = forwardTimeout
		}
		// The write finishes even when this edge is stopping: the
		// forwarding edge waits for its answer.
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		tw.answered.Add(1)
		out, seq, err := handle(callCtx, w)
		cancel()
		a.Result, a.Seq = out, seq
		if err != nil {
			a.Result = nil
			var te *tools.Error
			if !errors.As(err, &te) {
				tw.log.Error("task writers: forwarded write failed", "tool", w.Tool, "error", err)
				te = tools.Internal(err)
			}
			a.Error = te
		}
	}
	body, err := json.Marshal(a)
	if err != nil {
		body, _ = json.Marshal(forwardedAnswer{Error: &tools.Error{Code: tools.CodeInternal, Message: err.Error()}})
	}
	if err := msg.Respond(body); err != nil {
		tw.log.Debug("task writers: answer a forwarded write", "err", err)
	}
}
