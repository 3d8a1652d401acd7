package extractor

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
)

// A test run that panics names its files in the batch's extraction and in
// every memory written from it, relative to the session's directory, for
// the edges' file importance; a passing run names none.
func TestErrorStackFilesReachTheMemories(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := newService(t, conn, nil, Config{})
	run(t, s)

	passing := fileBatch(t, "app", "3b9d6c2e-41f7-4a8e-9d10-5e2f7c8a9b01", "testdata/decisions.jsonl")
	if rec := extractOne(t, conn, s, passing); len(rec.ErrorFiles) != 0 {
		t.Fatalf("a passing session names error files %q", rec.ErrorFiles)
	}
	for _, m := range memories(t, conn) {
		if len(m.ErrorFiles) != 0 || !m.ErrorSeen.IsZero() {
			t.Fatalf("memory %q has error files %q at %v", m.Content, m.ErrorFiles, m.ErrorSeen)
		}
	}

	failing := fileBatch(t, "app", "9c1d0000-41f7-4a8e-9d10-5e2f7c8a9b02", "testdata/decisions.jsonl")
	failing.Session = "9c1d0000-41f7-4a8e-9d10-5e2f7c8a9b02"
	panicOut, _ := json.Marshal("--- FAIL: TestRetry (0.00s)\npanic: runtime error: index out of range [3] with length 3\n\ngoroutine 7 [running]:\napp/internal/client.(*retrier).RoundTrip(0xc000012345)\n\t/home/dev/src/app/internal/client/retry.go:31 +0x1c5\napp/internal/client.(*Client).Get(...)\n\t/home/dev/src/app/internal/client/client.go:16\ntesting.tRunner(0xc0000a8000, 0x5d3f20)\n\t/usr/local/go/src/testing/testing.go:1690 +0xf4\nFAIL\tapp/internal/client\t0.02s")
	for i, l := range failing.Lines {
		line := strings.ReplaceAll(string(l), "3b9d6c2e-41f7-4a8e-9d10-5e2f7c8a9b01", failing.Session)
		line = strings.Replace(line, `"content": "ok  \tapp/internal/client\t0.31s"`, `"is_error": true, "content": `+string(panicOut), 1)
		failing.Lines[i] = json.RawMessage(line)
	}
	rec := extractOne(t, conn, s, failing)
	want := []string{"internal/client/retry.go", "internal/client/client.go"}
	if !slices.Equal(rec.ErrorFiles, want) {
		t.Fatalf("extraction names error files %q, want %q", rec.ErrorFiles, want)
	}
	// The second session repeats the first's decisions: the memories are
	// the same ones, now carrying the stack's files.
	mems := memories(t, conn)
	if len(mems) == 0 {
		t.Fatal("no memories")
	}
	for _, m := range mems {
		if !slices.Equal(m.ErrorFiles, want) || !m.ErrorSeen.Equal(rec.ExtractedAt) {
			t.Errorf("memory %q has error files %q at %v, want %q at %v", m.Content, m.ErrorFiles, m.ErrorSeen, want, rec.ExtractedAt)
		}
	}
}
