package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// IndexingOptions configure an Indexing. The zero value is usable.
type IndexingOptions struct {
	// Interval between readings; default 1s. It bounds how stale a
	// read_context notice is.
	Interval time.Duration
	// Timeout bounds one reading of a consumer or stream; default 2s.
	Timeout time.Duration
	// Logger hears readings that fail; nil discards.
	Logger *slog.Logger
}

// Indexing keeps an edge's edge.Progress: how many documents it holds, and
// how many files are still to come (ingest's running scans in
// events.ScansBucket, the indexer consumer's backlog, the cue_docs entries
// not yet applied) and how far the vectors of its model trail (the
// embedder consumer's backlog). Run reads them in the background, so
// Progress, called on every read_context, is an atomic load.
type Indexing struct {
	js   jetstream.JetStream
	mat  *edge.Materialiser
	opts IndexingOptions

	cur atomic.Pointer[edge.Progress]

	mu    sync.Mutex
	scans map[string]scanReading // by repo
}

// scanReading is a repo's ScanProgress and when the server stored it.
type scanReading struct {
	p  events.ScanProgress
	at time.Time
}

// NewIndexing follows the progress of indexing into mat through js.
func NewIndexing(js jetstream.JetStream, mat *edge.Materialiser, opts IndexingOptions) *Indexing {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Indexing{js: js, mat: mat, opts: opts, scans: map[string]scanReading{}}
}

// Progress is the last reading; the zero Progress (nothing to come)
// before the first.
func (ix *Indexing) Progress() edge.Progress {
	if p := ix.cur.Load(); p != nil {
		return *p
	}
	return edge.Progress{}
}

// Run follows the scans bucket and reads the rest every Interval until ctx
// ends; it returns nil.
func (ix *Indexing) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { ix.followScans(ctx) })
	t := time.NewTicker(ix.opts.Interval)
	defer t.Stop()
	for {
		ix.refresh(ctx)
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-t.C:
		}
	}
}

// refresh takes one reading now. A part that cannot be read (the cluster
// is out of reach) counts nothing: the edge then says nothing rather than
// something wrong.
func (ix *Indexing) refresh(ctx context.Context) {
	st := ix.mat.Status()
	p := edge.Progress{Indexed: st.Docs, Model: st.Model, Embeddable: st.Docs - st.Skipped, Vectors: st.VectorDocs}
	unpublished, listing := ix.scanning()
	p.Pending, p.Listing = ix.backlog(ctx, events.IngestStream, events.IndexerConsumer)+unpublished, listing
	if head, ok := ix.docsHead(ctx); ok && head > st.Revision {
		p.Pending += int(head - st.Revision)
	}
	if p.Model != "" {
		p.VectorsPending = ix.backlog(ctx, events.EmbedStream, events.EmbedderConsumer)
	}
	ix.cur.Store(&p)
}

// backlog is what a durable consumer has yet to deliver plus what its
// workers hold unacknowledged; 0 when it cannot be read.
func (ix *Indexing) backlog(ctx context.Context, stream, consumer string) int {
	ctx, cancel := context.WithTimeout(ctx, ix.opts.Timeout)
	defer cancel()
	c, err := ix.js.Consumer(ctx, stream, consumer)
	if err != nil {
		ix.opts.Logger.Debug("indexing progress: cannot read a consumer", "stream", stream, "consumer", consumer, "err", err)
		return 0
	}
	info := c.CachedInfo()
	return int(info.NumPending) + info.NumAckPending
}

// docsHead is the last revision of cue_docs.
func (ix *Indexing) docsHead(ctx context.Context) (uint64, bool) {
	ctx, cancel := context.WithTimeout(ctx, ix.opts.Timeout)
	defer cancel()
	head, err := StreamHead(ix.js, "KV_"+events.DocsBucket)(ctx)
	if err != nil {
		ix.opts.Logger.Debug("indexing progress: cannot read the head of cue_docs", "err", err)
		return 0, false
	}
	return head, true
}

// scanning is what the running scans found and have not published, and
// whether one is still listing its repo. A running scan's record not
// rewritten for events.ScanStaleAfter was left by an ingest that stopped,
// and counts nothing.
func (ix *Indexing) scanning() (unpublished int, listing bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, r := range ix.scans {
		if time.Since(r.at) < events.ScanStaleAfter {
			unpublished += r.p.Unpublished()
			listing = listing || (r.p.Scanning && r.p.Listing)
		}
	}
	return unpublished, listing
}

// followScans keeps ix.scans up to date with the scans bucket until ctx
// ends, watching it again after an interruption.
func (ix *Indexing) followScans(ctx context.Context) {
	retry := 5 * ix.opts.Interval
	for ctx.Err() == nil {
		err := ix.watchScans(ctx)
		if ctx.Err() != nil {
			return
		}
		ix.opts.Logger.Debug("indexing progress: scans watch interrupted; retrying", "err", err, "retry_in", retry)
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

var errWatchClosed = errors.New("watch closed")

func (ix *Indexing) watchScans(ctx context.Context) error {
	kv, err := ix.js.KeyValue(ctx, events.ScansBucket)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return err
	}
	defer stopWatch(w)
	for {
		var e jetstream.KeyValueEntry
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok = <-w.Updates():
		}
		if !ok {
			return errWatchClosed
		}
		if e == nil {
			continue // the initial values are all delivered
		}
		ix.mu.Lock()
		var p events.ScanProgress
		if e.Operation() == jetstream.KeyValuePut && json.Unmarshal(e.Value(), &p) == nil {
			ix.scans[e.Key()] = scanReading{p: p, at: e.Created()}
		} else {
			delete(ix.scans, e.Key())
		}
		ix.mu.Unlock()
	}
}

// stopWatch stops w and drains its channel, so the subscription's
// delivery goroutine, which may be blocked sending to it, can finish.
func stopWatch(w jetstream.KeyWatcher) {
	_ = w.Stop()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case _, ok := <-w.Updates():
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}
