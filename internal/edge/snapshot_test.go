package edge

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// startLogged is harness.start with the edge's log kept in log.
func (h *harness) startLogged(dir string, log *logtest.Buffer) *running {
	h.t.Helper()
	logger := slog.New(slog.NewTextHandler(log, nil))
	m, err := Open(Config{Dir: dir, Docs: h.kv, Blobs: h.obs, Vectors: h.vkv, Memories: h.mkv, Logger: logger})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: h.t, m: m, e: New(m, logger), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- m.Run(ctx) }()
	h.t.Cleanup(func() { r.stop() })
	return r
}

var snapshotQueries = []string{"login", "token", "rollback", "error codes", "deploy", "logn", "api", "release notes"}

func answers(r *running) string {
	var b strings.Builder
	for _, q := range snapshotQueries {
		b.Write(must(json.Marshal(r.search(map[string]any{"query": q, "limit": 50, "mode": "keyword"}))))
		b.WriteByte('\n')
	}
	return b.String()
}

// stoppedAfterIndexing runs an edge in a new directory over the fixture's
// documents and stops it cleanly: where it kept its store, the store's
// revision, and what it answered.
func stoppedAfterIndexing(t *testing.T) (h *harness, dir string, rev uint64, want string) {
	t.Helper()
	h = newHarness(t)
	dir = filepath.Join(t.TempDir(), "edge")
	first := h.start(dir)
	rev = h.putAll(fixtureDocs())
	first.wait(rev)
	want = answers(first)
	first.stop()
	return h, dir, rev, want
}

func TestCleanRestartLoadsTheSavedKeywordIndex(t *testing.T) {
	h, dir, rev, want := stoppedAfterIndexing(t)
	saved := filepath.Join(dir, snapshotName)
	if _, err := os.Stat(saved); err != nil {
		t.Fatalf("a clean stop left no keyword index: %v", err)
	}

	var log logtest.Buffer
	second := h.startLogged(dir, &log)
	if !strings.Contains(log.String(), "saved_keyword_index=true") {
		t.Fatalf("the restart analysed every document again:\n%s", log.String())
	}
	if _, err := os.Stat(saved); !os.IsNotExist(err) {
		t.Fatalf("the loaded keyword index is still on disk (%v): a crash would find it", err)
	}
	if got := answers(second); got != want {
		t.Fatalf("answers from the saved index:\n%s\nbefore the restart:\n%s", got, want)
	}
	// It goes on indexing as a rebuilt one would.
	rev = h.put(mdRecord("app", "docs/release.md", "# Release notes\n\nRollback steps for the login service.\n", nil))
	second.wait(rev)
	fresh := h.start("")
	fresh.wait(rev)
	if got, want := answers(second), answers(fresh); got != want {
		t.Fatalf("after a change, the restarted edge answers\n%s\na fresh edge\n%s", got, want)
	}
}

// A keyword index an older release saved (S2, under its old name) is not
// read, and is removed rather than left on disk for good.
func TestKeywordIndexOfAnOlderReleaseIsRemoved(t *testing.T) {
	h, dir, rev, want := stoppedAfterIndexing(t)
	if err := os.Remove(filepath.Join(dir, snapshotName)); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, oldSnapshotName)
	f, err := os.Create(old)
	if err != nil {
		t.Fatal(err)
	}
	z := s2.NewWriter(f)
	if err := fixtureIndex(t).WriteSnapshot(z, rev); err != nil {
		t.Fatal(err)
	}
	z.Close()
	f.Close()

	var log logtest.Buffer
	second := h.startLogged(dir, &log)
	if !strings.Contains(log.String(), "saved_keyword_index=false") {
		t.Fatalf("the older release's index was loaded:\n%s", log.String())
	}
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the older release's index is still there: %v", err)
	}
	if got := answers(second); got != want {
		t.Fatalf("the rebuilt index answers\n%s\nbefore\n%s", got, want)
	}
}

func TestSavedKeywordIndexThatDoesNotMatchIsRebuilt(t *testing.T) {
	for name, spoil := range map[string]func(t *testing.T, path string, rev uint64){
		"damaged": func(t *testing.T, path string, _ uint64) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x20
			os.WriteFile(path, b, 0o600)
		},
		"of an older revision": func(t *testing.T, path string, rev uint64) {
			writeSnapshot(t, path, fixtureIndex(t), rev-1)
		},
		"of other documents": func(t *testing.T, path string, rev uint64) {
			writeSnapshot(t, path, search.NewIndex(), rev)
		},
	} {
		t.Run(name, func(t *testing.T) {
			h, dir, rev, want := stoppedAfterIndexing(t)
			spoil(t, filepath.Join(dir, snapshotName), rev)

			var log logtest.Buffer
			second := h.startLogged(dir, &log)
			if !strings.Contains(log.String(), "saved_keyword_index=false") {
				t.Fatalf("a saved index %s was loaded:\n%s", name, log.String())
			}
			if got := answers(second); got != want {
				t.Fatalf("answers after the rebuild:\n%s\nbefore the restart:\n%s", got, want)
			}
		})
	}
}

func fixtureIndex(t *testing.T) *search.Index {
	ix := search.NewIndex()
	for _, rec := range fixtureDocs() {
		ix.Upsert(events.DocKey(rec.Repo, rec.Path), fieldsOf(&rec))
	}
	return ix
}

func writeSnapshot(t *testing.T, path string, ix *search.Index, stamp uint64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := zstd.NewWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.WriteSnapshot(z, stamp); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}
