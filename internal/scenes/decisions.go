package scenes

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// DecisionLine renders a decision as seed 004 §5's anchor shows it, without
// the list marker: "agent-abc: Used singleton for DB connection (2 hours
// ago)". It names the subagent that said it, else the session's short id.
func DecisionLine(d events.MemoryRecord, now time.Time) string {
	who := d.Agent
	if who == "" {
		who = shortID(d.Session)
	}
	content := strings.Join(strings.Fields(d.Content), " ")
	if who == "" {
		return fmt.Sprintf("%s (%s)", content, RelativeTime(d.UpdatedAt, now))
	}
	return fmt.Sprintf("%s: %s (%s)", who, content, RelativeTime(d.UpdatedAt, now))
}

// shortID is the first eight characters of a session id: enough to tell
// a handful of sessions apart, short enough to keep a line readable.
func shortID(s string) string {
	if utf8.RuneCountInString(s) <= 8 {
		return s
	}
	return string([]rune(s)[:8])
}

// RelativeTime says how long before now t was, as people say it: "just
// now", "5 minutes ago", "2 hours ago", "yesterday", "3 days ago". A t
// after now (a clock skewed between machines) is "just now".
func RelativeTime(t, now time.Time) string {
	d := now.Sub(t)
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, unit)
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour")
	case d < 48*time.Hour:
		return "yesterday"
	}
	return plural(int(d/(24*time.Hour)), "day")
}
