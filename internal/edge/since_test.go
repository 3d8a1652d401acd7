package edge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/delta"
)

// versionOf is version n of a 60-line document: each version rewrites one
// line and appends one, so consecutive versions differ a little.
func versionOf(n int) string {
	var sb strings.Builder
	sb.WriteString("# Design\n\n")
	for i := range 60 {
		if i == 10+n {
			fmt.Fprintf(&sb, "Line %d was rewritten in version %d.\n", i, n)
			continue
		}
		fmt.Fprintf(&sb, "Line %d says something about the design of the system.\n", i)
	}
	for i := range n {
		fmt.Fprintf(&sb, "Appended in version %d.\n", i+1)
	}
	return sb.String()
}

// TestReadDocSinceHash drives read_doc's since_hash through a real edge on
// an embedded JetStream and an on-disk Badger.
func TestReadDocSinceHash(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	r := h.start(dir)
	path := map[string]any{"path": "docs/design.md"}
	reads := map[int]tools.ReadDocResult{}
	for v := 1; v <= 3; v++ {
		r.wait(h.put(mdRecord("app", "docs/design.md", versionOf(v), nil)))
		reads[v] = r.read(path)
	}
	since := func(hash string) map[string]any {
		return map[string]any{"path": "docs/design.md", "since_hash": hash}
	}

	// Since v1: a delta that turns what v1's read returned into v3's.
	got := r.read(since(reads[1].Hash))
	if got.Delta == nil || got.Content != "" || got.Unchanged {
		t.Fatalf("since v1: want a delta and no content, got %+v", got)
	}
	applied, err := delta.Apply(reads[1].Content, *got.Delta)
	if err != nil || applied != reads[3].Content {
		t.Fatalf("delta applied to v1 gives %q, %v; want v3", applied, err)
	}
	if got.Hash != reads[3].Hash || got.SinceHash != reads[1].Hash {
		t.Fatalf("hashes %s since %s, want %s since %s", got.Hash, got.SinceHash, reads[3].Hash, reads[1].Hash)
	}
	if got.FullTokens != reads[3].Tokens || got.Tokens <= 0 || got.Tokens >= got.FullTokens {
		t.Fatalf("tokens %d of %d full, want fewer (full read: %d)", got.Tokens, got.FullTokens, reads[3].Tokens)
	}

	// Since v3, the current version: unchanged, nothing to read.
	got = r.read(since(reads[3].Hash))
	if !got.Unchanged || got.Content != "" || got.Delta != nil || got.Tokens != 0 || got.Hash != reads[3].Hash {
		t.Fatalf("since current: want unchanged, got %+v", got)
	}

	// A hash the edge never served: 1006 with both hashes.
	unknown := strings.Repeat("0", 64)
	te := r.readErr(since(unknown))
	if te.Code != tools.CodeStaleCache || te.Data["expected_hash"] != unknown || te.Data["actual_hash"] != reads[3].Hash || te.Data["recovery"] == "" {
		t.Fatalf("unknown hash: got %v", te)
	}

	// since_hash with anchor is refused rather than half answered.
	if te := r.readErr(map[string]any{"path": "docs/design.md", "since_hash": reads[1].Hash, "anchor": "Design"}); te.Code != tools.CodeInvalidParams {
		t.Fatalf("since_hash with anchor: %v", te)
	}

	// The history is in the store: it survives a restart.
	r.stop()
	r = h.start(dir)
	got = r.read(since(reads[2].Hash))
	if got.Delta == nil {
		t.Fatalf("since v2 after restart: %+v", got)
	}
	if applied, err := delta.Apply(reads[2].Content, *got.Delta); err != nil || applied != reads[3].Content {
		t.Fatalf("after restart, delta applied to v2 gives %q, %v", applied, err)
	}

	// After more than DefaultHistoryVersions newer versions, v1 is gone:
	// 1006. v3 is then the oldest kept.
	last := 3 + DefaultHistoryVersions
	for v := 4; v <= last; v++ {
		r.wait(h.put(mdRecord("app", "docs/design.md", versionOf(v), nil)))
	}
	cur := r.read(path)
	for v := 1; v <= 2; v++ {
		te = r.readErr(since(reads[v].Hash))
		if te.Code != tools.CodeStaleCache || te.Data["expected_hash"] != reads[v].Hash || te.Data["actual_hash"] != cur.Hash {
			t.Fatalf("since v%d after %d versions: %v", v, last, te)
		}
	}
	got = r.read(since(reads[3].Hash))
	if got.Delta == nil {
		t.Fatalf("since v3, the oldest kept: %+v", got)
	}
	if applied, err := delta.Apply(reads[3].Content, *got.Delta); err != nil || applied != cur.Content {
		t.Fatalf("delta applied to v3 gives %q, %v", applied, err)
	}
}

// TestReadDocSinceHashSendsContentWhenDeltaIsNoSmaller: a file rewritten
// whole is sent whole, with its hashes.
func TestReadDocSinceHashSendsContentWhenDeltaIsNoSmaller(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.put(mdRecord("app", "docs/a.md", "# A\n\nold words\n", nil)))
	v1 := r.read(map[string]any{"path": "docs/a.md"})
	r.wait(h.put(mdRecord("app", "docs/a.md", "# B\n\nall new\n", nil)))
	got := r.read(map[string]any{"path": "docs/a.md", "since_hash": v1.Hash})
	if got.Delta != nil || got.Content != "# B\n\nall new" || got.Tokens != got.FullTokens || got.SinceHash != v1.Hash {
		t.Fatalf("got %+v", got)
	}
}

// TestStoreHistoryIsBounded: the store keeps at most Versions replaced
// versions and Bytes of them, newest first, and drops them with the
// document.
func TestStoreHistoryIsBounded(t *testing.T) {
	s, err := OpenStore("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.history = HistoryLimits{Versions: 3, Bytes: 120}
	put := func(rev uint64, content string) {
		t.Helper()
		rec := mdRecord("app", "docs/a.md", content, nil)
		if err := s.Apply([]Change{{Key: "app.a", Rev: rev, Doc: &Doc{Key: "app.a", Rev: rev, Record: rec}}}); err != nil {
			t.Fatal(err)
		}
	}
	revs := func() []uint64 {
		t.Helper()
		vs, err := s.History("app.a")
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, v := range vs {
			out = append(out, v.Rev)
		}
		return out
	}
	for rev := uint64(1); rev <= 5; rev++ {
		put(rev, fmt.Sprintf("v%d", rev))
	}
	if got := fmt.Sprint(revs()); got != "[4 3 2]" {
		t.Fatalf("kept %s, want [4 3 2]", got)
	}
	// Rewriting the same content keeps no copy of it.
	put(6, "v5")
	if got := fmt.Sprint(revs()); got != "[4 3 2]" {
		t.Fatalf("after a same-content write: %s", got)
	}
	// Versions take their content and 32 bytes: a 60-byte one crowds the
	// older ones out of the 120-byte limit.
	put(7, strings.Repeat("x", 60))
	if got := fmt.Sprint(revs()); got != "[6 4 3]" {
		t.Fatalf("kept %s, want [6 4 3]", got)
	}
	put(8, "v8")
	if got := fmt.Sprint(revs()); got != "[7]" {
		t.Fatalf("after a 60-byte version: kept %s, want [7]", got)
	}
	// A change retried after its transaction filled up records the
	// replaced version once.
	rec := mdRecord("app", "a.md", "v9", nil)
	c := Change{Key: "app.a", Rev: 9, Doc: &Doc{Key: "app.a", Rev: 9, Record: rec}}
	if err := s.applyInBatches(3, func(txn *badger.Txn, i int) error {
		if i < 2 {
			return s.keepReplaced(txn, c)
		}
		return setChange(txn, c)
	}, func(int) string { return "retried change" }); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(revs()); got != "[8]" {
		t.Fatalf("after a retried change: kept %s, want [8]", got)
	}
	if err := s.Apply([]Change{{Key: "app.a", Rev: 10}}); err != nil {
		t.Fatal(err)
	}
	if got := revs(); len(got) != 0 {
		t.Fatalf("after removal: %v", got)
	}
}

// BenchmarkStoreApplyUpdates measures what keeping history adds to the
// store's writes: each op replaces 100 documents of about 6 KB with a new
// version, with the default history and with none.
func BenchmarkStoreApplyUpdates(b *testing.B) {
	for _, bc := range []struct {
		name   string
		limits HistoryLimits
	}{{"history", HistoryLimits{Versions: DefaultHistoryVersions, Bytes: DefaultHistoryBytes}}, {"none", HistoryLimits{Versions: -1}}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := OpenStore("", nil)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			s.history = bc.limits
			rev := uint64(0)
			round := func(v int) {
				changes := make([]Change, 100)
				for i := range changes {
					rev++
					key := fmt.Sprintf("app.d%03d", i)
					rec := mdRecord("app", fmt.Sprintf("d%03d.md", i), versionOf(v%40)+strings.Repeat("filler line\n", 300), nil)
					changes[i] = Change{Key: key, Rev: rev, Doc: &Doc{Key: key, Rev: rev, Record: rec}}
				}
				if err := s.Apply(changes); err != nil {
					b.Fatal(err)
				}
			}
			round(0)
			v := 0
			for b.Loop() {
				v++
				round(v)
			}
		})
	}
}

// BenchmarkReadDocSinceHash reads a 2,000-line document with since_hash:
// the current hash, the previous version's and the oldest kept one's
// (which is found last), against a full read.
func BenchmarkReadDocSinceHash(b *testing.B) {
	h := newHarness(b)
	r := h.start("")
	big := func(v int) string {
		var sb strings.Builder
		sb.WriteString("# Big\n\n")
		for i := range 2000 {
			if i%250 == v%250 {
				fmt.Fprintf(&sb, "L%d edited in v%d.\n", i, v)
				continue
			}
			fmt.Fprintf(&sb, "L%d of the design.\n", i)
		}
		return sb.String()
	}
	var hashes []string
	for v := range DefaultHistoryVersions + 1 {
		r.wait(h.put(mdRecord("app", "docs/big.md", big(v), nil)))
		hashes = append(hashes, r.read(map[string]any{"path": "docs/big.md"}).Hash)
	}
	last := len(hashes) - 1
	for _, c := range []struct {
		name  string
		since string
	}{{"full", ""}, {"unchanged", hashes[last]}, {"previous", hashes[last-1]}, {"oldest", hashes[0]}} {
		b.Run(c.name, func(b *testing.B) {
			args := map[string]any{"path": "docs/big.md"}
			if c.since != "" {
				args["since_hash"] = c.since
			}
			res := r.read(args)
			for b.Loop() {
				if _, err := r.call(tools.ReadDoc, args); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Tokens), "tokens_sent")
		})
	}
}
