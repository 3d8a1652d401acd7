package edge

import (
	"context"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/tools"
)

func TestProgressNotice(t *testing.T) {
	indexing := Progress{Indexed: 1200, Pending: 2779, Model: "builtin:use-lite", Embeddable: 1200, Vectors: 180, VectorsPending: 1020}
	vectorsOnly := Progress{Indexed: 3979, Model: "builtin:use-lite", Embeddable: 3530, Vectors: 1201, VectorsPending: 2329}
	noModel := Progress{Indexed: 10, Pending: 5}
	for _, c := range []struct {
		name   string
		p      Progress
		mode   string
		noHits bool
		want   string // prefix; "" for no notice
	}{
		{"empty while indexing", indexing, "keyword", true, "no match yet: indexing 1,200 of 3,979 files. "},
		{"empty hybrid while indexing", indexing, "hybrid", true, "no match yet: indexing 1,200 of 3,979 files; vectors 15 %. "},
		{"hits while indexing", indexing, "keyword", false, "indexing: 1,200 of 3,979 files. "},
		{"hits semantic while indexing", indexing, "semantic", false, "indexing: 1,200 of 3,979 files; vectors 15 %. "},
		{"vectors trail, hybrid", vectorsOnly, "hybrid", false, "vectors: 1,201 of 3,530 documents (34 %)"},
		{"vectors trail, rrf, no hits", vectorsOnly, "rrf", true, "vectors: 1,201 of 3,530 documents (34 %)"},
		{"vectors trail, keyword", vectorsOnly, "keyword", false, ""},
		{"no embedding model", noModel, "hybrid", false, "indexing: 10 of 15 files. "},
		{"listing", Progress{Listing: true}, "keyword", true, "no match yet: indexing 0 of 0 files found so far (the scan is still listing the repository). "},
		{"caught up", Progress{Indexed: 3979, Model: "m", Embeddable: 3979, Vectors: 3979}, "hybrid", true, ""},
		{"requests in flight, every document with vectors", Progress{Indexed: 3979, Model: "m", Embeddable: 3530, Vectors: 3530, VectorsPending: 449}, "hybrid", false, ""},
	} {
		got := c.p.Notice(c.mode, c.noHits)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: notice %q, want it to start with %q", c.name, got, c.want)
		}
	}
}

// TestReadContextNoticeOnlyWhileBehind drives an edge whose progress the
// test sets: the notice is collected while files are to come and not
// once everything is indexed, and the answer is the same either way.
func TestReadContextNoticeOnlyWhileBehind(t *testing.T) {
	h := newHarness(t)
	h.put(mdRecord("app", "docs/guide.md", "# Guide\n\nHow to moor a zeppelin.\n", nil))
	r := h.start("")
	var p Progress
	e := New(r.m, nil, WithProgress(func() Progress { return p }))
	r.wait(h.put(mdRecord("app", "docs/other.md", "# Other\n\nNothing here.\n", nil)))

	call := func(q string) (string, []string) {
		ctx, notices := tools.WithNotices(context.Background())
		out, err := e.Call(ctx, tools.ReadContext, []byte(`{"query":"`+q+`","mode":"keyword"}`))
		if err != nil {
			t.Fatal(err)
		}
		return string(out), notices.Texts()
	}
	p = Progress{Indexed: 2, Pending: 3}
	behind, notices := call("zeppelin")
	if len(notices) != 1 || !strings.HasPrefix(notices[0], "indexing: 2 of 5 files") {
		t.Errorf("notices while behind: %q", notices)
	}
	if out, notices := call("airship"); out != "[]" || len(notices) != 1 || !strings.HasPrefix(notices[0], "no match yet: indexing 2 of 5 files") {
		t.Errorf("empty answer while behind: %s %q", out, notices)
	}
	p = Progress{Indexed: 5}
	caught, notices := call("zeppelin")
	if len(notices) != 0 || caught != behind {
		t.Errorf("caught up: %s %q; behind it was %s", caught, notices, behind)
	}
}

// BenchmarkProgressNotice is what the notice adds to a read_context call:
// caught up (the common case: one call of the progress function), and
// while indexing (the notice is written).
func BenchmarkProgressNotice(b *testing.B) {
	args := []byte(`{"query":"how do we roll back a release","mode":"hybrid","limit":5}`)
	out := []byte(`[{"path":"docs/release.md","hash":"abc","tokens":812,"anchors":["Release","Rollback"],"score":0.8}]`)
	for _, c := range []struct {
		name string
		p    Progress
	}{
		{"caught-up", Progress{Indexed: 3979, Model: "m", Embeddable: 3979, Vectors: 3979}},
		{"indexing", Progress{Indexed: 1200, Pending: 2779, Model: "m", Embeddable: 1200, Vectors: 180, VectorsPending: 1020}},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := &Edge{progress: func() Progress { return c.p }}
			ctx, _ := tools.WithNotices(context.Background())
			for b.Loop() {
				e.noteProgress(ctx, args, out)
			}
		})
	}
}
