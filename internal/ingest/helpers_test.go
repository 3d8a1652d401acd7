package ingest_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const within = 20 * time.Second

// received is one event read from the ingest stream.
type received struct {
	Seq   uint64
	MsgID string
	Event events.Event
}

func (r received) path() string {
	switch e := r.Event.(type) {
	case events.FileUpserted:
		return e.Path
	case events.FileDeleted:
		return e.Path
	case events.FileSkipped:
		return e.Path
	}
	return ""
}

// collector reads every file event through the indexer's durable consumer
// with the workers' own loop (bus.Worker, which also trims the queue of
// what it acknowledged) and, as an indexer would, stores the file's record
// in cue_docs (without the parsing) before acking it: ingest compares its
// state with cue_docs at start.
type collector struct {
	mu  sync.Mutex
	got []received
}

func collect(t *testing.T, conn *bus.Conn) *collector {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	docs, err := conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	w := bus.NewWorker(conn, bus.WorkerConfig{Stream: events.IngestStream, Consumer: events.IndexerConsumer, Concurrency: 1},
		func(ctx context.Context, env events.Envelope) error {
			c.mu.Lock()
			c.got = append(c.got, received{Seq: env.StreamSeq, MsgID: env.MsgID, Event: env.Event})
			c.mu.Unlock()
			var rec events.DocRecord
			switch ev := env.Event.(type) {
			case events.FileUpserted:
				rec = events.DocRecord{Repo: ev.Repo, Path: ev.Path, SHA256: ev.SHA256, Size: ev.Size, ModTime: ev.ModTime}
			case events.FileDeleted:
				rec = events.DocRecord{Repo: ev.Repo, Path: ev.Path, Deleted: true}
			case events.FileSkipped:
				rec = events.DocRecord{Repo: ev.Repo, Path: ev.Path, Size: ev.Size, ModTime: ev.ModTime, Skip: &events.Skip{Reason: ev.Reason, Detail: ev.Detail}}
			default:
				return nil
			}
			rec.SourceSeq = env.StreamSeq
			b, err := events.Encode(rec)
			if err == nil {
				_, err = docs.Put(ctx, events.DocKey(rec.Repo, rec.Path), b)
			}
			if err != nil {
				t.Errorf("store the record of %s: %v", rec.Path, err)
			}
			return nil
		})
	bustest.Run(t, "collector", w.Run)
	t.Cleanup(func() {
		// The worker dead-letters what it cannot decode.
		if s, err := conn.JS.Stream(context.Background(), events.DeadLetterStream); err == nil {
			if n := s.CachedInfo().State.Msgs; n > 0 {
				t.Errorf("%d undecodable events were dead-lettered", n)
			}
		}
	})
	return c
}

func (c *collector) all() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.got...)
}

// matching returns the events for path of kind k (any kind if k is "").
func (c *collector) matching(path string, k events.Kind) []received {
	var out []received
	for _, r := range c.all() {
		if r.path() == path && (k == "" || r.Event.EventKind() == k) {
			out = append(out, r)
		}
	}
	return out
}

// waitFor waits for an event satisfying ok and returns it.
func (c *collector) waitFor(t *testing.T, what string, ok func(received) bool) received {
	t.Helper()
	var found received
	bustest.Eventually(t, within, what, func() bool {
		for _, r := range c.all() {
			if ok(r) {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

func (c *collector) waitCount(t *testing.T, n int) {
	t.Helper()
	bustest.Eventually(t, within, "events received", func() bool { return len(c.all()) >= n })
}

// running is a Service running in the background.
type running struct {
	svc  *ingest.Service
	stop func()
}

// start runs a Service for cfg and waits for its initial scan. stop (also
// run at cleanup) cancels it and checks that Run returned cleanly.
func start(t *testing.T, conn *bus.Conn, cfg ingest.Config) running {
	t.Helper()
	return startLogged(t, conn, cfg, nil)
}

// startLogged is start with the service's logs going to logger.
func startLogged(t *testing.T, conn *bus.Conn, cfg ingest.Config, logger *slog.Logger) running {
	t.Helper()
	svc, err := ingest.New(conn, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(within):
				t.Errorf("Run did not return within %s of cancel", within)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-svc.ScanDone():
	case err := <-done:
		t.Fatalf("Run returned before the initial scan: %v", err)
	case <-time.After(within):
		t.Fatalf("initial scan not done within %s", within)
	}
	return running{svc: svc, stop: stop}
}

// writeTree creates files (path → content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func repoStats(t *testing.T, svc *ingest.Service, name string) ingest.RepoStats {
	t.Helper()
	for _, r := range svc.Stats().Repos {
		if r.Repo == name {
			return r
		}
	}
	t.Fatalf("no stats for repo %s", name)
	return ingest.RepoStats{}
}

func lastSeq(t *testing.T, conn *bus.Conn) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := conn.JS.Stream(ctx, events.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

func isKind(k events.Kind) func(received) bool {
	return func(r received) bool { return r.Event.EventKind() == k }
}
