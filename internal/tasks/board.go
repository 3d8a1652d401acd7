// Package tasks is the task board: the materialised state of every repo's
// task log on the CUE_TASKS stream, and the only way edges write to it.
// Writes are optimistic: each publish expects the last sequence of the repo's
// subject that the writer validated against, so two writers on different
// edges can never together create a dependency cycle or lose an update. The
// edge's task tools use a Board; `cue card new` may reuse NewID.
package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// Stream is the narrow part of JetStream a Board needs: an ordered
// consumer to follow the log, the stream's info to know how far the log
// goes, and publishing.
type Stream interface {
	OrderedConsumer(ctx context.Context, stream string, cfg jetstream.OrderedConsumerConfig) (jetstream.Consumer, error)
	Stream(ctx context.Context, stream string) (jetstream.Stream, error)
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
}

// ErrConflict is returned by Mutate and Append when the repo's log kept
// moving under every attempt: other writers won MaxAttempts races in a row.
var ErrConflict = errors.New("tasks: task log changed during every attempt")

// ErrClosed is returned by waits when the Board's Run has ended.
var ErrClosed = errors.New("tasks: board stopped")

// MaxAttempts bounds the optimistic retries of one mutation.
const MaxAttempts = 8

type repoState struct {
	tasks map[string]events.Task
	// seq is the stream sequence of the last message on the repo's
	// subject: what the next publish expects.
	seq uint64
}

// Board is the materialised task state of every repo. Run feeds it; it is
// safe for concurrent use.
type Board struct {
	js     Stream
	logger *slog.Logger

	mu      sync.RWMutex
	repos   map[string]*repoState
	applied uint64        // last stream sequence applied
	changed chan struct{} // closed and replaced whenever applied moves
	done    bool
}

// NewBoard returns an empty Board over js. A nil logger discards.
func NewBoard(js Stream, logger *slog.Logger) *Board {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Board{js: js, logger: logger, repos: make(map[string]*repoState), changed: make(chan struct{})}
}

// Run follows the CUE_TASKS stream from its start with an ordered consumer
// and applies every event, until ctx ends. It returns nil when ctx ends.
func (b *Board) Run(ctx context.Context) error {
	defer func() {
		b.mu.Lock()
		b.done = true
		close(b.changed)
		b.changed = make(chan struct{})
		b.mu.Unlock()
	}()
	cons, err := b.js.OrderedConsumer(ctx, events.TasksStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.SubjectTaskPrefix + ">"},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("tasks: follow %s: %w", events.TasksStream, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(512))
	if err != nil {
		return fmt.Errorf("tasks: follow %s: %w", events.TasksStream, err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("tasks: follow %s: %w", events.TasksStream, err)
		}
		b.apply(msg)
	}
}

func (b *Board) apply(msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		b.logger.Warn("task message without metadata", "subject", msg.Subject(), "err", err)
		return
	}
	seq := meta.Sequence.Stream
	repo := strings.TrimPrefix(msg.Subject(), events.SubjectTaskPrefix)
	ev, derr := events.Decode(msg.Data())
	te, ok := ev.(events.TaskEvent)
	if derr == nil && !ok {
		derr = fmt.Errorf("not a task event: %s", ev.EventKind())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.repoLocked(repo)
	r.seq = seq
	b.applied = seq
	close(b.changed)
	b.changed = make(chan struct{})
	if derr != nil {
		// The sequence still moves, so writers expect it; the event itself
		// changes nothing.
		b.logger.Warn("undecodable task event", "subject", msg.Subject(), "stream_seq", seq, "err", derr)
		return
	}
	switch te.Op {
	case events.TaskDeleted:
		delete(r.tasks, te.Task.ID)
	default:
		r.tasks[te.Task.ID] = te.Task
	}
}

func (b *Board) repoLocked(repo string) *repoState {
	r := b.repos[repo]
	if r == nil {
		r = &repoState{tasks: make(map[string]events.Task)}
		b.repos[repo] = r
	}
	return r
}

// Applied returns the last stream sequence the Board has applied.
func (b *Board) Applied() uint64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.applied
}

// WaitSeq blocks until the Board has applied stream sequence seq, ctx ends
// (its error is returned) or Run ends (ErrClosed).
func (b *Board) WaitSeq(ctx context.Context, seq uint64) error {
	for {
		b.mu.RLock()
		applied, ch, done := b.applied, b.changed, b.done
		b.mu.RUnlock()
		if applied >= seq {
			return nil
		}
		if done {
			return ErrClosed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Sync waits until the Board has applied everything the stream held when
// Sync was called: after it, reads see every write acknowledged before.
func (b *Board) Sync(ctx context.Context) error {
	s, err := b.js.Stream(ctx, events.TasksStream)
	if err != nil {
		return fmt.Errorf("tasks: stream %s: %w", events.TasksStream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("tasks: stream %s: %w", events.TasksStream, err)
	}
	return b.WaitSeq(ctx, info.State.LastSeq)
}

// Repos returns the repos that have a task log, sorted.
func (b *Board) Repos() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return slices.Sorted(maps.Keys(b.repos))
}

// Task returns one task of repo.
func (b *Board) Task(repo, id string) (events.Task, bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	r := b.repos[repo]
	if r == nil {
		return events.Task{}, false
	}
	t, ok := r.tasks[id]
	return t, ok
}

// View calls fn with repo's tasks by id under a read lock: fn must not
// keep or modify the map, and should be quick, since it holds up the feed.
func (b *Board) View(repo string, fn func(tasks map[string]events.Task)) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var m map[string]events.Task
	if r := b.repos[repo]; r != nil {
		m = r.tasks
	}
	fn(m)
}

// Tasks returns a copy of repo's tasks by id.
func (b *Board) Tasks(repo string) map[string]events.Task {
	var out map[string]events.Task
	b.View(repo, func(m map[string]events.Task) { out = maps.Clone(m) })
	if out == nil {
		out = map[string]events.Task{}
	}
	return out
}

// Append publishes ev after validate accepts the repo's current tasks
// (ev.Repo's, by id; validate must not keep or modify the map). See Mutate
// for the retries and the errors.
func (b *Board) Append(ctx context.Context, ev events.TaskEvent, validate func(current map[string]events.Task) error) (uint64, error) {
	return b.Mutate(ctx, ev.Repo, func(current map[string]events.Task) (events.TaskEvent, error) {
		if validate != nil {
			if err := validate(current); err != nil {
				return events.TaskEvent{}, err
			}
		}
		return ev, nil
	})
}

// Mutate builds an event from repo's current tasks and publishes it,
// expecting the repo's subject not to have moved since those tasks were
// read. If it has, the Board catches up and build runs again on the new
// state, up to MaxAttempts times with a growing pause; so an update computed
// from stale state is never written, and a check (a dependency exists, no
// cycle) holds on the state the event is appended to. build must not keep or
// modify the map.
//
// It returns the event's stream sequence once the Board has applied it, so
// reads after Mutate see the write. An error from build is returned as is;
// ErrConflict if every attempt lost the race; otherwise a publish error.
func (b *Board) Mutate(ctx context.Context, repo string, build func(current map[string]events.Task) (events.TaskEvent, error)) (uint64, error) {
	if err := events.ValidateRepo(repo); err != nil {
		return 0, err
	}
	pause := 2 * time.Millisecond
	for attempt := 0; attempt < MaxAttempts; attempt++ {
		var (
			ev  events.TaskEvent
			seq uint64
			err error
		)
		// The tasks and the sequence are read under one lock, so the
		// publish expects exactly the state build saw.
		b.mu.RLock()
		current := map[string]events.Task{}
		if r := b.repos[repo]; r != nil {
			current, seq = r.tasks, r.seq
		}
		ev, err = build(current)
		b.mu.RUnlock()
		if err != nil {
			return 0, err
		}
		ev.Repo = repo
		ack, err := b.publish(ctx, ev, seq)
		if err == nil {
			if err := b.WaitSeq(ctx, ack.Sequence); err != nil {
				return ack.Sequence, err
			}
			return ack.Sequence, nil
		}
		if !isWrongLastSequence(err) {
			return 0, err
		}
		b.logger.Debug("task log moved; retrying", "repo", repo, "expected_seq", seq, "attempt", attempt+1)
		if err := b.Sync(ctx); err != nil {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(pause):
		}
		pause *= 2
	}
	return 0, fmt.Errorf("%w: repo %s, %d attempts", ErrConflict, repo, MaxAttempts)
}

func (b *Board) publish(ctx context.Context, ev events.TaskEvent, expect uint64) (*jetstream.PubAck, error) {
	data, err := events.Encode(ev)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	msg := nats.NewMsg(events.TaskSubject(ev.Repo))
	msg.Data = data
	// The id names the content and the sequence it follows: a retried
	// publish of the same attempt is deduplicated, a new attempt is not.
	msg.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("%s/%s@%d:%s", ev.Repo, ev.Task.ID, expect, hex.EncodeToString(sum[:8])))
	msg.Header.Set(events.HeaderKind, string(ev.EventKind()))
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	ack, err := b.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(expect))
	if err != nil {
		return nil, fmt.Errorf("tasks: publish %s: %w", msg.Subject, err)
	}
	if ack.Duplicate {
		b.logger.Debug("task event was a duplicate", "subject", msg.Subject, "stream_seq", ack.Sequence)
	}
	return ack, nil
}

func isWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
