package edge

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/localdb"
	"github.com/cuedeck/cuedeck/internal/logtest"
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
			// Documents too large for the tables live in the value log.
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range 4 {
				var body strings.Builder
				fmt.Fprintf(&body, "# Large %d\n\n", i)
				for body.Len() < 200<<10 {
					fmt.Fprintf(&body, "w%x ", rng.Uint64())
				}
				docs = append(docs, mdRecord("app", fmt.Sprintf("docs/large%d.md", i), body.String()+"\n", nil))
			}
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
