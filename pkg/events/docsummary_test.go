package events

import (
	"strings"
	"testing"
)

func TestDocSummaryRoundTrips(t *testing.T) {
	for _, rec := range []DocRecord{
		{Repo: "r", Path: "a.md", SHA256: strings.Repeat("a", 64), SourceSeq: 1795657088479918},
		{Repo: "r", Path: "a.md", Deleted: true, SourceSeq: 7},
		{Repo: "r", Path: "b.png", Skip: &Skip{Reason: SkipBinary, Detail: "NUL at 3"}, SourceSeq: 9},
	} {
		h := rec.Summary().Headers()
		got, ok := ParseDocSummary(func(n string) string { return h[n] })
		if !ok || got != rec.Summary() {
			t.Errorf("%+v: read back %+v, %v", rec.Summary(), got, ok)
		}
	}
	if _, ok := ParseDocSummary(func(string) string { return "" }); ok {
		t.Error("an entry without headers has a summary")
	}
	bad := map[string]string{HeaderDocState: "indexed", HeaderDocSeq: "x"}
	if _, ok := ParseDocSummary(func(n string) string { return bad[n] }); ok {
		t.Error("a malformed sequence was read")
	}
}
