package ingest

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// scanReport keeps a full scan's ScanProgress in ScansBucket: from its
// start (listing), every events.ScanHeartbeat while it runs, once the
// listing is done and once the scan is. It is best effort: a failed put is
// logged once and the scan goes on.
type scanReport struct {
	r *repo
	w *walk

	listing atomic.Bool
	files   atomic.Int64
	failed  atomic.Bool

	// mu orders the puts, so that an older reading never lands last.
	mu   sync.Mutex
	stop chan struct{}
	wg   sync.WaitGroup
}

// reportScan starts reporting the full scan w is the walk of; nil when
// scan progress is not published.
func (r *repo) reportScan(ctx context.Context, w *walk) *scanReport {
	if r.s.scans == nil {
		return nil
	}
	sr := &scanReport{r: r, w: w, stop: make(chan struct{})}
	sr.listing.Store(true)
	sr.put(ctx, true)
	sr.wg.Go(func() {
		t := time.NewTicker(events.ScanHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-sr.stop:
				return
			case <-t.C:
				sr.put(ctx, true)
			}
		}
	})
	return sr
}

// listed reports that the listing found files.
func (sr *scanReport) listed(ctx context.Context, files int) {
	if sr == nil {
		return
	}
	sr.files.Store(int64(files))
	sr.listing.Store(false)
	sr.put(ctx, true)
}

// finish reports the scan done, even when it was cut short: a running
// scan's record would otherwise linger until it went stale.
func (sr *scanReport) finish(ctx context.Context) {
	if sr == nil {
		return
	}
	close(sr.stop)
	sr.wg.Wait()
	sr.listing.Store(false)
	sr.put(ctx, false)
}

func (sr *scanReport) put(ctx context.Context, scanning bool) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	b, err := json.Marshal(events.ScanProgress{Repo: sr.r.name, Files: int(sr.files.Load()), Handled: int(sr.w.handled.Load()),
		Scanning: scanning, Listing: sr.listing.Load()})
	if err != nil {
		return
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if _, err := sr.r.s.scans.Put(pctx, sr.r.name, b); err != nil && sr.failed.CompareAndSwap(false, true) {
		sr.r.logger.Warn("ingest: cannot publish scan progress; readers count only the streams", "bucket", events.ScansBucket, "err", err)
	}
}
