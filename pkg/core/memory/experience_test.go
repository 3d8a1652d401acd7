package memory

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

var graftTime = time.Unix(1706940000, 0).UTC()

func TestExtractExperiencesSeedExample(t *testing.T) {
	tr := Transcript{
		AgentID:   "agent-abc123",
		SessionID: "sess-xyz789",
		Text: "I looked at src/db/connection.rs first. I decided to use a singleton pattern for the database connection. " +
			"The reason is that it ensures a single connection pool across modules. All tests pass.",
		FilesModified: []string{"src/db/connection.rs", "src/db/mod.rs", "src/db/connection.rs"},
	}
	got := ExtractExperiences(tr, DefaultGraftRules(), clock.NewDeterministic(graftTime))
	want := []Experience{{
		Timestamp:    1706940000,
		AgentID:      "agent-abc123",
		SessionID:    "sess-xyz789",
		Decision:     "Use a singleton pattern for the database connection",
		Rationale:    "It ensures a single connection pool across modules",
		FilesTouched: []string{"src/db/connection.rs", "src/db/mod.rs"},
		Outcome:      OutcomeSuccess,
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	b, _ := json.Marshal(got[0])
	const wantJSON = `{"timestamp":1706940000,"agent_id":"agent-abc123","session_id":"sess-xyz789",` +
		`"decision":"Use a singleton pattern for the database connection",` +
		`"rationale":"It ensures a single connection pool across modules",` +
		`"files_touched":["src/db/connection.rs","src/db/mod.rs"],"outcome":"success"}`
	if string(b) != wantJSON {
		t.Fatalf("JSON %s", b)
	}
}

func TestExtractExperiencesRules(t *testing.T) {
	text := "We decided to keep the cache in Badger because it survives restarts.\n" +
		"Because the bucket is replicated, I'll use NATS KV for the budget. " +
		"Reading logs now. " +
		"I chose to retry with jitter. Nothing else. Something else. Still nothing. " +
		"It failed because the port was taken. " + // too far from the last decision
		"The undecided to-do list stays."
	got := ExtractExperiences(Transcript{Text: text, Outcome: OutcomeFailure}, DefaultGraftRules(), clock.NewDeterministic(graftTime))
	type dr struct{ d, r string }
	var pairs []dr
	for _, e := range got {
		pairs = append(pairs, dr{e.Decision, e.Rationale})
		if e.Outcome != OutcomeFailure || e.FilesTouched == nil {
			t.Errorf("experience %+v: caller's outcome and non-nil files expected", e)
		}
	}
	want := []dr{
		{"Keep the cache in Badger", "It survives restarts"},
		{"Use NATS KV for the budget", "The bucket is replicated"},
		{"Retry with jitter", ""},
	}
	if !slices.Equal(pairs, want) {
		t.Fatalf("got  %q\nwant %q", pairs, want)
	}
}

func TestExtractExperiencesJoinsRationales(t *testing.T) {
	text := "I decided to vendor the model weights. The reason is offline use. Also because builds must be hermetic."
	got := ExtractExperiences(Transcript{Text: text}, DefaultGraftRules(), clock.NewDeterministic(graftTime))
	if len(got) != 1 || got[0].Rationale != "Offline use; Builds must be hermetic" {
		t.Fatalf("got %+v", got)
	}
	if got[0].Outcome != OutcomeUnknown {
		t.Fatalf("outcome %q, want unknown", got[0].Outcome)
	}
}

func TestExtractExperiencesCustomRules(t *testing.T) {
	rules := GraftRules{
		Decision:       []Trigger{{Phrase: "Plan:", Lead: "plan: "}},
		Rationale:      []Trigger{{Phrase: "why:"}},
		RationaleReach: 1,
		Failure:        []string{"broke"},
		Success:        []string{"works"},
	}
	text := "plan: shard by repo. why: hot repos. It works. Then it broke."
	got := ExtractExperiences(Transcript{Text: text}, rules, clock.NewDeterministic(graftTime))
	if len(got) != 1 || got[0].Decision != "Plan: shard by repo" || got[0].Rationale != "Hot repos" || got[0].Outcome != OutcomeFailure {
		t.Fatalf("got %+v", got)
	}
}

func TestExtractExperiencesNonASCII(t *testing.T) {
	// İ lowercases to two runes; offsets must still land in the original.
	text := "İİİ I decided to use ÜTF-8 everywhere because Ωmega."
	got := ExtractExperiences(Transcript{Text: text}, DefaultGraftRules(), clock.NewDeterministic(graftTime))
	if len(got) != 1 || got[0].Decision != "Use ÜTF-8 everywhere" || got[0].Rationale != "Ωmega" {
		t.Fatalf("got %+v", got)
	}
}

func TestInferOutcome(t *testing.T) {
	rules := DefaultGraftRules()
	for text, want := range map[string]Outcome{
		"I fixed it. All tests pass.":                        OutcomeSuccess,
		"All tests pass. Then I could not push.":             OutcomeFailure,
		"The bug is not fixed.":                              OutcomeFailure,
		"Working on it.":                                     OutcomeUnknown,
		"I could not reproduce it at first. Now it's fixed.": OutcomeSuccess,
	} {
		if got := inferOutcome(splitSentences(text), rules); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

func TestSplitSentencesKeepsPaths(t *testing.T) {
	got := splitSentences("Edited src/db/mod.rs and v1.2 today! Done?\nnext line")
	want := []string{"Edited src/db/mod.rs and v1.2 today!", "Done?", "next line"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestRecentExperiences(t *testing.T) {
	now := graftTime
	c := clock.NewDeterministic(now)
	var all []Experience
	for i := range 15 {
		// one per hour back from now, in log (oldest-first) order
		all = append(all, Experience{Timestamp: now.Add(-time.Duration(14-i) * time.Hour).Unix(), Decision: string(rune('a' + i))})
	}
	all = append(all, Experience{Timestamp: now.Add(-48 * time.Hour).Unix(), Decision: "old"})
	orig := slices.Clone(all)

	got := RecentExperiences(all, c, 24*time.Hour, 0)
	if len(got) != DefaultExperienceLimit {
		t.Fatalf("got %d experiences, want %d", len(got), DefaultExperienceLimit)
	}
	for i, e := range got {
		if want := string(rune('o' - i)); e.Decision != want {
			t.Fatalf("position %d: %q, want %q (newest first)", i, e.Decision, want)
		}
	}
	if !reflect.DeepEqual(all, orig) {
		t.Fatal("the log must not be modified")
	}

	// The threshold is strict: exactly maxAge old is out.
	got = RecentExperiences(all, c, 3*time.Hour, 5)
	if ds := decisions(got); !slices.Equal(ds, []string{"o", "n", "m"}) {
		t.Fatalf("within 3h: %v", ds)
	}

	// The clock decides what is recent.
	c.Advance(100 * time.Hour)
	if got := RecentExperiences(all, c, 24*time.Hour, 0); len(got) != 0 {
		t.Fatalf("after 100h: %v", decisions(got))
	}

	// Equal timestamps keep log order.
	same := []Experience{{Timestamp: now.Unix(), Decision: "x"}, {Timestamp: now.Unix(), Decision: "y"}}
	if ds := decisions(RecentExperiences(same, clock.NewDeterministic(now), time.Hour, 0)); !slices.Equal(ds, []string{"x", "y"}) {
		t.Fatalf("ties: %v", ds)
	}
}

func decisions(es []Experience) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Decision)
	}
	return out
}

func TestExperienceMemory(t *testing.T) {
	e := Experience{Timestamp: 1706940000, SessionID: "s", Decision: "Use X", Rationale: "Y", FilesTouched: []string{"a.go"}}
	m := e.Memory("cuedeck")
	if m.Kind != KindExperience || m.Content != "Use X" || m.Rationale != "Y" || m.Repo != "cuedeck" ||
		m.Session != "s" || m.Confidence != DefaultConfidence || !m.CreatedAt.Equal(graftTime) || m.FilesTouched[0] != "a.go" {
		t.Fatalf("got %+v", m)
	}
}

// FuzzExtractExperiences: trigger offsets are found in a lowercased copy
// and used on the original, so any text must slice safely.
func FuzzExtractExperiences(f *testing.F) {
	for _, s := range []string{
		"I decided to use X because Y.", "İİ I'll use Ω. The reason is ẞ.", "because\n decided to", "\xffdecided to\xfe",
	} {
		f.Add(s)
	}
	c := clock.NewDeterministic(graftTime)
	f.Fuzz(func(t *testing.T, text string) {
		for _, e := range ExtractExperiences(Transcript{Text: text}, DefaultGraftRules(), c) {
			if e.Decision == "" {
				t.Fatalf("empty decision from %q", text)
			}
			if utf8.ValidString(text) && (!utf8.ValidString(e.Decision) || !utf8.ValidString(e.Rationale)) {
				t.Fatalf("invalid UTF-8 from %q: %+v", text, e)
			}
		}
	})
}

// The rule path's yield on decisions as agents phrase them, with and
// without "decided to", and its restraint on questions and denials.
func TestExtractExperiencesPhrasings(t *testing.T) {
	rules := DefaultGraftRules()
	clk := clock.NewDeterministic(time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC))
	decided := map[string]string{
		"I decided to cache the parsed config.":                          "Cache the parsed config",
		"We opted to keep the old endpoint for a release.":               "Keep the old endpoint for a release",
		"After the benchmark we settled on zstd for the snapshots.":      "Use zstd for the snapshots",
		"I'll switch to a bounded channel here.":                         "Switch to a bounded channel here",
		"We switched to table-driven tests for the parser.":              "Switch to table-driven tests for the parser",
		"Let's go with the simpler retry loop.":                          "Go with the simpler retry loop",
		"The fix is to close the body before returning.":                 "Close the body before returning",
		"From now on, every handler takes a context.":                    "Every handler takes a context",
		"Instead of polling, I'll use a watch on the bucket.":            "Use a watch on the bucket",
		"I'm switching to Postgres instead of Redis for sessions.":       "Switch to Postgres instead of Redis for sessions",
		"We chose to vendor the parser because upstream is unmaintained": "Vendor the parser",
	}
	ignored := []string{
		"Should we switch to Postgres?",
		"I haven't decided to merge this yet.",
		"We did not opt to change the schema.",
		"Let me look at the client first.",
		"The tests pass now.",
		"OK.",
	}
	found := 0
	for text, want := range decided {
		got := ExtractExperiences(Transcript{SessionID: "s", Text: text}, rules, clk)
		if len(got) == 1 && got[0].Decision == want {
			found++
			continue
		}
		t.Errorf("%q: got %+v, want the decision %q", text, got, want)
	}
	wrong := 0
	for _, text := range ignored {
		if got := ExtractExperiences(Transcript{SessionID: "s", Text: text}, rules, clk); len(got) != 0 {
			wrong++
			t.Errorf("%q: got %+v, want nothing", text, got)
		}
	}
	t.Logf("rule path: %d of %d phrasings found, %d of %d non-decisions taken", found, len(decided), wrong, len(ignored))
}
