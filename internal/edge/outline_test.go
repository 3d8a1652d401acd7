package edge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// guideDoc is a document long enough that its outline is much shorter.
func guideDoc() string {
	var b strings.Builder
	b.WriteString("# Operations guide\n\nHow the team runs the service day to day.\n")
	for i, name := range []string{"Deploying", "Rolling back", "Paging"} {
		fmt.Fprintf(&b, "\n## %s\n\n%s is described here first. ", name, name)
		for j := range 12 {
			fmt.Fprintf(&b, "Step %d of part %d explains one more detail at some length, so that the section is long. ", j, i)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestReadDocOutline reads a document and one of its sections as outlines:
// the headings with their first sentences and the file's line ranges, the
// text's hash as a full read gives it, and the tokens of both forms.
func TestReadDocOutline(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.put(mdRecord("app", "docs/ops.md", guideDoc(), nil)))

	full := r.read(map[string]any{"path": "docs/ops.md"})
	out := r.read(map[string]any{"path": "docs/ops.md", "detail": "outline"})
	want := "outline of docs/ops.md (markdown, 15 lines)\n" +
		"# Operations guide — How the team runs the service day to day. … L1-15\n" +
		"## Deploying — Deploying is described here first. … L5-7\n" +
		"## Rolling back — Rolling back is described here first. … L9-11\n" +
		"## Paging — Paging is described here first. … L13-15\n"
	if out.Content != want {
		t.Fatalf("outline:\n%s\nwant:\n%s", out.Content, want)
	}
	if out.Detail != tools.DetailOutline || out.Hash != full.Hash || out.FullTokens != full.Tokens || out.Tokens != tokens.Count(want) {
		t.Fatalf("outline result %+v; the full read had hash %s, %d tokens", out, full.Hash, full.Tokens)
	}
	if full.Detail != "" || full.FullTokens != 0 {
		t.Fatalf("a full read reports detail %q, full_tokens %d", full.Detail, full.FullTokens)
	}
	t.Logf("docs/ops.md: %d tokens whole, %d as outline", out.FullTokens, out.Tokens)

	sec := r.read(map[string]any{"path": "docs/ops.md", "anchor": "Rolling back", "detail": "outline"})
	wantSec := "outline of docs/ops.md L9-11 (markdown, 3 lines)\n" +
		"## Rolling back — Rolling back is described here first. … L9-11\n"
	if sec.Content != wantSec {
		t.Fatalf("section outline:\n%s\nwant:\n%s", sec.Content, wantSec)
	}
	whole := r.read(map[string]any{"path": "docs/ops.md", "anchor": "Rolling back"})
	if sec.Hash != whole.Hash || sec.FullTokens != whole.Tokens || *sec.LineRange != *whole.LineRange || sec.Tokens >= whole.Tokens {
		t.Fatalf("section outline %+v, section %+v", sec, whole)
	}

	te := r.readErr(map[string]any{"path": "docs/ops.md", "detail": "summary"})
	if te.Code != tools.CodeInvalidParams || !strings.Contains(te.Error(), "detail") {
		t.Fatalf("unknown detail: %v", te)
	}
}

// A text shorter than its outline comes whole, marked full, with the
// same counts and hash as a full read.
func TestReadDocOutlineOfShortTextIsTheText(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	r.wait(h.putAll(fixtureDocs()))
	full := r.read(map[string]any{"path": "docs/deploy.md"})
	out := r.read(map[string]any{"path": "docs/deploy.md", "detail": "outline"})
	if out.Detail != tools.DetailFull || out.Content != full.Content || out.Tokens != full.Tokens || out.FullTokens != full.Tokens || out.Hash != full.Hash {
		t.Fatalf("outline of a short doc: %+v; full read %+v", out, full)
	}
}

// A document holding a secret is outlined from its redacted text.
func TestReadDocOutlineIsRedacted(t *testing.T) {
	h := newHarness(t)
	r := h.start("")
	secret := "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
	doc := "# Bot\n\nThe bot token is " + secret + " for now. " + strings.Repeat("More words about the bot follow here. ", 30) + "\n"
	r.wait(h.put(mdRecord("app", "docs/bot.md", doc, nil)))
	out := r.read(map[string]any{"path": "docs/bot.md", "detail": "outline"})
	if out.Detail != tools.DetailOutline || strings.Contains(out.Content, secret) || !strings.Contains(out.Content, "# Bot — The bot token is") {
		t.Fatalf("outline: %+v", out)
	}
}
