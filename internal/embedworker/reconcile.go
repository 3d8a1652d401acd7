package embedworker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/docparse"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Reconciled counts one reconcile pass.
type Reconciled struct {
	// Docs is the indexed documents seen, Vectors the vector records of
	// this model.
	Docs, Vectors int
	// Requested is the embed requests published for documents without
	// vectors of this model at their content; Removals the deletion
	// requests for vectors whose document is gone.
	Requested, Removals int
}

// Reconcile compares cue_docs with this model's records in cue_vectors and
// publishes an EmbedRequest for every indexed document whose vectors are
// missing or of other content, and a Deleted one for every vector record
// whose document is gone, deleted or skipped. The workers do the rest,
// behind the requests already queued; keyword search is untouched.
// Requests carry EmbedRequestMsgID, so reconcilers running at once (or
// the indexer's own request) publish each only once.
func (s *Service) Reconcile(ctx context.Context) (Reconciled, error) {
	var r Reconciled
	start := time.Now()
	docs, err := s.scanDocs(ctx)
	if err != nil {
		return r, err
	}
	vecs, err := s.scanVectors(ctx)
	if err != nil {
		return r, err
	}
	r.Vectors = len(vecs)
	s.logger.Info("reconcile: scanning for missing vectors", "docs", len(docs), "vectors", len(vecs))
	publish := func(req events.EmbedRequest, idSuffix string) error {
		_, err := bus.PublishEvent(ctx, s.conn.JS, events.EmbedSubject(req.Repo), events.EmbedRequestMsgID(req)+idSuffix, req)
		return err
	}
	for key, d := range docs {
		if !d.indexed {
			continue
		}
		r.Docs++
		leaveOut := s.cfg.ProseOnly && !d.prose
		v, ok := vecs[key]
		current := ok && (v.seq > d.seq || v.sha == d.sha || v.seq == d.seq)
		if current && v.leftOut == leaveOut {
			continue
		}
		// Vectors of this content recorded the other way ([embed] files
		// changed): the request that brought them may still be in the
		// duplicate window under the plain id.
		idSuffix := ""
		if current {
			idSuffix = fmt.Sprintf("|left-out:%t", leaveOut)
		}
		if err := publish(events.EmbedRequest{Repo: d.repo, Path: d.path, Model: s.model, SHA256: d.sha, SourceSeq: d.seq}, idSuffix); err != nil {
			return r, err
		}
		r.Requested++
		s.rerequested.Add(1)
		if r.Requested%1000 == 0 {
			s.logger.Info("reconcile: progress", "requested", r.Requested, "docs", len(docs))
		}
	}
	for key, v := range vecs {
		d, ok := docs[key]
		if ok && d.indexed {
			continue
		}
		seq := v.seq
		if ok {
			seq = d.seq
		}
		if err := publish(events.EmbedRequest{Repo: v.repo, Path: v.path, Model: s.model, SourceSeq: seq, Deleted: true}, ""); err != nil {
			return r, err
		}
		r.Removals++
	}
	s.reconciles.Add(1)
	s.logger.Info("reconcile: done", "docs", r.Docs, "vectors", r.Vectors, "requested", r.Requested, "removals", r.Removals, "took", time.Since(start).Round(time.Millisecond))
	return r, nil
}

// queuePoll is how often waitQueueEmpty looks at the queue.
const queuePoll = 2 * time.Second

// waitQueueEmpty returns once the embed queue holds no request, queued or
// in hand: a scan then asks only for vectors that no queued request will
// bring, rather than asking a second time for every document still queued
// when the daemon restarted.
func (s *Service) waitQueueEmpty(ctx context.Context) error {
	cons, err := s.conn.JS.Consumer(ctx, events.EmbedStream, events.EmbedderConsumer)
	if err != nil {
		return fmt.Errorf("embedworker: consumer %s: %w", events.EmbedderConsumer, err)
	}
	logged := false
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			return fmt.Errorf("embedworker: consumer %s: %w", events.EmbedderConsumer, err)
		}
		queued := info.NumPending + uint64(info.NumAckPending)
		if queued == 0 {
			return nil
		}
		if !logged {
			s.logger.Info("reconcile: waiting for the queued requests first", "queued", queued)
			logged = true
		}
		t := time.NewTimer(queuePoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

type docState struct {
	repo, path, sha string
	seq             uint64
	indexed, prose  bool
}

type vecState struct {
	repo, path, sha string
	seq             uint64
	leftOut         bool
}

// scanDocs reads every DocRecord, keyed by DocKey.
func (s *Service) scanDocs(ctx context.Context) (map[string]docState, error) {
	out := map[string]docState{}
	err := scan(ctx, s.conn.JS, events.DocsBucket, ">", func(e jetstream.KeyValueEntry) {
		rec, err := events.DecodeDocRecord(e.Value())
		if err != nil {
			return // status reports undecodable records
		}
		out[e.Key()] = docState{repo: rec.Repo, path: rec.Path, sha: rec.SHA256, seq: rec.SourceSeq,
			indexed: !rec.Deleted && rec.Skip == nil, prose: docparse.Prose(rec.Kind, rec.Path)}
	})
	return out, err
}

// scanVectors reads this model's VectorRecords, keyed by DocKey.
func (s *Service) scanVectors(ctx context.Context) (map[string]vecState, error) {
	out := map[string]vecState{}
	err := scan(ctx, s.conn.JS, events.VectorsBucket, events.VectorKeyPrefix(s.model), func(e jetstream.KeyValueEntry) {
		_, repo, path, err := events.ParseVectorKey(e.Key())
		if err != nil {
			return
		}
		v := vecState{repo: repo, path: path}
		if rec, err := events.DecodeVectorRecord(e.Value()); err == nil {
			v.sha, v.seq, v.leftOut = rec.SHA256, rec.SourceSeq, rec.LeftOut
		}
		out[events.DocKey(repo, path)] = v
	})
	return out, err
}

// scan calls fn with the current value of every key of bucket matching
// filter.
func scan(ctx context.Context, js jetstream.JetStream, bucket, filter string, fn func(jetstream.KeyValueEntry)) error {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return fmt.Errorf("embedworker: bucket %s: %w", bucket, err)
	}
	w, err := kv.Watch(ctx, filter, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("embedworker: watch %s: %w", bucket, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("embedworker: watch of " + bucket + " ended")
			}
			if e == nil {
				return nil // the current values are all delivered
			}
			fn(e)
		}
	}
}
