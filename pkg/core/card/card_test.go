package card

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cuedeck/cuedeck/pkg/events"
)

const canonical = `---
id: abc123
title: Implement login API
status: active
priority: high
assignee: '@developer'
tags: [auth, backend]
depends_on: [def456]
created: 2026-01-02T10:43:00Z
updated: 2026-01-03T08:00:00Z
notes: waiting on review
estimate: 3d
owner_team:
  name: platform
---
# Login

See @docs/api.md#Login and [the other card](def456.md).
`

func TestParse(t *testing.T) {
	c, err := Parse([]byte(canonical))
	if err != nil {
		t.Fatal(err)
	}
	want := events.Task{ID: "abc123", Title: "Implement login API", Status: "active", Priority: "high",
		Assignee: "@developer", Tags: []string{"auth", "backend"}, DependsOn: []string{"def456"},
		Notes:   "waiting on review",
		Created: time.Date(2026, 1, 2, 10, 43, 0, 0, time.UTC), Updated: time.Date(2026, 1, 3, 8, 0, 0, 0, time.UTC)}
	if !SameTask(c.Task, want) {
		t.Errorf("task = %+v\nwant  %+v", c.Task, want)
	}
	if !strings.HasPrefix(c.Body, "# Login\n") {
		t.Errorf("body = %q", c.Body)
	}
	if len(c.Extra) != 2 || c.Extra[0].Key != "estimate" || c.Extra[1].Key != "owner_team" {
		t.Errorf("extra = %+v", c.Extra)
	}
}

func TestRenderUnchangedIsByteForByte(t *testing.T) {
	for _, src := range []string{
		canonical,
		"---\r\n# a comment\r\nid:   abc123\r\ntitle: \"x\"\r\n---\r\nbody\r\n",
		"---\ntitle: no status\nid: abc123\n---\n",
		"\uFEFF---\ntitle: t\nid: abc123\nweird: {a: [1, 2]}\n---\n\n\nbody without final newline",
	} {
		c, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		out, err := Render(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != src {
			t.Errorf("Render(Parse(x)) != x\n got %q\nwant %q", out, src)
		}
	}
}

func TestRenderChangeKeepsBodyAndUnknownKeys(t *testing.T) {
	c, err := Parse([]byte(canonical))
	if err != nil {
		t.Fatal(err)
	}
	c.Task.Status = "done"
	c.Task.Assignee = ""
	c.Task.Updated = time.Date(2026, 1, 4, 9, 0, 0, 0, time.UTC)
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"status: active", "status: done",
		"assignee: '@developer'\n", "",
		"updated: 2026-01-03T08:00:00Z", "updated: 2026-01-04T09:00:00Z",
	).Replace(canonical)
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !SameTask(again.Task, c.Task) || again.Body != c.Body {
		t.Errorf("reparse differs: %+v", again.Task)
	}
}

// A comment added through the task log lands in the file as a block
// mapping after the ones written by hand, which keep their form; the
// close reason goes beside notes; both read back as written.
func TestRenderCloseReasonAndComments(t *testing.T) {
	src := strings.Replace(canonical, "notes: waiting on review\n", "notes: waiting on review\ncomments:\n  - text: tried the staging DB   # by hand\n", 1)
	c, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Task.Comments) != 1 || c.Task.Comments[0].Text != "tried the staging DB" || !c.Task.Comments[0].At.IsZero() {
		t.Fatalf("parsed comments %+v", c.Task.Comments)
	}
	at := time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC)
	c.Task.Status = "done"
	c.Task.CloseReason = "fixed in 4f2a1c: the token check"
	c.Task.Comments = append(c.Task.Comments, events.TaskComment{At: at, By: "ann", Text: "Verified on staging.\nTwo lines: 'quoted' and #hash"})
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	wantPart := "notes: waiting on review\nclose_reason: 'fixed in 4f2a1c: the token check'\ncomments:\n  - text: tried the staging DB # by hand\n  - at: 2026-01-05T09:30:00Z\n    by: ann\n    text: |-\n      Verified on staging.\n      Two lines: 'quoted' and #hash\nestimate: 3d\n"
	if !strings.Contains(string(out), wantPart) {
		t.Errorf("got\n%s\nwant it to hold\n%s", out, wantPart)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !SameTask(again.Task, c.Task) || again.Body != c.Body {
		t.Errorf("reparse differs: %+v", again.Task)
	}
	again.Task.Comments[1].Text = "changed"
	if SameTask(again.Task, c.Task) {
		t.Error("SameTask ignores a comment's text")
	}
}

func TestRenderCanonicalIsStable(t *testing.T) {
	at := time.Date(2026, 1, 2, 10, 43, 0, 0, time.UTC)
	c := Card{Task: events.Task{ID: "xyz789", Title: "Implement login API", Status: "todo", Priority: "medium",
		Tags: []string{"auth"}, Created: at, Updated: at}, Body: "\nNotes go here.\n"}
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	want := "---\nid: xyz789\ntitle: Implement login API\nstatus: todo\npriority: medium\ntags: [auth]\ncreated: 2026-01-02T10:43:00Z\nupdated: 2026-01-02T10:43:00Z\n---\n\nNotes go here.\n"
	if string(out) != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	c2, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	c2.src = nil // force a fresh render
	out2, err := Render(c2)
	if err != nil {
		t.Fatal(err)
	}
	if string(out2) != want {
		t.Errorf("second render differs:\n%q", out2)
	}
}

func TestRenderAddsExtra(t *testing.T) {
	c, err := Parse([]byte(canonical))
	if err != nil {
		t.Fatal(err)
	}
	c.Extra = append(c.Extra, Field{Key: "sprint", Value: &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "7"}})
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "  name: platform\nsprint: 7\n---\n# Login") {
		t.Errorf("got\n%s", out)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		src  string
		line int
		msg  string
	}{
		{"no frontmatter\n", 1, "starts with a --- line"},
		{"---\nid: abc123\ntitle: t\n", 1, "never closed"},
		{"---\nid: abc123\ntitle: [unclosed\n---\n", 3, ""},
		{"---\nid: abc123\ntitle: t\nstatus: doing\n---\n", 4, `"doing" is not one of todo, active, done, archived`},
		{"---\nid: abc123\ntitle: t\npriority: urgent\n---\n", 4, `"urgent" is not one of low, medium, high, critical`},
		{"---\nid: ABC\ntitle: t\n---\n", 2, "not a task id"},
		{"---\ntitle: t\n---\n", 1, "no id"},
		{"---\nid: abc123\n---\n", 1, "no title"},
		{"---\nid: abc123\ntitle: t\ntags: auth\n---\n", 4, "want a list"},
		{"---\nid: abc123\ntitle: t\ndepends_on: [nope]\n---\n", 4, "not a task id"},
		{"---\nid: abc123\ntitle: t\ncreated: yesterday\n---\n", 4, "not a date"},
		{"---\nid: abc123\ntitle: t\nid: abc124\n---\n", 4, "appears twice (first at line 2)"},
		{"---\n- a\n---\n", 2, "must be a mapping"},
		{"---\nid: abc123\ntitle: t\ncomments: tried it\n---\n", 4, "want a list of comments"},
		{"---\nid: abc123\ntitle: t\ncomments:\n  - just text\n---\n", 5, "every comment is a mapping with text:"},
		{"---\nid: abc123\ntitle: t\ncomments:\n  - by: ann\n---\n", 5, "every comment is a mapping with text:"},
		{"---\nid: abc123\ntitle: t\ncomments:\n  - text: x\n    at: soon\n---\n", 6, `at: "soon" is not a date`},
		{"---\nid: abc123\ntitle: t\ncomments:\n  - text: x\n    mood: ok\n---\n", 6, `"mood" is not a comment field`},
	} {
		_, err := Parse([]byte(tc.src))
		var ce *Error
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: err = %v, want *Error", tc.src, err)
			continue
		}
		if ce.Line != tc.line || !strings.Contains(ce.Msg, tc.msg) {
			t.Errorf("%q: got line %d %q, want line %d containing %q", tc.src, ce.Line, ce.Msg, tc.line, tc.msg)
		}
	}
}

func TestRenderRejectsInvalidTask(t *testing.T) {
	_, err := Render(Card{Task: events.Task{ID: "abc123", Title: "t", Status: "doing", Priority: "low"}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
}

func TestRenderReplacedAnchor(t *testing.T) {
	src := "---\nid: abc123\ntitle: &t shared\nstatus: todo\nalso: *t\n---\n"
	c, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c.Task.Title = "new"
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if c2.Task.Title != "new" || len(c2.Extra) != 1 || c2.Extra[0].Value.Value != "shared" {
		t.Errorf("got\n%s", out)
	}
}

func TestPathOfKeepsOnlyACardPath(t *testing.T) {
	for recorded, want := range map[string]string{
		".cuedeck/cards/login.md":      ".cuedeck/cards/login.md",
		".cuedeck/cards/done/login.md": ".cuedeck/cards/done/login.md",
		"":                             ".cuedeck/cards/abc123.md",
		"docs/login.md":                ".cuedeck/cards/abc123.md",
		".cuedeck/cards/login.txt":     ".cuedeck/cards/abc123.md",
		".cuedeck/cards/../secret.md":  ".cuedeck/cards/abc123.md",
		"/etc/.cuedeck/cards/x.md":     ".cuedeck/cards/abc123.md",
	} {
		if got := PathOf(events.Task{ID: "abc123", Path: recorded}); got != want {
			t.Errorf("PathOf(path %q) = %q, want %q", recorded, got, want)
		}
	}
}
