package ingest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/core/card"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// SourceFile is the TaskEvent.Source of events derived from card files (by
// the indexer); ingest writes back every other source's events.
const SourceFile = "file"

// tmpDir is where card rewrites are staged before their rename: inside the
// repo (a rename cannot cross file systems) and excluded from ingest.
const tmpDir = ".cuedeck/.cache/tmp"

// followTasks writes task events made through MCP (any source but "file")
// back into card files, until ctx is cancelled. It resumes after the
// position saved in the state, so a restart misses nothing; the writes are
// idempotent, so the replay of events written before a crash is harmless.
func (s *Service) followTasks(ctx context.Context) {
	pause := 100 * time.Millisecond
	for {
		err := s.followTasksOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errTaskLogReplaced) {
			// followTasksOnce says what it found when it starts again.
			continue
		}
		s.logger.Warn("ingest: following the task log failed; retrying", "stream", events.TasksStream, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

type pendingTask struct {
	repo *repo
	seq  uint64
	ev   events.TaskEvent
	// replayed is true for an event of a log write-back found replaced,
	// up to where that log ended then: the cards were written from the
	// log before it, so such an event is written back only where the card
	// is missing or holds an older change (writeTask's onlyNewer).
	replayed bool
}

// errTaskLogReplaced stops one following of the task log when the log is
// found to be another incarnation than the one it started in.
var errTaskLogReplaced = errors.New("ingest: the task log was replaced")

// taskLogCheck is how often card write-back compares the task log with the
// incarnation it follows: an ordered consumer whose stream is deleted and
// created again goes on in the new one at the old one's sequence, and
// would skip what the new log holds below it. New reads it.
var taskLogCheck = 5 * time.Second

func (s *Service) followTasksOnce(ctx context.Context) error {
	byName := map[string]*repo{}
	var subjects []string
	start := uint64(0)
	positions := map[string]uint64{}
	log, err := bus.ReadStream(ctx, s.conn.JS, events.TasksStream)
	if err != nil {
		return err
	}
	recorded, err := s.state.meta(metaTasksStream)
	if err != nil {
		return err
	}
	replayTo, diverged := uint64(0), false
	for i, r := range s.repos {
		byName[r.name] = r
		subjects = append(subjects, events.TaskSubject(r.name))
		pos, err := s.state.taskPos(r.name)
		if err != nil {
			return err
		}
		if why := log.Diverged(recorded, pos); why != "" {
			// Positions in another log mean nothing in this one: write
			// back from its start what is newer than the cards (writes
			// that change nothing are skipped).
			s.logger.Warn("ingest: the task log is not the one card write-back stopped in; writing back from its start what is newer than the cards", "repo", r.name, "found", why)
			pos, replayTo, diverged = 0, log.LastSeq, true
		}
		positions[r.name] = pos
		if i == 0 || pos < start {
			start = pos
		}
	}
	if diverged {
		// The cards are the replaced log's truth: have them compared
		// with, and published into, this one now.
		signal(s.compareNow)
		// What a refill of the log still publishes after this look is
		// the backup's too, not a change made since: replayed, it is
		// written back only over an older card.
		s.waitSettled(ctx, events.TasksStream)
		if settled, err := bus.ReadStream(ctx, s.conn.JS, events.TasksStream); err == nil && settled.ID() == log.ID() {
			replayTo = settled.LastSeq
		}
	}
	if recorded != log.ID() {
		if err := s.state.putTaskPos(positions); err != nil {
			return err
		}
		if err := s.state.setMeta(metaTasksStream, log.ID()); err != nil {
			return err
		}
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverAllPolicy}
	if start > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start+1
	}
	cons, err := s.conn.JS.OrderedConsumer(ctx, events.TasksStream, cfg)
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	var reached atomic.Uint64 // the highest sequence delivered
	reached.Store(start)
	replaced, endWatch := s.watchTaskLog(ctx, log.ID(), &reached, it.Stop)
	defer endWatch()
	// Events are gathered until the consumer has caught up, and then only
	// each task's last one is applied: an MCP change that a later edit of
	// the card superseded is not written over that edit.
	pending := map[string]pendingTask{}
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if replaced.Load() {
				return errTaskLogReplaced
			}
			return err
		}
		meta, err := msg.Metadata()
		if err != nil {
			continue
		}
		seq := meta.Sequence.Stream
		reached.Store(max(reached.Load(), seq))
		name := strings.TrimPrefix(msg.Subject(), events.SubjectTaskPrefix)
		r := byName[name]
		if r != nil && seq > positions[name] {
			ev, err := events.Decode(msg.Data())
			te, ok := ev.(events.TaskEvent)
			switch {
			case err != nil || !ok:
				s.logger.Warn("ingest: undecodable task event", "subject", msg.Subject(), "stream_seq", seq, "err", err)
			default:
				pending[name+"\x00"+te.Task.ID] = pendingTask{repo: r, seq: seq, ev: te, replayed: seq <= replayTo}
			}
		}
		if meta.NumPending > 0 {
			continue
		}
		batch := slices.SortedFunc(func(yield func(pendingTask) bool) {
			for _, p := range pending {
				if !yield(p) {
					return
				}
			}
		}, func(a, b pendingTask) int { return cmp.Compare(a.seq, b.seq) })
		clear(pending)
		// The directories renamed into are synced once per batch, before
		// the position moves past the events written: a batch of cards
		// costs one directory sync, not one per card.
		w := cardWrites{log: log.ID()}
		// keep makes the cards written so far durable and moves the
		// position to upTo.
		keep := func(upTo uint64) error {
			serr := w.sync()
			w.close()
			if serr != nil {
				return serr
			}
			for n := range positions {
				positions[n] = max(positions[n], upTo)
			}
			return s.state.putTaskPos(positions)
		}
		for _, p := range batch {
			if p.ev.Source == SourceFile {
				continue
			}
			if ctx.Err() != nil {
				// Stopping: after a burst of writes a batch holds tens of
				// thousands of cards, and the daemon's stop waited for
				// them all. Each task's last event is in the batch, which
				// is in log order, so the position before this event has
				// the rest written back after the restart.
				return keep(p.seq - 1)
			}
			err := w.writeTask(p.repo, p.ev, p.replayed)
			if err != nil && retryableWrite(err) {
				// Hold the position before this event, so that it and
				// what follows are written back once the disk allows.
				if kerr := keep(p.seq - 1); kerr != nil {
					return kerr
				}
				return fmt.Errorf("writing task %s back into its card in repo %s (the write is retried; free space or fix the disk): %w", p.ev.Task.ID, p.repo.name, err)
			}
			if err != nil {
				s.logger.Warn("ingest: writing a task back into its card failed", "repo", p.repo.name, "id", p.ev.Task.ID, "stream_seq", p.seq, "err", err)
			}
		}
		if err := keep(seq); err != nil {
			return err
		}
	}
}

// watchTaskLog compares the task log with incarnation id every
// s.taskLogCheck, and at once when a comparison of ingest's state found it
// replaced, until end is called. When the log is another incarnation, or
// ends before reached, it stops the consumer (stop) and replaced reports
// true. The divergence is confirmed first (bus.ConfirmDiverged): in a
// cluster one answer can be stale.
func (s *Service) watchTaskLog(ctx context.Context, id string, reached *atomic.Uint64, stop func()) (replaced *atomic.Bool, end func()) {
	replaced = new(atomic.Bool)
	ctx, end = context.WithCancel(ctx)
	go bus.CheckEveryAndWhenAnnounced(ctx, s.taskLogCheck, s.taskLogRecheck, func() (done, unreadable bool) {
		why := bus.ConfirmDiverged(ctx, func() string {
			pos := reached.Load() // before the log's state, which only grows
			log, err := bus.ReadStream(ctx, s.conn.JS, events.TasksStream)
			if err != nil {
				unreadable = true // an outage the consumer reports
				return ""
			}
			unreadable = false
			return log.Diverged(id, pos)
		})
		if why == "" || ctx.Err() != nil {
			return false, unreadable
		}
		replaced.Store(true)
		stop()
		return true, false
	})
	return replaced, end
}

// retryableWrite reports whether a card write failed for the disk's sake
// (full, over quota, read-only, failing), which passes, rather than for
// the card's, which does not.
func retryableWrite(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// cardWrites writes a batch of task events back into their cards: each
// card replaced atomically (staged, synced, renamed), the directories
// renamed into synced together by sync.
type cardWrites struct {
	dirs  map[*repo]map[string]bool // directories renamed into, unsynced
	decks map[*repo]*deckRoots
	// log is the task log incarnation the cards are written from.
	log string
}

// deckRoots are a repo's .cuedeck and staging directories opened once for
// a batch: os.Root opens every directory on a path in turn, and walking
// from the repo's root for each read, staging and rename was ten
// directory opens a card.
type deckRoots struct {
	deck, tmp *os.Root
}

// deckDir is where cards and the staging directory both live.
const deckDir = ".cuedeck"

// roots opens r's deck roots for this batch, the staging directory
// created if need be.
func (w *cardWrites) roots(r *repo) (*deckRoots, error) {
	if d := w.decks[r]; d != nil {
		return d, nil
	}
	// The roots below refuse a symlink out of the repository with no word
	// on what to do about it.
	for _, dir := range []string{deckDir, card.Dir} {
		if fi, err := r.root.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if _, err := r.root.Stat(dir); err != nil {
				return nil, fmt.Errorf("%s is a symlink out of the repository, and card write-back writes only inside it: make %s a directory (move its cards into it) to have tasks written back: %w", dir, filepath.Join(r.absRoot, filepath.FromSlash(dir)), err)
			}
		}
	}
	open := func() (deck, tmp *os.Root, err error) {
		if deck, err = r.root.OpenRoot(deckDir); err != nil {
			return nil, nil, err
		}
		if tmp, err = deck.OpenRoot(strings.TrimPrefix(tmpDir, deckDir+"/")); err != nil {
			deck.Close()
			return nil, nil, err
		}
		return deck, tmp, nil
	}
	// The staging directory is made when it is missing, not asked for
	// each batch.
	deck, tmp, err := open()
	if errors.Is(err, fs.ErrNotExist) {
		if err = r.root.MkdirAll(tmpDir, 0o755); err == nil {
			deck, tmp, err = open()
		}
	}
	if err != nil {
		return nil, err
	}
	if w.decks == nil {
		w.decks = map[*repo]*deckRoots{}
	}
	d := &deckRoots{deck: deck, tmp: tmp}
	w.decks[r] = d
	return d, nil
}

// close closes the roots the batch opened.
func (w *cardWrites) close() {
	for _, d := range w.decks {
		d.tmp.Close()
		d.deck.Close()
	}
	clear(w.decks)
}

// writeTask makes the task's card file say what ev says, keeping its body
// and unknown keys. It writes nothing when the bytes would not change, and
// refuses to replace a file that is not this task's card (it does not parse,
// or holds another id), so a hand edit in progress is never lost. With
// onlyNewer it leaves a card alone unless ev changed the task after the
// card's updated time.
func (w *cardWrites) writeTask(r *repo, ev events.TaskEvent, onlyNewer bool) error {
	// The card's path from the repository's root: the roots below name
	// paths from .cuedeck, and a failure should say which file it was.
	if err := w.writeTaskIn(r, ev, onlyNewer); err != nil {
		return fmt.Errorf("card %s: %w", card.PathOf(ev.Task), err)
	}
	return nil
}

func (w *cardWrites) writeTaskIn(r *repo, ev events.TaskEvent, onlyNewer bool) error {
	if !card.ValidID(ev.Task.ID) {
		return fmt.Errorf("task id %q is not valid", ev.Task.ID)
	}
	p := card.PathOf(ev.Task)
	d, err := w.roots(r)
	if err != nil {
		return err
	}
	// Cards are under card.Dir (card.PathOf), inside the deck.
	inDeck := strings.TrimPrefix(p, deckDir+"/")
	old, mode, err := readWithMode(d.deck, inDeck)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	c := card.Card{Body: "\n"}
	if exists {
		if c, err = card.Parse(old); err != nil {
			return fmt.Errorf("%s is not a card that can be rewritten: %w", p, err)
		}
		if c.Task.ID != ev.Task.ID {
			return fmt.Errorf("%s holds task %s, not %s", p, c.Task.ID, ev.Task.ID)
		}
		if onlyNewer && !ev.Task.Updated.After(c.Task.Updated) {
			return nil
		}
	}
	if ev.Op == events.TaskDeleted {
		if !exists {
			return nil
		}
		if err := d.deck.Remove(inDeck); err != nil {
			return err
		}
		r.s.noteWrittenBack(r.name, p, writtenCard{})
		w.renamedInto(r, path.Dir(p))
		return nil
	}
	c.Task = ev.Task
	data, err := card.Render(c)
	if err != nil {
		return err
	}
	if exists && bytes.Equal(data, old) {
		return nil
	}
	if !exists {
		mode = 0o644
	}
	return w.replace(r, d, p, data, mode)
}

// readWithMode reads p inside root and returns its permissions too, with
// one open.
func readWithMode(root *os.Root, p string) ([]byte, fs.FileMode, error) {
	f, err := root.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(f)
	return data, fi.Mode().Perm(), err
}

// replace replaces p inside r's root with data: written and synced under
// tmpDir first, then renamed over p, so a reader never sees half a card.
// The rename is durable once sync has run.
func (w *cardWrites) replace(r *repo, d *deckRoots, p string, data []byte, mode fs.FileMode) error {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	name := path.Base(p) + "." + hex.EncodeToString(rnd[:])
	f, err := d.tmp.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	dir := path.Dir(p)
	staged := path.Join(strings.TrimPrefix(tmpDir, deckDir+"/"), name)
	inDeck := strings.TrimPrefix(p, deckDir+"/")
	if werr == nil {
		// The card's directory is made only when the rename finds it
		// missing, not asked for in every batch: it is nearly always
		// there.
		werr = d.deck.Rename(staged, inDeck)
		if errors.Is(werr, fs.ErrNotExist) {
			if werr = r.root.MkdirAll(dir, 0o755); werr == nil {
				werr = d.deck.Rename(staged, inDeck)
			}
		}
	}
	if werr != nil {
		_ = d.tmp.Remove(name)
		return werr
	}
	r.s.noteWrittenBack(r.name, p, writtenCard{sha: events.SHA256Hex(data), log: w.log})
	w.renamedInto(r, dir)
	return nil
}

func (w *cardWrites) renamedInto(r *repo, dir string) {
	if w.dirs == nil {
		w.dirs = map[*repo]map[string]bool{}
	}
	if w.dirs[r] == nil {
		w.dirs[r] = map[string]bool{}
	}
	w.dirs[r][dir] = true
}

// sync makes the renames and removals so far durable: a card written
// back, and its log position then advanced, survives a power cut.
func (w *cardWrites) sync() error {
	for r, dirs := range w.dirs {
		for dir := range dirs {
			d, err := r.root.Open(dir)
			if err != nil {
				return err
			}
			err = d.Sync()
			if cerr := d.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("sync %s in repo %s: %w", dir, r.name, err)
			}
		}
	}
	clear(w.dirs)
	return nil
}

// removeStaging deletes what a killed card write left under tmpDir: no
// write is in progress before ingest starts following the task log.
func (r *repo) removeStaging() {
	entries, err := fs.ReadDir(r.root.FS(), tmpDir)
	if err != nil {
		return
	}
	removed := 0
	for _, e := range entries {
		if e.Type().IsRegular() && r.root.Remove(path.Join(tmpDir, e.Name())) == nil {
			removed++
		}
	}
	if removed > 0 {
		r.logger.Info("ingest: removed card writes a stop interrupted", "dir", tmpDir, "files", removed)
	}
}
