package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/localdb"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// A damaged store is never served and never crashes the edge: a garbled
// or truncated table, or a garbled value log, is moved aside, with an
// error logged, and the edge replays cue_docs into a new store, answering
// every document with its current content.
func TestDamagedStoreIsMovedAsideAndRebuilt(t *testing.T) {
	for _, damage := range []string{"garbled", "truncated", "value log garbled"} {
		t.Run(damage, func(t *testing.T) {
			h := newHarness(t)
			dir := filepath.Join(t.TempDir(), "edge")
			r := h.start(dir)
			docs := fixtureDocs()
			for i := range 300 {
				n := strconv.Itoa(i)
				docs = append(docs, mdRecord("app", "docs/many/note"+n+".md", "# Note "+n+"\n\nBody of note "+n+" about zanzibar.\n", nil))
			}
			docs = append(docs, largeDocs(rand.New(rand.NewPCG(1, 2)), 4)...)
			r.wait(h.putAll(docs))
			r.stop()
			pattern := "*.sst"
			if damage == "value log garbled" {
				pattern = "*.vlog"
			}
			files, _ := filepath.Glob(filepath.Join(dir, pattern))
			if len(files) == 0 {
				t.Fatalf("no %s written at the stop", pattern)
			}
			for _, p := range files {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if damage != "truncated" {
					for i := len(b) / 3; i < min(len(b)/3+4096, len(b)); i++ {
						b[i] ^= 0x5a
					}
				} else {
					b = b[:len(b)/2]
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			log := &logtest.Buffer{}
			r = h.startLogged(dir, log)
			<-r.m.Ready()
			if !strings.Contains(log.String(), "damaged") {
				t.Fatalf("no word of the damage in the log:\n%s", log.String())
			}
			if aside := localdb.AsideOf(dir); len(aside) != 1 {
				t.Fatalf("the damaged store was not moved aside: %v", aside)
			}
			for _, d := range docs {
				if res := r.read(map[string]any{"path": d.Path}); res.Content != strings.TrimSpace(d.Content) {
					t.Fatalf("%s after the rebuild: %q", d.Path, res.Content)
				}
			}
			got := paths(r.search(map[string]any{"query": "zanzibar", "limit": 50}))
			if !slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, "docs/many/") }) {
				t.Fatalf("search after the rebuild: %v", got)
			}
		})
	}
}

// A value garbled on disk under a running edge is found when read (the
// store checks what it reads against its checksums): read_doc answers
// the document from cue_docs, its source, rather than refuse it, and the
// edge empties its store and replays cue_docs into it while it runs, so
// that every document reads back sound from the store again.
func TestDamageFoundWhileRunningIsRebuiltFromTheSource(t *testing.T) {
	h := newHarness(t)
	dir := filepath.Join(t.TempDir(), "edge")
	log := &logtest.Buffer{}
	// hold, once set, holds the replay of cue_docs until release.
	var hold atomic.Bool
	release := make(chan struct{})
	holdReplay := func(ctx context.Context, bucket string, _ int) {
		if bucket == events.DocsBucket && hold.Load() {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	}
	m, err := Open(Config{Dir: dir, Docs: h.kv, Blobs: h.obs, Logger: slog.New(slog.NewTextHandler(log, nil)), MaxContentInMemory: 1 << 10, BeforeApply: holdReplay})
	if err != nil {
		t.Fatal(err)
	}
	r := &running{t: t, m: m, e: New(m, testLogger(t))}
	r.run()
	defer r.stop()
	defer func() {
		if hold.Load() {
			close(release)
		}
	}()
	rng := rand.New(rand.NewPCG(3, 4))
	docs := largeDocs(rng, 3)
	rev := h.putAll(docs)
	r.wait(rev)
	if err := m.store.db.Sync(); err != nil {
		t.Fatal(err)
	}
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	garbled := 0
	for _, p := range vlogs {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		if fi.Size() > 64<<10 {
			junk := make([]byte, 64<<10)
			for i := range junk {
				junk[i] = byte(rng.Uint32())
			}
			// Inside the values, past the file's header.
			if _, err := f.WriteAt(junk, 32<<10); err != nil {
				t.Fatal(err)
			}
			garbled++
		}
		f.Close()
	}
	if garbled == 0 {
		t.Fatalf("no value log holds the documents: %v", vlogs)
	}
	damaged := func() (n int) {
		for _, d := range docs {
			if _, _, _, err := m.store.Content(events.DocKey(d.Repo, d.Path)); errors.Is(err, localdb.ErrDamaged) {
				n++
			}
		}
		return n
	}
	if damaged() == 0 {
		t.Fatal("the garbled value log was read back as sound: nothing was damaged")
	}
	// The first read finds the damage and is answered from cue_docs.
	hold.Store(true)
	if res := r.read(map[string]any{"path": docs[0].Path}); res.Content != strings.TrimSpace(docs[0].Content) {
		t.Fatalf("%s read while the store is damaged: %d bytes, want its %d", docs[0].Path, len(res.Content), len(strings.TrimSpace(docs[0].Content)))
	}
	// The store emptied and its replay held: every document is still
	// served, from cue_docs.
	bustest.Eventually(t, 20*time.Second, "the damaged store emptied", func() bool {
		m.mu.RLock()
		replays := m.startOvers
		m.mu.RUnlock()
		return replays > 0 && !m.Status().StoreDamaged
	})
	for _, d := range docs {
		if res := r.read(map[string]any{"path": d.Path}); res.Content != strings.TrimSpace(d.Content) {
			t.Fatalf("%s read while the store is rebuilt: %d bytes, want its %d", d.Path, len(res.Content), len(strings.TrimSpace(d.Content)))
		}
	}
	hold.Store(false)
	close(release)
	bustest.Eventually(t, 20*time.Second, "the store rebuilt from cue_docs", func() bool {
		m.mu.RLock()
		replays := m.startOvers
		m.mu.RUnlock()
		if st := m.Status(); replays == 0 || st.StoreDamaged || st.Docs != len(docs) || st.Revision != rev {
			return false
		}
		for _, d := range docs {
			content, _, ok, err := m.store.Content(events.DocKey(d.Repo, d.Path))
			if err != nil || !ok || strings.TrimSpace(content) != strings.TrimSpace(d.Content) {
				return false
			}
		}
		return true
	})
	for _, d := range docs {
		if res := r.read(map[string]any{"path": d.Path}); res.Content != strings.TrimSpace(d.Content) {
			t.Fatalf("%s after the rebuild: %d bytes, want its %d", d.Path, len(res.Content), len(strings.TrimSpace(d.Content)))
		}
	}
	if n := strings.Count(log.String(), "emptying it and replaying cue_docs into it"); n != 1 {
		t.Fatalf("the damage was logged %d times, want once:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "emptying the edge's damaged store and replaying the bucket into it") {
		t.Fatalf("no word of the replay in the log:\n%s", log.String())
	}
	// The damage is gone from the disk, not only from the reads.
	r.stop()
	again := h.open(dir)
	if st := again.m.Status(); st.Docs != len(docs) {
		t.Fatalf("the rebuilt store reopened holding %d documents, want %d", st.Docs, len(docs))
	}
	if aside := localdb.AsideOf(dir); len(aside) != 0 {
		t.Fatalf("the rebuilt store was found damaged at its next start and moved aside: %v", aside)
	}
}

// largeDocs are n documents of 200 KiB of words drawn from rng: too large
// for the store's tables, they live in its value log.
func largeDocs(rng *rand.Rand, n int) []events.DocRecord {
	var docs []events.DocRecord
	for i := range n {
		var body strings.Builder
		fmt.Fprintf(&body, "# Large %d\n\n", i)
		for body.Len() < 200<<10 {
			fmt.Fprintf(&body, "w%x ", rng.Uint64())
		}
		docs = append(docs, mdRecord("app", fmt.Sprintf("docs/large%d.md", i), body.String()+"\n", nil))
	}
	return docs
}
