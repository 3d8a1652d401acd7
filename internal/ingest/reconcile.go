package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/core/card"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Reconciled counts what one reconcile found.
type Reconciled struct {
	// Files is the files ingest's state records; Docs the entries of
	// cue_docs for these repos.
	Files, Docs int
	// Stale counts files whose record in cue_docs is missing or of other
	// content, with no event of theirs still queued: they are published
	// again. Orphans counts cue_docs documents ingest has no record of:
	// the scan deletes them unless their file exists.
	Stale, Orphans int
	// StreamReplaced is true when CUE_INGEST is another incarnation than
	// the one the state's publishes went to; TaskLogReplaced when
	// CUE_TASKS is another than the one card write-back followed: every
	// card is then published again (and counted in Stale).
	StreamReplaced, TaskLogReplaced bool
	Took                            time.Duration
}

// reconcile brings ingest's state, its record of what cue_docs holds, in
// line with cue_docs itself: a file whose document is missing or of other
// content (a NATS store lost, restored from backup, or damaged) is marked
// stale, so that the scan publishes it again, unless its last event is
// still queued for the indexer; a document ingest has no record of is
// recorded with an unknown size, so that the scan reads its file again and
// deletes the document if the file is gone. It reads the headers of
// cue_docs only (events.DocSummary).
func (s *Service) reconcile(ctx context.Context) (Reconciled, error) {
	start := time.Now()
	var rec Reconciled
	stream, err := bus.ReadStream(ctx, s.conn.JS, events.IngestStream)
	if err != nil {
		return rec, err
	}
	recorded, err := s.state.meta(metaIngestStream)
	if err != nil {
		return rec, err
	}
	rec.StreamReplaced = recorded != "" && recorded != stream.ID()
	queued := func(seq uint64) bool { return false }
	if recorded == stream.ID() && stream.Msgs > 0 {
		settled, err := bus.Settled(ctx, s.conn.JS, events.IngestStream, events.IndexerConsumer)
		if err != nil {
			return rec, fmt.Errorf("ingest: %w", err)
		}
		queued = func(seq uint64) bool {
			if seq < stream.FirstSeq || seq > stream.LastSeq {
				return false
			}
			// Unsure is not queued: publishing a file again is harmless.
			done, err := settled(seq)
			return err == nil && !done
		}
	}
	// Cards are the task log's files: a log that is another incarnation
	// than the one the cards were last held against lacks the tasks they
	// hold, or holds older states of them, and learns them when the cards
	// are published again.
	cardsAgain := false
	logID := ""
	if log, err := bus.ReadStream(ctx, s.conn.JS, events.TasksStream); err == nil {
		logID = log.ID()
		recordedLog, err := s.state.meta(metaCardsLog)
		if err != nil {
			return rec, err
		}
		if recordedLog == "" {
			// A state from before the comparison kept its own record:
			// write-back's is the log the cards were written from.
			if recordedLog, err = s.state.meta(metaTasksStream); err != nil {
				return rec, err
			}
		}
		cardsAgain = recordedLog != "" && recordedLog != logID
		rec.TaskLogReplaced = cardsAgain
		if cardsAgain {
			// Write-back looks at the log now rather than at its next
			// check, and replays what is newer than the cards.
			signal(s.taskLogRecheck)
			// A log being refilled (a backup's messages published one by
			// one) would get the cards' states before the rest of the
			// backup's older ones, which its order makes the later truth:
			// the cards are compared with it once it stopped changing.
			settled := s.waitSettled(ctx, events.TasksStream)
			if log, err := bus.ReadStream(ctx, s.conn.JS, events.TasksStream); err == nil {
				logID = log.ID()
			}
			s.logger.Info("ingest: the task log is another than the cards were held against; publishing the cards into it", "settled", settled)
		}
	}
	names := make([]string, len(s.repos))
	for i, r := range s.repos {
		names[i] = r.name
	}
	docs, err := ReadDocSummaries(ctx, s.conn.JS, names)
	if err != nil {
		return rec, err
	}
	rec.Docs = len(docs)
	tasks, err := taskPaths(ctx, s.conn.JS, names)
	if err != nil {
		return rec, err
	}
	for _, r := range s.repos {
		var stale []string
		seen := map[string]bool{}
		err := s.state.each(r.name, func(path string, st fileState) error {
			rec.Files++
			key := events.DocKey(r.name, path)
			seen[key] = true
			doc, ok := docs[key]
			// A card whose task the log lacks (lost with a damaged log)
			// is published again, and the indexer reads its task again.
			isCard := strings.HasPrefix(path, card.Dir+"/") && strings.HasSuffix(path, ".md") && st.Skip == ""
			cardAgain := isCard && (cardsAgain || !tasks[r.name][path])
			// A card's event still queued was published against the
			// log before this one, and may change nothing in it.
			stillQueued := st.Seq > 0 && queued(st.Seq) && !(isCard && cardsAgain)
			if st.Stale || (!cardAgain && ok && st.agrees(doc)) || stillQueued {
				return nil
			}
			stale = append(stale, path)
			return nil
		})
		if err != nil {
			return rec, err
		}
		var orphans []string
		for key, doc := range docs {
			repo, path, err := events.ParseDocKey(key)
			if err != nil || repo != r.name || seen[key] || doc.Deleted {
				continue
			}
			orphans = append(orphans, path)
		}
		if err := s.state.markStale(r.name, stale); err != nil {
			return rec, err
		}
		if err := s.state.adoptOrphans(r.name, orphans, docs); err != nil {
			return rec, err
		}
		rec.Stale += len(stale)
		rec.Orphans += len(orphans)
	}
	if err := s.state.setMeta(metaIngestStream, stream.ID()); err != nil {
		return rec, err
	}
	if logID != "" {
		// After the cards were marked to publish: a stop before this
		// compares them again at the next start.
		if err := s.state.setMeta(metaCardsLog, logID); err != nil {
			return rec, err
		}
	}
	rec.Took = time.Since(start)
	return rec, nil
}

// agrees reports whether doc is the document of what st records as
// published.
func (st fileState) agrees(doc events.DocSummary) bool {
	switch {
	case doc.Deleted:
		return false
	case st.Skip != "":
		return doc.Skip == st.Skip
	}
	return doc.Skip == "" && doc.SHA256 == st.SHA256
}

// readThrough reads what an ordered consumer of stream with cfg delivers
// until it has caught up, calling fn with each message.
func readThrough(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.OrderedConsumerConfig, fn func(jetstream.Msg)) error {
	cons, err := js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return fmt.Errorf("ingest: read %s: %w", stream, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("ingest: read %s: %w", stream, err)
	}
	if info.NumPending == 0 {
		return nil
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("ingest: read %s: %w", stream, err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	// A server that cannot read a damaged block stalls the consumer
	// rather than failing it: give up when nothing comes.
	var stalled atomic.Bool
	watchdog := time.AfterFunc(stallAfter, func() { stalled.Store(true); it.Stop() })
	defer watchdog.Stop()
	read := 0
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if stalled.Load() {
				return fmt.Errorf("ingest: %s stopped delivering after %d of %d messages for %s: its files may be damaged (stop CueDeck and start it again: the start checks them)", stream, read, info.NumPending, stallAfter)
			}
			return fmt.Errorf("ingest: read %s: %w", stream, err)
		}
		watchdog.Reset(stallAfter)
		read++
		fn(msg)
		meta, err := msg.Metadata()
		if err != nil || meta.NumPending == 0 {
			return nil
		}
	}
}

// taskPaths replays the task log of repos and returns, per repo, the card
// paths of the tasks it holds.
func taskPaths(ctx context.Context, js jetstream.JetStream, repos []string) (map[string]map[string]bool, error) {
	byID := map[string]map[string]string{}
	subjects := make([]string, len(repos))
	for i, r := range repos {
		subjects[i] = events.TaskSubject(r)
		byID[r] = map[string]string{}
	}
	err := readThrough(ctx, js, events.TasksStream, jetstream.OrderedConsumerConfig{FilterSubjects: subjects}, func(msg jetstream.Msg) {
		ev, err := events.Decode(msg.Data())
		te, ok := ev.(events.TaskEvent)
		if err != nil || !ok || byID[te.Repo] == nil {
			return
		}
		if te.Op == events.TaskDeleted {
			delete(byID[te.Repo], te.Task.ID)
			return
		}
		byID[te.Repo][te.Task.ID] = card.PathOf(te.Task)
	})
	out := map[string]map[string]bool{}
	for r, ids := range byID {
		out[r] = map[string]bool{}
		for _, p := range ids {
			out[r][p] = true
		}
	}
	return out, err
}

// stallAfter is how long readThrough waits for the next message.
const stallAfter = 10 * time.Second

// ReadDocSummaries reads the summary of the last entry of every key of
// repos in cue_docs, keyed by DocKey; deleted and purged keys are left
// out. Entries written before they carried summaries are read whole.
func ReadDocSummaries(ctx context.Context, js jetstream.JetStream, repos []string) (map[string]events.DocSummary, error) {
	if len(repos) == 0 {
		return map[string]events.DocSummary{}, nil
	}
	subjects := make([]string, len(repos))
	for i, r := range repos {
		subjects[i] = events.DocsSubject(events.DocKeyPrefix(r))
	}
	out, _, err := readSummaries(ctx, js, subjects, false)
	return out, err
}

// ReadAllDocSummaries reads the complete summary (kind, tokens, warnings
// and skip detail too) of the last entry of every key in cue_docs, keyed
// by DocKey, as `cue status` counts them: headers alone, but entries whose
// headers lack any of it are read whole. undecodable names, with the
// error, each such entry whose record cannot be decoded.
func ReadAllDocSummaries(ctx context.Context, js jetstream.JetStream) (sums map[string]events.DocSummary, undecodable []string, err error) {
	return readSummaries(ctx, js, []string{events.DocsSubject(">")}, true)
}

func readSummaries(ctx context.Context, js jetstream.JetStream, subjects []string, complete bool) (map[string]events.DocSummary, []string, error) {
	out := map[string]events.DocSummary{}
	stream := "KV_" + events.DocsBucket
	prefix := events.DocsSubject("")
	var unsummarised []string
	err := readThrough(ctx, js, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy, HeadersOnly: true,
	}, func(msg jetstream.Msg) {
		key := strings.TrimPrefix(msg.Subject(), prefix)
		h := msg.Headers()
		switch op := h.Get("KV-Operation"); {
		case op == "DEL" || op == "PURGE":
			delete(out, key)
		default:
			if sum, ok := events.ParseDocSummary(h.Get); ok && (sum.Complete || !complete) {
				out[key] = sum
			} else {
				unsummarised = append(unsummarised, key)
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if len(unsummarised) == 0 {
		return out, nil, nil
	}
	kv, err := js.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		return nil, nil, fmt.Errorf("ingest: bucket %s: %w", events.DocsBucket, err)
	}
	var undecodable []string
	for _, key := range unsummarised {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("ingest: read %s %s: %w", events.DocsBucket, key, err)
		}
		doc, err := events.DecodeDocRecord(e.Value())
		if err != nil {
			// Left out: ingest publishes the file again.
			undecodable = append(undecodable, key+": "+err.Error())
			continue
		}
		out[key] = doc.Summary()
	}
	return out, undecodable, nil
}
