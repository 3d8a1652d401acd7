package card

import (
	"slices"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/events"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		canonical,
		"",
		"---\nid: abc123\ntitle: t\n---\n",
		"---\nid: abc123\ntitle: &a x\nx: *a\ntags: [*a]\n---\nbody",
		"---\r\nid: abc123\r\ntitle: t\r\nstatus: doing\r\n---\r\n",
		"---\nid: abc123\ntitle: t\nclose_reason: dup\ncomments:\n  - text: a # kept\n    by: ann\n  - {at: 2026-01-02, text: b}\n---\n",
		"---\nid: abc123\ntitle: t\ncomments: [{text: &c x}, {text: *c}]\n---\n",
		"\uFEFF---\nid: abc123\ntitle: \"q\\n\"\ncreated: 2026-01-02\n---\n\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := Parse(src)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			return
		}
		out, err := Render(c)
		if err != nil {
			t.Fatalf("render of a parsed card: %v", err)
		}
		if string(out) != string(src) {
			t.Fatalf("unchanged render differs:\n%q\n%q", out, src)
		}
		// A change keeps the original nodes of what did not change.
		changed := c
		changed.Task.Status, changed.Task.Assignee = "archived", "@fuzz"
		changed.Task.Tags = append([]string{"x"}, c.Task.Tags...)
		changed.Task.CloseReason = "fuzzed: " + c.Task.CloseReason
		changed.Task.Comments = append(slices.Clip(c.Task.Comments), events.TaskComment{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), By: "fuzz", Text: "x: y\n- z"})
		mod, err := Render(changed)
		if err != nil {
			t.Fatalf("render of a changed card: %v", err)
		}
		cm, err := Parse(mod)
		if err != nil {
			t.Fatalf("changed render does not parse: %v\n%s", err, mod)
		}
		if !SameTask(cm.Task, changed.Task) || cm.Body != c.Body || len(cm.Extra) != len(c.Extra) {
			t.Fatalf("changed render lost something:\n%+v\n%+v\n%s", changed.Task, cm.Task, mod)
		}
		c.src = nil
		fresh, err := Render(c)
		if err != nil {
			t.Fatalf("fresh render: %v", err)
		}
		c2, err := Parse(fresh)
		if err != nil {
			t.Fatalf("fresh render does not parse: %v\n%s", err, fresh)
		}
		if !SameTask(c.Task, c2.Task) || c.Body != c2.Body || len(c.Extra) != len(c2.Extra) {
			t.Fatalf("fresh render changed the card:\n%+v\n%+v", c.Task, c2.Task)
		}
		c2.src = nil
		again, err := Render(c2)
		if err != nil || string(again) != string(fresh) {
			t.Fatalf("canonical render not stable: %v\n%q\n%q", err, fresh, again)
		}
	})
}
