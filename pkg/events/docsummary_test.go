package events

import (
	"reflect"
	"strings"
	"testing"
)

func TestDocSummaryRoundTrips(t *testing.T) {
	for _, rec := range []DocRecord{
		{Repo: "r", Path: "a.md", SHA256: strings.Repeat("a", 64), SourceSeq: 1795657088479918, Kind: DocMarkdown, Tokens: 1234},
		{Repo: "r", Path: "c.go", SHA256: strings.Repeat("c", 64), SourceSeq: 3, Kind: DocCode,
			Warnings: []string{"invalid UTF-8 replaced", "frontmatter: yaml: line 2:\n\tmapping values are not allowed"}},
		{Repo: "r", Path: "a.md", Deleted: true, SourceSeq: 7},
		{Repo: "r", Path: "b.png", Skip: &Skip{Reason: SkipBinary, Detail: "NUL at 3"}, SourceSeq: 9},
	} {
		h := rec.Summary().Headers()
		for name, v := range h {
			if strings.ContainsAny(v, "\r\n") {
				t.Errorf("header %s holds a line end: %q", name, v)
			}
		}
		got, ok := ParseDocSummary(func(n string) string { return h[n] })
		if !ok || !got.Complete || !reflect.DeepEqual(got, rec.Summary()) {
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

// An entry written before the summary carried kind, tokens and warnings,
// or whose warnings are too long for headers, reads as an incomplete
// summary: its reader reads the record whole for them.
func TestDocSummaryIncomplete(t *testing.T) {
	old := map[string]string{HeaderDocState: DocIndexed, HeaderDocSeq: "4", HeaderDocSHA256: "ab"}
	got, ok := ParseDocSummary(func(n string) string { return old[n] })
	if !ok || got.Complete || got.SHA256 != "ab" || got.SourceSeq != 4 {
		t.Errorf("an entry of the first summary version: %+v, %v", got, ok)
	}
	long := DocRecord{Repo: "r", Path: "x.md", SourceSeq: 5, Kind: DocMarkdown, Warnings: []string{strings.Repeat("w", maxSummaryHeaders)}}
	h := long.Summary().Headers()
	got, ok = ParseDocSummary(func(n string) string { return h[n] })
	if !ok || got.Complete || h[HeaderDocWarnings] != "" {
		t.Errorf("warnings over the bound: %+v, %v, headers %d bytes of warnings", got, ok, len(h[HeaderDocWarnings]))
	}
}
