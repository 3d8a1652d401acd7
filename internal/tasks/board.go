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
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Stream is the narrow part of JetStream a Board needs: an ordered
// consumer to follow the log, the stream's info to know how far the log
// goes, and publishing.
type Stream interface {
	OrderedConsumer(ctx context.Context, stream string, cfg jetstream.OrderedConsumerConfig) (jetstream.Consumer, error)
	Stream(ctx context.Context, stream string) (jetstream.Stream, error)
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
	PublishMsgAsync(msg *nats.Msg, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error)
}

// ErrConflict is returned by Mutate and Append when the repo's log kept
// moving under every attempt until the context's deadline: writers on
// other edges won every race.
var ErrConflict = errors.New("tasks: task log changed during every attempt")

// ErrClosed is returned by waits when the Board's Run has ended.
var ErrClosed = errors.New("tasks: board stopped")

// maxPause bounds the pause between two attempts of one mutation.
const maxPause = 50 * time.Millisecond

// DefaultMutateTimeout bounds Mutate and Append when their context has no
// deadline.
const DefaultMutateTimeout = 30 * time.Second

type repoState struct {
	tasks map[string]events.Task
	// seq is the stream sequence of the last message on the repo's
	// subject: what the next publish expects.
	seq uint64
	// order is the tasks in creation order (then id), copies kept
	// contiguous so listing neither sorts nor looks up; pos indexes it by
	// id. Stale when dirty, and rebuilt by the next reader.
	order []events.Task
	pos   map[string]int
	dirty bool
	// requests are the sequences of the events the log holds for a
	// client's request id. Only the sequence: the event is read back from
	// the log for the rare retry, where keeping every event made the
	// board's heap grow by 2 KiB per write for as long as the daemon ran
	// (48 MB after 20 s of 64 agents writing), and the garbage
	// collector's passes over it held up the writes themselves.
	requests map[string]uint64
	// othersWrote is when the follower last applied an event another
	// writer made (another edge's board, a card's).
	othersWrote time.Time
	// atPath holds the ids of the tasks whose card is at each path (one,
	// but for a card whose id was edited): the indexer asks it for every
	// card it indexes, where a pass over every task made writing tasks
	// slower the more there were.
	atPath map[string][]string
}

func (r *repoState) placeLocked(id, oldPath, newPath string) {
	if oldPath == newPath {
		return
	}
	if oldPath != "" {
		ids := slices.DeleteFunc(r.atPath[oldPath], func(x string) bool { return x == id })
		if len(ids) == 0 {
			delete(r.atPath, oldPath)
		} else {
			r.atPath[oldPath] = ids
		}
	}
	if newPath != "" {
		if r.atPath == nil {
			r.atPath = make(map[string][]string)
		}
		r.atPath[newPath] = append(r.atPath[newPath], id)
	}
}

func compareTasks(x, y *events.Task) int {
	if c := x.Created.Compare(y.Created); c != 0 {
		return c
	}
	return strings.Compare(x.ID, y.ID)
}

// noteLocked keeps order up to date after t replaced old (existed) or was
// added: appends and updates in place are the common cases and stay cheap.
func (r *repoState) noteLocked(t, old events.Task, existed bool) {
	switch {
	case r.dirty:
	case existed && old.Created.Equal(t.Created):
		r.order[r.pos[t.ID]] = t
	case !existed && (len(r.order) == 0 || compareTasks(&r.order[len(r.order)-1], &t) < 0):
		r.pos[t.ID] = len(r.order)
		r.order = append(r.order, t)
	default:
		r.dirty = true
	}
}

func (r *repoState) rebuildOrderLocked() {
	if !r.dirty {
		return
	}
	r.order = slices.AppendSeq(r.order[:0], maps.Values(r.tasks))
	slices.SortFunc(r.order, func(x, y events.Task) int { return compareTasks(&x, &y) })
	clear(r.pos)
	for i, t := range r.order {
		r.pos[t.ID] = i
	}
	r.dirty = false
}

// Board is the materialised task state of every repo. Run feeds it; it is
// safe for concurrent use.
type Board struct {
	js     Stream
	logger *slog.Logger

	mu      sync.RWMutex
	repos   map[string]*repoState
	applied uint64 // last stream sequence applied
	// resets counts the times the board dropped its tasks to replay a
	// log from its start (checkLog).
	resets uint64
	// version counts the changes to the tasks, whether the follower or
	// a Mutate applied them: answers computed from the board are
	// fresh while it holds.
	version uint64
	changed chan struct{} // closed and replaced whenever applied moves
	done    bool
	// ready is closed once applied reaches readyAt, the stream's last
	// sequence when Run started, which readyKnown says Run has read.
	ready      chan struct{}
	readyAt    uint64
	readyKnown bool
	// logID is the incarnation of the log the board holds
	// (bus.StreamState.ID), "" before Run read it.
	logID string
	// LogCheck is how often a following board compares the log with the
	// incarnation it holds; default 5 s. Set it before Run.
	LogCheck time.Duration
	// recheck asks the follower to compare the log now (Sync found it
	// replaced).
	recheck chan struct{}
	// writers holds, per repo, the *repoWriter that makes the writes
	// through this Board one after another.
	writers sync.Map
	// chainable is true once the log is known to have one replica (read
	// at start and at every log check): writes queued together are then
	// chained; until then, and on a replicated log, they are made one at
	// a time. On a replicated stream nats-server checks
	// Nats-Expected-Last-Msg-Id only when it applies the entry, and a
	// mismatch there is a "critical write error" that stops the stream on
	// every replica (v2.15.2: TestConcurrentWritesOnAReplicatedLog with
	// chains on, the log left without a leader): a chain broken by another
	// writer would take the task log down.
	chainable bool
	// batchable is true when the log is chainable and its config allows
	// atomic batches: a server older than them drops the setting, and
	// would store a batch's events one by one, the later ones without
	// their expectation.
	batchable bool
	// atomicOff is set once the server refused an atomic batch.
	atomicOff atomic.Bool
	// writer names this board in its events' HeaderTaskWriter.
	writer string
	// atomicRounds counts the rounds stored as atomic batches.
	atomicRounds atomic.Int64
	// costs chooses between an atomic batch and a chain for the rounds
	// that may go either way.
	costs roundCosts
	// beforeAtomicCommit, when set (by tests), is called with the task id
	// of a batch's first event just before the batch's commit is sent.
	beforeAtomicCommit func(firstTask string)
	// durable, if set, runs before a write is answered (SetDurable).
	durable func(context.Context) error
}

// NewBoard returns an empty Board over js. A nil logger discards.
func NewBoard(js Stream, logger *slog.Logger) *Board {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Board{js: js, logger: logger, repos: make(map[string]*repoState), changed: make(chan struct{}), ready: make(chan struct{}), LogCheck: 5 * time.Second, recheck: make(chan struct{}, 1), writer: uuid.NewString()}
}

// Run follows the CUE_TASKS stream from its start with an ordered consumer
// and applies every event, until ctx ends; then it returns nil. If following
// fails (the stream is unavailable, the connection closed), Run logs it and
// resumes after the last applied event, with a growing pause.
func (b *Board) Run(ctx context.Context) error {
	defer func() {
		b.mu.Lock()
		b.done = true
		close(b.changed)
		b.changed = make(chan struct{})
		b.mu.Unlock()
	}()
	pause := 100 * time.Millisecond
	for {
		// The log's identity first: its end, read for readiness, is of
		// the log the board will follow, and the board becomes ready only
		// once it holds that one.
		err := b.checkLog(ctx)
		if err == nil {
			err = b.readLogEnd(ctx)
		}
		from := b.Applied()
		if err == nil {
			err = b.follow(ctx, from)
		}
		if ctx.Err() != nil {
			return nil
		}
		if b.Applied() > from {
			pause = 100 * time.Millisecond
		}
		b.logger.Warn("following the task log failed; resuming", "stream_seq", b.Applied(), "retry_in", pause, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// readLogEnd learns how far the log went when Run started, or when the
// log was found replaced (unreadyLocked), so Ready can say when the board
// has caught up with it.
func (b *Board) readLogEnd(ctx context.Context) error {
	b.mu.RLock()
	known := b.readyKnown
	b.mu.RUnlock()
	if known {
		return nil
	}
	s, err := b.logStream(ctx)
	if err != nil {
		return fmt.Errorf("tasks: stream %s: %w", events.TasksStream, err)
	}
	info := s.CachedInfo()
	end := lastMessage(ctx, s, info)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.readyAt, b.readyKnown = end, true
	b.chainable = info.Config.Replicas == 1
	b.batchable = b.chainable && info.Config.AllowAtomicPublish
	if b.logID == "" {
		b.learnLogLocked(bus.StateOf(info).ID())
	}
	b.markReadyLocked()
	return nil
}

// errLogReplaced stops follow when the log is not the one the board holds.
var errLogReplaced = errors.New("tasks: the task log was replaced")

// checkLog compares the log with the incarnation the board holds and, when
// it is another one or ends before what the board applied, drops every
// task so that follow replays the log from its start: a board that kept
// them would answer for tasks the log no longer has and wait for the new
// log to pass the old one's sequence. A log it cannot read passes: follow
// reports the outage.
//
// The tasks are dropped only when the divergence is confirmed
// (bus.ConfirmDiverged): in a cluster one answer can be stale.
func (b *Board) checkLog(ctx context.Context) error {
	var now bus.StreamState
	why := bus.ConfirmDiverged(ctx, func() string {
		s, err := b.logStream(ctx)
		if err != nil {
			return ""
		}
		info := s.CachedInfo()
		now = bus.StateOf(info)
		b.mu.Lock()
		defer b.mu.Unlock()
		// A log scaled up under a running board stops being chained
		// within one check.
		b.chainable = info.Config.Replicas == 1
		b.batchable = b.chainable && info.Config.AllowAtomicPublish
		if b.logID == "" {
			b.learnLogLocked(now.ID())
		}
		why := now.Diverged(b.logID, b.applied)
		if why != "" {
			// Suspected: reads wait for the confirmation rather than
			// answer from a log that may be gone.
			b.unreadyLocked()
		}
		return why
	})
	if why == "" {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logID = now.ID()
	held := 0
	for _, r := range b.repos {
		held += len(r.tasks)
	}
	b.logger.Warn("the task log was replaced; dropping the board's tasks and replaying the log from its start", "found", why, "tasks_dropped", held)
	b.unreadyLocked()
	b.repos = make(map[string]*repoState)
	b.applied = 0
	b.resets++
	b.version++
	close(b.changed)
	b.changed = make(chan struct{})
	return nil
}

func (b *Board) markReadyLocked() {
	if !b.readyKnown || b.applied < b.readyAt {
		return
	}
	select {
	case <-b.ready:
	default:
		close(b.ready)
	}
}

// Replay says how far the board is in replaying the log: the last
// sequence it applied, and the log's end it waits for before it is ready,
// which endKnown says Run has read (not yet, while the log's state goes
// unanswered).
func (b *Board) Replay() (applied, end uint64, endKnown bool) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.applied, b.readyAt, b.readyKnown
}

// Ready is closed once the board has applied the whole log as it stood
// when Run started: before, reads may miss tasks. A log found replaced
// makes the board unready again (a new channel) until it has replayed
// the new log as it stood then, or found that it was not replaced.
func (b *Board) Ready() <-chan struct{} {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.ready
}

// Recheck has the board compare the log with the incarnation it holds
// now, rather than at its next LogCheck: call it when the server
// announces that the log was created, deleted or restored
// (bus.OnStreamReplaced).
func (b *Board) Recheck() {
	select {
	case b.recheck <- struct{}{}:
	default:
	}
}

// unreadyLocked makes the board unready until Run has read the log's end
// again and applied it: reads then wait rather than answer from a log
// that one read found replaced, while the replacement is confirmed and
// the new log replayed. The end is read again even when the board was
// not yet ready: the one it waited for was the replaced log's.
func (b *Board) unreadyLocked() {
	b.readyKnown = false
	select {
	case <-b.ready:
		b.ready = make(chan struct{})
	default:
	}
}

// follow applies the task log after stream sequence after until ctx ends
// or the consumer fails.
func (b *Board) follow(ctx context.Context, after uint64) error {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.SubjectTaskPrefix + ">"},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	}
	if after > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, after+1
	}
	cons, err := b.js.OrderedConsumer(ctx, events.TasksStream, cfg)
	if err != nil {
		return fmt.Errorf("tasks: follow %s: %w", events.TasksStream, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(512))
	if err != nil {
		return fmt.Errorf("tasks: follow %s: %w", events.TasksStream, err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	// A log replaced under the consumer delivers nothing more: look at it
	// now and then, and stop following when it is another one.
	replaced := make(chan struct{})
	watchCtx, endWatch := context.WithCancel(ctx)
	defer endWatch()
	go bus.CheckEveryAndWhenAnnounced(watchCtx, b.LogCheck, b.recheck, func() (stop, unreadable bool) {
		isReplaced, unreadable := b.logReplaced(watchCtx)
		if !isReplaced {
			if !unreadable {
				// Made unready by a suspicion that this check does not
				// bear out (Sync): the log's end is read again here, as
				// Run would read it, or the board would wait for it
				// for as long as it follows this log.
				_ = b.readLogEnd(watchCtx)
			}
			return false, unreadable
		}
		b.mu.Lock()
		b.unreadyLocked()
		b.mu.Unlock()
		close(replaced)
		it.Stop()
		return true, false
	})
	for {
		msg, err := it.Next()
		if err != nil {
			select {
			case <-replaced:
				return fmt.Errorf("tasks: follow %s: %w", events.TasksStream, errLogReplaced)
			default:
			}
			return fmt.Errorf("tasks: follow %s: %w", events.TasksStream, err)
		}
		b.apply(msg)
	}
}

// logReplaced reports whether the log is now another incarnation than the
// board's, or ends before what it applied; unreadable, that it could not
// be read.
func (b *Board) logReplaced(ctx context.Context) (replaced, unreadable bool) {
	applied := b.Applied() // before the log's state, as in Sync
	s, err := b.logStream(ctx)
	if err != nil {
		return false, true
	}
	info := s.CachedInfo()
	b.mu.RLock()
	defer b.mu.RUnlock()
	return bus.StateOf(info).Diverged(b.logID, applied) != "", false
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
	if seq <= b.applied {
		return // redelivered after a resume; applied already
	}
	r := b.repoLocked(repo)
	if msg.Headers().Get(events.HeaderTaskWriter) != b.writer {
		r.othersWrote = time.Now()
	}
	b.applied = seq
	b.version++
	b.markReadyLocked()
	close(b.changed)
	b.changed = make(chan struct{})
	if seq <= r.seq {
		return // applied already by the Mutate that wrote it
	}
	r.seq = seq
	if derr != nil {
		// The sequence still moves, so writers expect it; the event itself
		// changes nothing.
		b.logger.Warn("undecodable task event", "subject", msg.Subject(), "stream_seq", seq, "err", derr)
		return
	}
	r.applyLocked(te, seq)
}

// applyLocked applies te, the event at seq of r's subject.
func (r *repoState) applyLocked(te events.TaskEvent, seq uint64) {
	if te.RequestID != "" {
		if r.requests == nil {
			r.requests = map[string]uint64{}
		}
		if _, seen := r.requests[te.RequestID]; !seen {
			r.requests[te.RequestID] = seq
		}
	}
	switch te.Op {
	case events.TaskDeleted:
		if old, ok := r.tasks[te.Task.ID]; ok {
			delete(r.tasks, te.Task.ID)
			r.placeLocked(old.ID, old.Path, "")
			r.dirty = true
		}
	default:
		old, existed := r.tasks[te.Task.ID]
		r.noteLocked(te.Task, old, existed)
		r.tasks[te.Task.ID] = te.Task
		r.placeLocked(te.Task.ID, old.Path, te.Task.Path)
	}
}

func (b *Board) repoLocked(repo string) *repoState {
	r := b.repos[repo]
	if r == nil {
		r = &repoState{tasks: make(map[string]events.Task), pos: make(map[string]int)}
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
	// The position first: read after the log's state, it may include
	// events applied since, past the end that state reports. With it,
	// the log it is a position in, and how often the board dropped its
	// tasks to replay a log (checkLog).
	b.mu.RLock()
	applied, logID, resets := b.applied, b.logID, b.resets
	b.mu.RUnlock()
	s, err := b.logStream(ctx)
	if err != nil {
		return fmt.Errorf("tasks: stream %s: %w", events.TasksStream, err)
	}
	info := s.CachedInfo()
	now := bus.StateOf(info)
	b.mu.Lock()
	// A board that began replaying a log since the position was read
	// holds it already: its position read before means nothing in it,
	// and calling it replaced again would leave the board unready while
	// its follower went on with the log.
	replaced := logID != "" && b.logID == logID && b.resets == resets && now.Diverged(logID, applied) != ""
	if replaced {
		b.unreadyLocked()
	}
	b.mu.Unlock()
	if replaced {
		// Waiting for this log to pass the old one's sequence would
		// return at once, on the old log's tasks: have the follower
		// replay the new one, and wait for that.
		b.Recheck()
		if err := b.waitLog(ctx, now.ID()); err != nil {
			return err
		}
	}
	return b.WaitSeq(ctx, lastMessage(ctx, s, info))
}

// lastMessage is the sequence of the log's last message (bus.LastMessage).
// It asks for no longer than logAsk: unanswered, it is the log's last
// sequence.
func lastMessage(ctx context.Context, s jetstream.Stream, info *jetstream.StreamInfo) uint64 {
	ctx, cancel := context.WithTimeout(ctx, logAsk)
	defer cancel()
	return bus.LastMessage(ctx, s, info, events.SubjectTaskPrefix+">")
}

// logAsk bounds one request about the log. In a cluster a request that
// reaches no leader (the stream being created again, an election) gets no
// answer at all: waiting for the caller's whole deadline held every write
// of the repo queued behind it for that long (30 s for the indexer's).
const logAsk = 2 * time.Second

// publishAsk bounds one publish of a task event, asked again with the same
// message id until the caller's deadline: a leader election takes ~6 s.
const publishAsk = 4 * time.Second

// logStream reads the log's state, asking again each logAsk that passes
// unanswered, until ctx ends.
func (b *Board) logStream(ctx context.Context) (jetstream.Stream, error) {
	unanswered := 0
	return untilAnswered(ctx, logAsk, func(ctx context.Context) (jetstream.Stream, error) {
		return b.js.Stream(ctx, events.TasksStream)
	}, func() {
		unanswered++
		// An election is over in ~6 s: longer, say so where it is seen.
		if unanswered%logUnansweredWarnEvery == 0 {
			b.logger.Warn("the task log's state goes unanswered; asking again", "for", time.Duration(unanswered)*logAsk)
			return
		}
		b.logger.Debug("the task log's state went unanswered; asking again", "after", logAsk)
	})
}

// logUnansweredWarnEvery is how many unanswered asks in a row (of logAsk
// each) logStream warns after, and again after as many more.
const logUnansweredWarnEvery = 5

// untilAnswered calls ask with a context that ends after every at most,
// and again, after calling unanswered, each time that context ends with
// no answer while ctx goes on; it returns ask's first answer, or its error
// once ctx ends.
func untilAnswered[T any](ctx context.Context, every time.Duration, ask func(context.Context) (T, error), unanswered func()) (T, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, every)
		v, err := ask(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return v, err
		}
		unanswered()
	}
}

// waitLog blocks until the board holds the log incarnation id.
func (b *Board) waitLog(ctx context.Context, id string) error {
	return b.waitLogWhere(ctx, func(have string) bool { return have == id }, "to replay the new task log")
}

// learnLogLocked records id, the incarnation of the log Run found at its
// first look, and wakes the writes waiting for it (waitLogKnown).
func (b *Board) learnLogLocked(id string) {
	b.logID = id
	close(b.changed)
	b.changed = make(chan struct{})
}

// waitLogKnown blocks until Run has read which incarnation of the log the
// board follows. A write made before that would be applied to the board
// with no incarnation to tie it to: were the log created again before
// Run's first look, the board would take the new log for the one it
// wrote to, and pass over the new log's events up to the sequence its own
// writes reached.
func (b *Board) waitLogKnown(ctx context.Context) error {
	return b.waitLogWhere(ctx, func(have string) bool { return have != "" }, "to read the task log")
}

func (b *Board) waitLogWhere(ctx context.Context, holds func(logID string) bool, what string) error {
	for {
		b.mu.RLock()
		have, ch, done := b.logID, b.changed, b.done
		b.mu.RUnlock()
		switch {
		case holds(have):
			return nil
		case done:
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("tasks: waiting for the board %s: %w", what, ctx.Err())
		}
	}
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

// AtPath returns the tasks of repo whose card is at path, by id.
func (b *Board) AtPath(repo, path string) []events.Task {
	b.mu.RLock()
	defer b.mu.RUnlock()
	r := b.repos[repo]
	if r == nil {
		return nil
	}
	var out []events.Task
	for _, id := range r.atPath[path] {
		out = append(out, r.tasks[id])
	}
	slices.SortFunc(out, func(x, y events.Task) int { return strings.Compare(x.ID, y.ID) })
	return out
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

// Ordered calls fn with repo's tasks in creation order (ties by id) until
// fn returns false, under a read lock: fn must not keep or modify t and
// should be quick. list_tasks uses it to list without sorting.
func (b *Board) Ordered(repo string, fn func(t *events.Task) bool) {
	var r *repoState
	for {
		b.mu.RLock()
		r = b.repos[repo]
		if r == nil || !r.dirty {
			break // holding the read lock
		}
		b.mu.RUnlock()
		b.mu.Lock()
		r.rebuildOrderLocked()
		b.mu.Unlock()
	}
	defer b.mu.RUnlock()
	if r == nil {
		return
	}
	for i := range r.order {
		if !fn(&r.order[i]) {
			return
		}
	}
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
// read. If it has (another edge wrote), the Board catches up and build
// runs again on the new state, with a growing, jittered pause, until ctx's
// deadline; so an update computed from stale state is never written, and a
// check (a dependency exists, no cycle) holds on the state the event is
// appended to. Writes through one Board to one repo never race each
// other: they are made in the order asked, and those that queue while one
// is being made are published together as a chain (writeRound), each
// built on the state the ones before it leave. build must not keep or
// modify the map.
//
// When build fails, Mutate first catches up with the stream and tries once
// more, so a lagging board does not refuse what the log allows (a task
// another edge just created). It returns the event's stream sequence once
// the Board has applied it, so reads after Mutate see the write. An error
// from build on the caught-up state is returned as is; ErrConflict if
// every attempt lost the race until the deadline; otherwise a publish
// error.
func (b *Board) Mutate(ctx context.Context, repo string, build func(current map[string]events.Task) (events.TaskEvent, error)) (uint64, error) {
	seq, _, err := b.MutateRequest(ctx, repo, "", build)
	return seq, err
}

// MutateRequest is Mutate for a client's request: when the repo's log
// already holds an event made for requestID (a retry of a call whose
// answer was lost), nothing is built or written, and that event is
// returned as prior with its sequence. An empty requestID is Mutate.
func (b *Board) MutateRequest(ctx context.Context, repo, requestID string, build func(current map[string]events.Task) (events.TaskEvent, error)) (seq uint64, prior *events.TaskEvent, err error) {
	if err := events.ValidateRepo(repo); err != nil {
		return 0, nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultMutateTimeout)
		defer cancel()
	}
	if err := b.waitLogKnown(ctx); err != nil {
		return 0, nil, err
	}
	req := &writeReq{ctx: ctx, requestID: requestID, build: build, done: make(chan writeResult, 1)}
	v, _ := b.writers.LoadOrStore(repo, &repoWriter{})
	w := v.(*repoWriter)
	w.mu.Lock()
	w.queue = append(w.queue, req)
	lead := !w.running
	w.running = true
	w.mu.Unlock()
	if lead {
		go b.drain(repo, w)
	}
	// Every request is answered: written, refused, or found past its
	// deadline before it was built.
	r := <-req.done
	if r.err == nil && b.durable != nil {
		// Answered only once the write would survive a power cut; a
		// retry with the same request id finds it if this fails.
		if err := b.durable(ctx); err != nil {
			return 0, nil, fmt.Errorf("tasks: make the write durable: %w", err)
		}
	}
	if r.err == nil && r.retried {
		prior, err := b.eventAt(ctx, r.seq)
		return r.seq, prior, err
	}
	return r.seq, nil, r.err
}

// eventAt reads back the task event at seq: the event a retried request
// made.
func (b *Board) eventAt(ctx context.Context, seq uint64) (*events.TaskEvent, error) {
	st, err := b.logStream(ctx)
	if err != nil {
		return nil, fmt.Errorf("tasks: read the event of a retried request: %w", err)
	}
	raw, err := st.GetMsg(ctx, seq)
	if err != nil {
		return nil, fmt.Errorf("tasks: read the event of a retried request at %s sequence %d: %w", events.TasksStream, seq, err)
	}
	ev, err := events.Decode(raw.Data)
	if err != nil {
		return nil, fmt.Errorf("tasks: the event of a retried request at %s sequence %d: %w", events.TasksStream, seq, err)
	}
	te, ok := ev.(events.TaskEvent)
	if !ok {
		return nil, fmt.Errorf("tasks: %s sequence %d holds a %s event, not a task event", events.TasksStream, seq, ev.EventKind())
	}
	return &te, nil
}

// SetDurable has every write wait for durable before it is answered
// (bus.Conn.Durable). Set it before Run.
func (b *Board) SetDurable(durable func(context.Context) error) { b.durable = durable }

// writeOne makes one write on its own: build on the board's state,
// publish expecting the repo's subject where that state left it, and on a
// lost race catch up and build again, until ctx's deadline.
func (b *Board) writeOne(ctx context.Context, repo, requestID string, build func(current map[string]events.Task) (events.TaskEvent, error)) (seq uint64, retried bool, err error) {
	pause := time.Millisecond
	synced := false
	for attempt := 1; ; attempt++ {
		var (
			ev     events.TaskEvent
			expect uint64
			err    error
		)
		// The tasks and the sequence are read under one lock, so the
		// publish expects exactly the state build saw.
		b.mu.RLock()
		current := map[string]events.Task{}
		r := b.repos[repo]
		if r != nil {
			current, expect = r.tasks, r.seq
		}
		if r != nil && requestID != "" {
			if seq, ok := r.requests[requestID]; ok {
				b.mu.RUnlock()
				return seq, true, nil
			}
		}
		ev, err = build(current)
		b.mu.RUnlock()
		if err != nil {
			// This board may lag the stream (a task another edge just
			// created): refuse only on the state of the whole log.
			if synced {
				return 0, false, err
			}
			if err := b.Sync(ctx); err != nil {
				return 0, false, err
			}
			synced = true
			continue
		}
		ev.Repo, ev.RequestID = repo, requestID
		msg, _, err := b.taskMsg(ev, expect, 0)
		if err != nil {
			return 0, false, err
		}
		ack, err := b.publish(ctx, msg, jetstream.WithExpectLastSequencePerSubject(expect))
		if err == nil {
			return b.settle(ctx, repo, requestID, ev, expect, ack)
		}
		if !bus.WrongLastSequence(err) {
			return 0, false, err
		}
		b.logger.Debug("task log moved; retrying", "repo", repo, "expected_seq", expect, "attempt", attempt)
		if err := b.Sync(ctx); err != nil {
			if ctx.Err() != nil {
				return 0, false, fmt.Errorf("%w: repo %s, %d attempts", ErrConflict, repo, attempt)
			}
			return 0, false, err
		}
		synced = true
		// Jittered, so that edges that lost together do not retry
		// together.
		wait := pause/2 + time.Duration(rand.Int64N(int64(pause)))
		select {
		case <-ctx.Done():
			return 0, false, fmt.Errorf("%w: repo %s, %d attempts", ErrConflict, repo, attempt)
		case <-time.After(wait):
		}
		pause = min(2*pause, maxPause)
	}
}

// applyOwn applies ev, just written at seq right after expect on repo's
// subject, unless the follower has moved the repo on already (it then has
// applied ev, or will); it reports whether it did.
func (b *Board) applyOwn(repo string, ev events.TaskEvent, expect, seq uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.repoLocked(repo)
	if r.seq != expect {
		return false
	}
	r.seq = seq
	r.applyLocked(ev, seq)
	b.version++
	return true
}

// Version counts the changes the Board has applied: it grows with every
// one, whether the follower or a Mutate applied it.
func (b *Board) Version() uint64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.version
}

// settle finishes a write JetStream accepted at ack, of ev built on the
// repo's state at sequence expect: it returns the sequence to answer with
// once the board holds it (for a request another edge wrote first, that
// request's event's, and retried). When the log holds exactly this event right after
// expect, the board applies it itself, and the next write need not wait
// for the follower to deliver it.
func (b *Board) settle(ctx context.Context, repo, requestID string, ev events.TaskEvent, expect uint64, ack *jetstream.PubAck) (seq uint64, retried bool, err error) {
	if !ack.Duplicate && b.applyOwn(repo, ev, expect, ack.Sequence) {
		return ack.Sequence, false, nil
	}
	if err := b.WaitSeq(ctx, ack.Sequence); err != nil {
		return ack.Sequence, false, err
	}
	if ack.Duplicate && requestID != "" {
		// Another edge wrote this request first: what it wrote is the
		// answer.
		b.mu.RLock()
		var seq uint64
		ok := false
		if r := b.repos[repo]; r != nil {
			seq, ok = r.requests[requestID]
		}
		b.mu.RUnlock()
		if ok {
			return seq, true, nil
		}
	}
	return ack.Sequence, false, nil
}

// writeReq is one call of MutateRequest waiting for its repo's writer.
type writeReq struct {
	ctx       context.Context
	requestID string
	build     func(current map[string]events.Task) (events.TaskEvent, error)
	done      chan writeResult // buffered: answered exactly once
}

type writeResult struct {
	seq uint64
	// retried: seq is the event an earlier call of the request made.
	retried bool
	err     error
}

func (q *writeReq) answer(seq uint64, retried bool, err error) {
	q.done <- writeResult{seq, retried, err}
}

// repoWriter makes the writes to one repo through one Board, in the order
// they were asked for. While one round of writes is being made the next
// requests queue, and the next round takes them all: under load a round
// writes many events for the price of about one.
type repoWriter struct {
	mu      sync.Mutex
	queue   []*writeReq
	running bool
}

// maxGroup bounds the events one round publishes chained.
const maxGroup = 128

// drain makes rounds of writes until w's queue is empty.
func (b *Board) drain(repo string, w *repoWriter) {
	for {
		w.mu.Lock()
		n := min(len(w.queue), maxGroup)
		round := slices.Clone(w.queue[:n])
		w.queue = w.queue[n:]
		if n == 0 {
			w.queue, w.running = nil, false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		rest := b.writeRound(repo, round)
		if len(rest) > 0 {
			w.mu.Lock()
			w.queue = append(rest, w.queue...)
			w.mu.Unlock()
		}
	}
}

// writeRound writes a round of requests and returns those still to be
// written, in order, for the next round.
//
// One request is written on its own (writeOne). Several are built one
// after another, each on the state the ones before it leave, and published
// as a chain: the first expects the repo's subject where the board's
// state left it, each next one expects the stream's last message to be
// the one before it (Nats-Expected-Last-Msg-Id). So each event is stored
// right after the event it was built on, or not at all, and JetStream
// takes the chain without a round trip per event. Where the chain breaks
// (another writer's event came between, a build failed, a request was
// already written) the rest goes back to the queue and is built again on
// the state the board then holds.
func (b *Board) writeRound(repo string, round []*writeReq) []*writeReq {
	live := round[:0:0]
	for _, q := range round {
		if q.ctx.Err() != nil {
			q.answer(0, false, fmt.Errorf("%w: repo %s: waited for the writes before it until the deadline", ErrConflict, repo))
			continue
		}
		live = append(live, q)
	}
	if len(live) == 0 {
		return nil
	}
	b.mu.RLock()
	alone := len(live) == 1 || !b.chainable
	batchable := b.batchable
	b.mu.RUnlock()
	if alone {
		q := live[0]
		q.answer(b.writeOne(q.ctx, repo, q.requestID, q.build))
		return live[1:]
	}

	// Build the chain: each build sees the events before it applied. They
	// are applied to the board's own map, under its lock, and taken out
	// again before the lock is released: a copy of a repo's tasks per
	// round cost more than the writes themselves once a repo held
	// thousands.
	type undo struct {
		id  string
		old events.Task
		had bool
	}
	// Sized for the whole round: grown by appends, the events and undos
	// (a task each) were over a quarter of what a round allocated.
	var (
		evs     = make([]events.TaskEvent, 0, len(live))
		members = make([]*writeReq, 0, len(live))
		undos   = make([]undo, 0, len(live))
		expect  uint64
		next    = len(live) // first request not in the chain
	)
	b.mu.Lock()
	r := b.repos[repo]
	scratch := map[string]events.Task{}
	if r != nil {
		scratch, expect = r.tasks, r.seq
	}
	// While others write the repo too, a batch, which is stored whole or
	// not at all and takes longer to stage, would lose to them more often
	// than a chain, which keeps what it stored before the break.
	atomicRound := r == nil || time.Since(r.othersWrote) > othersQuiet
	inChain := map[string]bool{}
	for i, q := range live {
		if q.requestID != "" {
			if r != nil {
				if seq, ok := r.requests[q.requestID]; ok {
					// A retry of a request the log holds: its event is
					// the answer.
					q.answer(seq, true, nil)
					live[i] = nil
					continue
				}
			}
			if inChain[q.requestID] {
				next = i // answered from the log once the chain is applied
				break
			}
			inChain[q.requestID] = true
		}
		ev, err := q.build(scratch)
		if err != nil {
			next = i // writeOne catches up and builds it again
			break
		}
		ev.Repo, ev.RequestID = repo, q.requestID
		old, had := scratch[ev.Task.ID]
		undos = append(undos, undo{ev.Task.ID, old, had})
		if ev.Op == events.TaskDeleted {
			delete(scratch, ev.Task.ID)
		} else {
			scratch[ev.Task.ID] = ev.Task
		}
		evs = append(evs, ev)
		members = append(members, q)
	}
	for i := len(undos) - 1; i >= 0; i-- {
		if u := undos[i]; u.had {
			scratch[u.id] = u.old
		} else {
			delete(scratch, u.id)
		}
	}
	b.mu.Unlock()
	rest := slices.DeleteFunc(slices.Clone(live[next:]), func(q *writeReq) bool { return q == nil })
	if len(members) == 0 {
		if len(rest) == 0 {
			return nil // every one was a retry the log answers
		}
		// The first request cannot open a chain: it goes on its own.
		q := rest[0]
		q.answer(b.writeOne(q.ctx, repo, q.requestID, q.build))
		return rest[1:]
	}

	eitherWay := batchable && atomicRound && len(members) >= minAtomicRound
	if eitherWay && b.costs.batchNext() {
		began := time.Now()
		if acks, ok := b.publishAtomic(repo, evs, expect); ok {
			prevSeq := expect
			for k, q := range members {
				q.answer(b.settle(q.ctx, repo, q.requestID, evs[k], prevSeq, acks[k]))
				prevSeq = acks[k].Sequence
			}
			b.costs.observe(true, len(evs), time.Since(began))
			return rest
		}
		// Not stored (a broken expectation, a retry of a stored round, a
		// server without atomic publish) or unknown (a timeout): the
		// chain below makes the same messages, with the same ids, and
		// sorts out which were stored.
	}

	// The whole chain is published without waiting for each ack, and the
	// answers are read in order.
	began := time.Now()
	futures := make([]jetstream.PubAckFuture, 0, len(members))
	prevID := ""
	for k := range members {
		msg, id, err := b.taskMsg(evs[k], expect, k)
		if err != nil {
			break
		}
		var opts []jetstream.PublishOpt
		if k == 0 {
			opts = append(opts, jetstream.WithExpectLastSequencePerSubject(expect))
		} else {
			msg.Header.Set(jetstream.ExpectedLastMsgIDHeader, prevID)
		}
		f, err := b.js.PublishMsgAsync(msg, opts...)
		if err != nil {
			break
		}
		futures = append(futures, f)
		prevID = id
	}
	if len(futures) == 0 {
		// Not even the first could be sent: it goes on its own.
		first := members[0]
		first.answer(b.writeOne(first.ctx, repo, first.requestID, first.build))
		return append(members[1:], rest...)
	}
	var back []*writeReq
	firstLost := false
	prevSeq := expect
	for k, f := range futures {
		q, ev := members[k], evs[k]
		ack, err := awaitAck(q.ctx, f)
		switch {
		case err == nil:
			q.answer(b.settle(q.ctx, repo, q.requestID, ev, prevSeq, ack))
			if !ack.Duplicate {
				// Stored right after the event before it: the next one
				// follows this sequence.
				prevSeq = ack.Sequence
			}
		case k == 0 && bus.WrongLastSequence(err):
			// Another writer moved the repo on: the first request
			// catches up on its own once the rest of the chain, which
			// broke with it, has answered.
			firstLost = true
		case isWrongLastMsgID(err) || bus.WrongLastSequence(err):
			// Not stored: the chain broke before it.
			back = append(back, q)
		default:
			q.answer(0, false, err)
		}
	}
	back = append(back, members[len(futures):]...)
	if eitherWay && len(back) == 0 && !firstLost {
		// Only a whole chain: a broken one's cost says nothing of a
		// chain's.
		b.costs.observe(false, len(futures), time.Since(began))
	}
	if firstLost {
		first := members[0]
		first.answer(b.writeOne(first.ctx, repo, first.requestID, first.build))
	}
	return append(back, rest...)
}

// minAtomicRound is the smallest round that may be published as one
// atomic batch rather than as a chain. A batch is staged in a store of its
// own before it is committed: about 2 ms whatever its size, against about
// 140 µs per message of a chain, each of which is synced on its own
// (measured with sync_interval always on the development machine). The
// two meet near 16.
const minAtomicRound = 16

// roundCosts chooses how the rounds that may go either way are published,
// by what an event cost lately as part of each. What is cheaper depends on
// the disk more than on the round: the staging store is files created per
// batch, a chain is a sync per event. Files cost 15 µs to create in one
// run of a microbenchmark on the development machine and 330 µs in the
// next; with 64 agents writing, rounds of 16 or more made 2,885-3,579
// writes/s as batches against 2,326-2,518 as chains one day (2026-11-27)
// and 2,130-2,310 against 3,092-3,120 another (2026-12-06). A sync that
// flushes the drive's cache (macOS) makes chains the dearer.
type roundCosts struct {
	mu sync.Mutex
	// batch and chain are the moving averages of the time from publish
	// to answers per event of the rounds published each way; zero until
	// one was.
	batch, chain time.Duration
	rounds       uint64
}

// probeEvery is how often, in rounds that may go either way, the way
// that costs more is tried again, so that its cost follows the disk's.
const probeEvery = 16

// batchNext reports whether the next round that may go either way goes as
// an atomic batch.
func (c *roundCosts) batchNext() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rounds++
	switch {
	case c.batch == 0:
		return true
	case c.chain == 0:
		return false
	}
	cheaper := c.batch <= c.chain
	if c.rounds%probeEvery == 0 {
		return !cheaper
	}
	return cheaper
}

// observe records that a round of n events published as a batch (or a
// chain) was answered in took.
func (c *roundCosts) observe(batch bool, n int, took time.Duration) {
	if n <= 0 {
		return
	}
	per := max(took/time.Duration(n), 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	avg := &c.chain
	if batch {
		avg = &c.batch
	}
	if *avg == 0 {
		*avg = per
		return
	}
	*avg += (per - *avg) / 4
}

// publishAtomic publishes a round's events as one JetStream atomic batch:
// all stored at consecutive sequences after expect, synced once, or none.
// It reports false when the batch was not stored or its fate is unknown;
// after a server answers that atomic publish is off, the board stops
// trying (until restarted).
func (b *Board) publishAtomic(repo string, evs []events.TaskEvent, expect uint64) ([]*jetstream.PubAck, bool) {
	withConn, ok := b.js.(interface{ Conn() *nats.Conn })
	if !ok || b.atomicOff.Load() {
		return nil, false
	}
	nc := withConn.Conn()
	batch := uuid.NewString()
	var commit *nats.Msg
	for k := range evs {
		msg, _, err := b.taskMsg(evs[k], expect, k)
		if err != nil {
			return nil, false
		}
		if k == 0 {
			msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(expect, 10))
		}
		msg.Header.Set(batchIDHeader, batch)
		msg.Header.Set(batchSeqHeader, strconv.Itoa(k+1))
		if k == len(evs)-1 {
			msg.Header.Set(batchCommitHeader, "1")
			commit = msg
			break
		}
		if err := nc.PublishMsg(msg); err != nil {
			return nil, false
		}
	}
	if b.beforeAtomicCommit != nil {
		b.beforeAtomicCommit(evs[0].Task.ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	resp, err := nc.RequestMsgWithContext(ctx, commit)
	if err != nil {
		return nil, false
	}
	var ack struct {
		Stream   string `json:"stream"`
		Sequence uint64 `json:"seq"`
		Batch    string `json:"batch"`
		Count    int    `json:"count"`
		Error    *struct {
			ErrCode int    `json:"err_code"`
			Desc    string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &ack); err != nil {
		return nil, false
	}
	if ack.Error != nil {
		if ack.Error.ErrCode == errCodeAtomicPublishDisabled {
			b.atomicOff.Store(true)
			b.logger.Info("tasks: the task log does not take atomic batches; writes are chained", "repo", repo, "err", ack.Error.Desc)
		}
		return nil, false
	}
	if ack.Batch != batch || ack.Count != len(evs) {
		// A server that ignores batch headers stored the events one by
		// one, only the first with its expectation (batchable keeps such
		// a server from getting here): the chain that follows finds them
		// as duplicates.
		b.atomicOff.Store(true)
		return nil, false
	}
	b.atomicRounds.Add(1)
	acks := make([]*jetstream.PubAck, len(evs))
	first := ack.Sequence - uint64(len(evs)-1)
	for k := range evs {
		acks[k] = &jetstream.PubAck{Stream: ack.Stream, Sequence: first + uint64(k)}
	}
	return acks, true
}

// othersQuiet is how long after another writer's last event a round may
// go as an atomic batch.
const othersQuiet = time.Second

// The atomic batch headers and refusal (nats-server 2.12 and later).
const (
	batchIDHeader                = "Nats-Batch-Id"
	batchSeqHeader               = "Nats-Batch-Sequence"
	batchCommitHeader            = "Nats-Batch-Commit"
	errCodeAtomicPublishDisabled = 10174
)

// awaitAck waits for an asynchronous publish's answer, at most until
// ctx's deadline or the publish's own timeout.
func awaitAck(ctx context.Context, f jetstream.PubAckFuture) (*jetstream.PubAck, error) {
	t := time.NewTimer(publishTimeout)
	defer t.Stop()
	select {
	case ack := <-f.Ok():
		return ack, nil
	case err := <-f.Err():
		return nil, fmt.Errorf("tasks: publish %s: %w", f.Msg().Subject, err)
	case <-ctx.Done():
		return nil, fmt.Errorf("tasks: publish %s: %w (whether it was stored is unknown)", f.Msg().Subject, ctx.Err())
	case <-t.C:
		return nil, fmt.Errorf("tasks: publish %s: no answer within %s (whether it was stored is unknown)", f.Msg().Subject, publishTimeout)
	}
}

// publishTimeout bounds a publish whose context has no deadline.
const publishTimeout = 10 * time.Second

// taskMsg is ev's message on its repo's subject, and its Nats-Msg-Id: the
// id names the content, the sequence of the repo's subject the attempt
// started from and the event's place in its chain (0 for the first), so
// that a retried publish of the same attempt is deduplicated and a new
// attempt is not; a client's request is written once whatever the attempt.
func (b *Board) taskMsg(ev events.TaskEvent, follows uint64, inChain int) (*nats.Msg, string, error) {
	data, err := events.Encode(ev)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	msg := nats.NewMsg(events.TaskSubject(ev.Repo))
	msg.Data = data
	id := fmt.Sprintf("%s/%s@%d:%s", ev.Repo, ev.Task.ID, follows, hex.EncodeToString(sum[:8]))
	if inChain > 0 {
		id = fmt.Sprintf("%s/%s@%d+%d:%s", ev.Repo, ev.Task.ID, follows, inChain, hex.EncodeToString(sum[:8]))
	}
	if ev.RequestID != "" {
		id = fmt.Sprintf("%s/request:%s", ev.Repo, ev.RequestID)
	}
	msg.Header.Set(jetstream.MsgIDHeader, id)
	msg.Header.Set(events.HeaderKind, string(ev.EventKind()))
	msg.Header.Set(events.HeaderTaskWriter, b.writer)
	return msg, id, nil
}

func (b *Board) publish(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, publishTimeout)
		defer cancel()
	}
	// Unanswered, as a cluster's stream is while it elects a leader, the
	// event may be stored. The same message id makes asking again safe: a
	// stored event answers as a duplicate, or, the server checking the
	// expected sequence first, as a wrong last sequence with the event
	// last on its subject.
	unanswered := false
	ack, err := untilAnswered(ctx, publishAsk, func(ctx context.Context) (*jetstream.PubAck, error) {
		return b.js.PublishMsg(ctx, msg, opts...)
	}, func() {
		b.logger.Debug("a task event's publish went unanswered; publishing it again", "subject", msg.Subject, "after", publishAsk)
		unanswered = true
	})
	if err != nil && unanswered && bus.WrongLastSequence(err) {
		if stored := b.storedLast(ctx, msg); stored != nil {
			ack, err = stored, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tasks: publish %s: %w", msg.Subject, err)
	}
	if ack.Duplicate {
		b.logger.Debug("task event was a duplicate", "subject", msg.Subject, "stream_seq", ack.Sequence)
	}
	return ack, nil
}

// storedLast is the answer msg would have had when it is the last event
// on its subject (the same message id): stored by a publish whose answer
// was lost. Nil when it is not, or the log cannot say.
func (b *Board) storedLast(ctx context.Context, msg *nats.Msg) *jetstream.PubAck {
	st, err := b.logStream(ctx)
	if err != nil {
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, logAsk)
	defer cancel()
	raw, err := st.GetLastMsgForSubject(actx, msg.Subject)
	if err != nil || raw.Header.Get(jetstream.MsgIDHeader) != msg.Header.Get(jetstream.MsgIDHeader) {
		return nil
	}
	return &jetstream.PubAck{Stream: events.TasksStream, Sequence: raw.Sequence, Duplicate: true}
}

// errCodeWrongLastMsgID is JetStream's answer to a publish whose
// Nats-Expected-Last-Msg-Id is not the stream's last message.
const errCodeWrongLastMsgID = 10070

func isWrongLastMsgID(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeWrongLastMsgID
}
