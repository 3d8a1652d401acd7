package ingest

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// reportScan publishes the progress of the full scan w has listed to
// ScansBucket: now, every events.ScanHeartbeat while it publishes, and
// once more when the returned finish is called. It is best effort: a
// failed put is logged and the scan goes on.
func (r *repo) reportScan(ctx context.Context, w *walk) (finish func()) {
	kv := r.s.scans
	if kv == nil {
		return func() {}
	}
	files := len(w.found)
	failed := false
	put := func(scanning bool) {
		b, err := json.Marshal(events.ScanProgress{Repo: r.name, Files: files, Handled: int(w.handled.Load()), Scanning: scanning})
		if err != nil {
			return
		}
		// The last report is due even when the scan was cut short: a
		// "scanning" record would otherwise linger until it went stale.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if _, err := kv.Put(pctx, r.name, b); err != nil && !failed {
			failed = true
			r.logger.Warn("ingest: cannot publish scan progress; readers count only the streams", "bucket", events.ScansBucket, "err", err)
		}
	}
	put(true)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(events.ScanHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				put(true)
			}
		}
	})
	return func() {
		close(stop)
		wg.Wait()
		put(false)
	}
}
