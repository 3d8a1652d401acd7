package indexer

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/pkg/core/card"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// TaskLog is the task board the indexer reconciles card files against:
// Mutate builds an event from the repo's current tasks and appends it with
// optimistic concurrency, building again if the log moved (tasks.Board).
type TaskLog interface {
	Mutate(ctx context.Context, repo string, build func(current map[string]events.Task) (events.TaskEvent, error)) (uint64, error)
	Task(repo, id string) (events.Task, bool)
	Tasks(repo string) map[string]events.Task
	// AtPath returns the tasks whose card is at path.
	AtPath(repo, path string) []events.Task
}

// SourceFile is the TaskEvent.Source of events the indexer derives from
// card files; ingest writes back only events of other sources.
const SourceFile = "file"

// errNoChange ends a Mutate that has nothing to publish.
var errNoChange = errors.New("task unchanged")

// cardChange is what a card file event means for the task log, decided
// before the DocRecord is written and published after it.
type cardChange struct {
	task    events.Task
	deleted bool
	// seq is the ingest sequence of the record the change comes from.
	seq uint64
	// repeat: the card is as ingest published it before
	// (events.FileUpserted.Repeat), not a new edit.
	repeat bool
	// writtenBackFrom: the card is as write-back wrote it from this task
	// log incarnation (events.FileUpserted.WrittenBackFrom).
	writtenBackFrom string
}

// parseCard reads rec's content as a card. A card that does not parse, or
// whose id another live card already holds, gets a warning on its record
// and changes no task.
func (s *Service) parseCard(ctx context.Context, rec *events.DocRecord, content string) *cardChange {
	c, err := card.Parse([]byte(content))
	if err != nil {
		rec.Warnings = append(rec.Warnings, "task card not read: "+err.Error())
		return nil
	}
	t := c.Task
	t.Path = rec.Path
	if cur, ok := s.tasks.Task(rec.Repo, t.ID); ok && cur.Path != "" && cur.Path != t.Path && s.live(ctx, rec.Repo, cur.Path) {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("task card not read: id %s is already the card %s; give this card another id", t.ID, cur.Path))
		return nil
	}
	return &cardChange{task: t}
}

// live reports whether the doc at path has a record that is not a tombstone.
func (s *Service) live(ctx context.Context, repo, path string) bool {
	kv, err := s.conn.KV(ctx, events.DocsBucket)
	if err != nil {
		return true
	}
	e, err := kv.Get(ctx, events.DocKey(repo, path))
	if err != nil {
		return !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted)
	}
	rec, err := events.DecodeDocRecord(e.Value())
	return err != nil || !rec.Deleted
}

func isCard(path string) bool {
	kind, _ := docparse.Classify(path)
	return kind == events.DocCard
}

// publishCard brings the task log in line with a card file: the task of the
// card at path is created, updated or deleted, and a task the board still
// places at path under another id (the card's id was edited) is deleted.
// Identical state publishes nothing, which is what stops a card that ingest
// wrote back from an MCP event coming round again.
func (s *Service) publishCard(ctx context.Context, repo, path string, ch *cardChange) error {
	// A card written back from the task log holds the log's own state of
	// its task, or an older one: the log moved on before ingest read the
	// file, and write-back brings the card up to it. Published, an older
	// state would set the task back (edits within one second share an
	// updated time, so the card cannot tell itself older). From a log
	// since replaced (restored from a backup), the card may hold what the
	// log lost: it is judged as any card. Asked only of a card that
	// differs from the log, so the card of every write that comes round
	// does not cost a look at the log.
	ownState := func() bool { return ch.writtenBackFrom != "" && s.taskLogIs(ctx, ch.writtenBackFrom) }
	if ch.deleted {
		// A card renamed, or a copy of it deleted: the task lives on in the
		// other file that claims its id.
		if at := s.tasks.AtPath(repo, path); len(at) > 0 {
			if other, ok := s.otherCard(ctx, repo, path, at[0].ID); ok {
				ch = &cardChange{task: other}
			}
		}
	}
	keep := ""
	if !ch.deleted {
		keep = ch.task.ID
	}
	// Most cards indexed are the one task their path holds (a write-back
	// coming round): the log is asked for stale tasks only when the board
	// places another at the path.
	for s.holdsOther(repo, path, keep) {
		var stale events.Task
		_, err := s.tasks.Mutate(ctx, repo, func(cur map[string]events.Task) (events.TaskEvent, error) {
			if err := s.stillCurrent(ctx, repo, path, ch.seq); err != nil {
				return events.TaskEvent{}, err
			}
			for _, t := range cur {
				if t.Path == path && t.ID != keep {
					if ownState() {
						return events.TaskEvent{}, errNoChange
					}
					stale = t
					return events.TaskEvent{Op: events.TaskDeleted, Task: t, Source: SourceFile}, nil
				}
			}
			return events.TaskEvent{}, errNoChange
		})
		if errors.Is(err, errNoChange) {
			break
		}
		if err != nil {
			return fmt.Errorf("indexer: delete task %s of %s/%s: %w", stale.ID, repo, path, err)
		}
		s.logger.Info("task deleted", "repo", repo, "path", path, "id", stale.ID)
	}
	if ch.deleted {
		return nil
	}
	var op events.TaskOp
	_, err := s.tasks.Mutate(ctx, repo, func(cur map[string]events.Task) (events.TaskEvent, error) {
		if err := s.stillCurrent(ctx, repo, path, ch.seq); err != nil {
			return events.TaskEvent{}, err
		}
		prev, ok := cur[ch.task.ID]
		if ok {
			if prev.Path == "" {
				prev.Path = ch.task.Path
			}
			if card.SameTask(prev, ch.task) || ownState() {
				return events.TaskEvent{}, errNoChange
			}
			if ch.repeat && prev.Updated.After(ch.task.Updated) {
				// The log holds a change made after the card's: one made
				// in a log restored from a backup after the cards were
				// published into it again. Write-back brings that change
				// to the card; the card's older state must not undo it.
				return events.TaskEvent{}, errNoChange
			}
		}
		if !ok && ownState() {
			// Deleted from the log since: write-back removes the card.
			return events.TaskEvent{}, errNoChange
		}
		op = events.TaskUpdated
		if !ok {
			op = events.TaskCreated
		}
		return events.TaskEvent{Op: op, Task: ch.task, Source: SourceFile}, nil
	})
	switch {
	case errors.Is(err, errNoChange):
		return nil
	case err != nil:
		return fmt.Errorf("indexer: publish task %s of %s/%s: %w", ch.task.ID, repo, path, err)
	}
	s.logger.Info("task "+string(op), "repo", repo, "path", path, "id", ch.task.ID)
	return nil
}

// taskLogIs reports whether the task log is the incarnation id now; false
// when it cannot be read.
func (s *Service) taskLogIs(ctx context.Context, id string) bool {
	log, err := bus.ReadStream(ctx, s.conn.JS, events.TasksStream)
	return err == nil && log.ID() == id
}

// stillCurrent returns errNoChange when the card's record in cue_docs is
// of a later ingest sequence than seq. It runs inside Mutate's build,
// on every attempt: another indexer process that stored a newer version
// of the card stores its record before appending, so either this check
// sees it, or that append moves the log and this attempt is rebuilt. The
// per-path lock orders versions within one process only.
func (s *Service) stillCurrent(ctx context.Context, repo, path string, seq uint64) error {
	if seq == 0 {
		return nil // a deletion found through another card, not a record
	}
	kv, err := s.conn.KV(ctx, events.DocsBucket)
	if err != nil {
		return err
	}
	e, err := kv.Get(ctx, events.DocKey(repo, path))
	if err != nil {
		return fmt.Errorf("indexer: re-read the record of card %s/%s: %w", repo, path, err)
	}
	rec, err := events.DecodeDocRecord(e.Value())
	if err != nil {
		return fmt.Errorf("indexer: re-read the record of card %s/%s: %w", repo, path, err)
	}
	// An older record is a read from a replica that has not applied the
	// one this change stored yet (reads of a replicated bucket may be
	// served by any replica): the change is current.
	if rec.SourceSeq > seq {
		return errNoChange
	}
	return nil
}

// otherCard finds a live card other than path that claims id, and returns
// its task. It lists the repo's records, so it is kept for deletions.
func (s *Service) otherCard(ctx context.Context, repo, path, id string) (events.Task, bool) {
	kv, err := s.conn.KV(ctx, events.DocsBucket)
	if err != nil {
		return events.Task{}, false
	}
	keys, err := kv.ListKeysFiltered(ctx, events.DocKeyPrefix(repo))
	if err != nil {
		return events.Task{}, false
	}
	defer keys.Stop()
	for key := range keys.Keys() {
		_, p, err := events.ParseDocKey(key)
		if err != nil || p == path || !isCard(p) {
			continue
		}
		e, err := kv.Get(ctx, key)
		if err != nil {
			continue
		}
		rec, err := events.DecodeDocRecord(e.Value())
		if err != nil || rec.Deleted || rec.Skip != nil {
			continue
		}
		content := []byte(rec.Content)
		if rec.Blob != "" {
			if content, err = s.blob(ctx, rec.Blob); err != nil {
				continue
			}
		}
		c, err := card.Parse(content)
		if err != nil || c.Task.ID != id {
			continue
		}
		c.Task.Path = p
		return c.Task, true
	}
	return events.Task{}, false
}

// holdsOther reports whether the board places a task other than keep at
// path.
func (s *Service) holdsOther(repo, path, keep string) bool {
	for _, t := range s.tasks.AtPath(repo, path) {
		if t.ID != keep {
			return true
		}
	}
	return false
}
