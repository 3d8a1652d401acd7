package scenes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/scene"
)

// opsDoc is a 40-line doc whose line 20 (counting the heading as 1) says
// which version it is.
func opsDoc(version string) string {
	var b strings.Builder
	b.WriteString("# Ops\n\n")
	for i := range 38 {
		if i == 17 {
			fmt.Fprintf(&b, "The deploy runbook is at version %s.\n", version)
			continue
		}
		fmt.Fprintf(&b, "Step %d of the runbook keeps the cluster healthy.\n", i)
	}
	return b.String()
}

// TestSceneSendsDeltasToASessionThatReadTheFiles: the same session asking
// again gets its files as unchanged, then as a delta once one changes;
// another session, and one that was evicted, gets them whole.
func TestSceneSendsDeltasToASessionThatReadTheFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".cuedeck/cards/a1b2c3.md": card("a1b2c3", "active", "Ship the release. See @docs/ops.md."),
		"docs/ops.md":              opsDoc("one"),
	})
	none := tools.CallerFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, &tools.Error{Code: tools.CodeMethodMissing}
	})
	tool := Tool(none, openRoot(t, dir).FS(), "app", nil)
	scene := func(session string) tools.GetSceneResult {
		t.Helper()
		ctx := access.WithIdentity(context.Background(), access.Identity{Client: "token:team", Session: session})
		out, err := tool.Call(ctx, tools.GetScene, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var res tools.GetSceneResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	body := "Step 30 of the runbook keeps the cluster healthy."

	first := scene("A")
	if !strings.Contains(first.Markdown, body) || strings.Contains(first.Markdown, UnchangedNote) {
		t.Fatalf("first scene should hold the doc whole:\n%s", first.Markdown)
	}

	again := scene("A")
	if strings.Contains(again.Markdown, body) || strings.Count(again.Markdown, UnchangedNote) != 2 {
		t.Fatalf("same session, nothing changed: want the card and doc marked unchanged:\n%s", again.Markdown)
	}
	if again.Tokens >= first.Tokens {
		t.Fatalf("unchanged scene costs %d tokens, the first %d", again.Tokens, first.Tokens)
	}

	writeFiles(t, dir, map[string]string{"docs/ops.md": opsDoc("two")})
	changed := scene("A")
	if !strings.Contains(changed.Markdown, "L20: The deploy runbook is at version two.") || strings.Contains(changed.Markdown, body) {
		t.Fatalf("same session, doc changed: want its delta only:\n%s", changed.Markdown)
	}
	if strings.Count(changed.Markdown, UnchangedNote) != 1 {
		t.Fatalf("the card is still unchanged:\n%s", changed.Markdown)
	}

	t.Logf("scene tokens: first %d, unchanged %d, one line changed %d", first.Tokens, again.Tokens, changed.Tokens)
	if testing.Verbose() {
		t.Logf("page with the delta:\n%s", changed.Markdown)
	}

	// The same token in another session has read nothing yet.
	if other := scene("B"); !strings.Contains(other.Markdown, body) || !strings.Contains(other.Markdown, "version two") {
		t.Fatalf("another session should get the doc whole:\n%s", other.Markdown)
	}
	// And after A's delta, A holds version two: unchanged again.
	if again := scene("A"); strings.Count(again.Markdown, UnchangedNote) != 2 {
		t.Fatalf("after the delta, A holds the new version:\n%s", again.Markdown)
	}
}

func TestSeenIsBounded(t *testing.T) {
	s := &Seen{MaxSessions: 2, MaxFiles: 2, MaxBytes: 20}
	f := func(path, content string) scene.FocusFile { return scene.FocusFile{Path: path, Content: content} }
	holds := func(session, path, content string) bool {
		return s.since(session, []scene.FocusFile{f(path, content)})[0].Content == UnchangedNote
	}
	s.sent("A", []scene.FocusFile{f("a.md", "aaa"), f("b.md", "bbb"), f("c.md", "ccc")})
	if !holds("A", "a.md", "aaa") || !holds("A", "b.md", "bbb") || holds("A", "c.md", "ccc") {
		t.Fatal("a session remembers its first MaxFiles files only")
	}
	s.sent("B", []scene.FocusFile{f("a.md", "aaa")})
	s.sent("C", []scene.FocusFile{f("a.md", "aaa")})
	if holds("A", "a.md", "aaa") || !holds("B", "a.md", "aaa") || !holds("C", "a.md", "aaa") {
		t.Fatal("the least recently used session is evicted beyond MaxSessions")
	}
	// Texts are kept within MaxBytes: an evicted text leaves the file to
	// be sent whole when it changes.
	s.sent("B", []scene.FocusFile{f("big.md", "0123456789\n0123456789")}) // 21 bytes: not kept
	got := s.since("B", []scene.FocusFile{f("big.md", "0123456789\nchanged")})[0].Content
	if got != "0123456789\nchanged" {
		t.Fatalf("without the old text the file goes whole, got %q", got)
	}
	if s.bytes > s.MaxBytes {
		t.Fatalf("%d bytes kept, over %d", s.bytes, s.MaxBytes)
	}
}
