package memory

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// Experience is one grafted decision of an agent (seed 004 §3), as
// appended to the experience log and loaded into the next session's
// anchor context.
type Experience struct {
	// Timestamp is when it was grafted, in seconds since the Unix epoch.
	Timestamp    int64    `json:"timestamp"`
	AgentID      string   `json:"agent_id"`
	SessionID    string   `json:"session_id"`
	Decision     string   `json:"decision"`
	Rationale    string   `json:"rationale"`
	FilesTouched []string `json:"files_touched"`
	Outcome      Outcome  `json:"outcome"`
}

// Outcome is how the session that made a decision ended.
type Outcome string

// The outcomes.
const (
	OutcomeSuccess Outcome = "success"
	OutcomeFailure Outcome = "failure"
	OutcomeUnknown Outcome = "unknown"
)

// Trigger is a phrase that opens a decision or a rationale, matched
// case-insensitively and not inside a word. The captured text is Lead
// followed by what comes after Phrase in the sentence (up to a trigger of
// the other sort), capitalised and without closing punctuation, so "I'll
// use X." read with {Phrase: "i'll use", Lead: "use "} gives "Use X".
// Lead keeps the verb a phrase would otherwise swallow.
type Trigger struct {
	Phrase string `json:"phrase"`
	Lead   string `json:"lead,omitempty"`
}

// GraftRules are the phrases of rule-based experience grafting.
type GraftRules struct {
	Decision  []Trigger `json:"decision"`
	Rationale []Trigger `json:"rationale"`
	// RationaleReach is how many sentences after a decision a rationale
	// may come and still attach to it (0: only the same sentence).
	RationaleReach int `json:"rationale_reach"`
	// Success and Failure phrases decide the outcome when the caller does
	// not know it: the last sentence holding either decides, and Failure
	// wins within a sentence.
	Success []string `json:"success"`
	Failure []string `json:"failure"`
}

// DefaultGraftRules returns the seed's "I decided to…" and "The reason
// is…" with their common variants. A rationale reaches two sentences back,
// so an unrelated "because" later in a long transcript is not pinned on an
// old decision.
func DefaultGraftRules() GraftRules {
	return GraftRules{
		Decision: []Trigger{
			{Phrase: "i decided to"}, {Phrase: "i've decided to"}, {Phrase: "i have decided to"},
			{Phrase: "we decided to"}, {Phrase: "we've decided to"}, {Phrase: "decided to"},
			{Phrase: "i chose to"}, {Phrase: "we chose to"},
			{Phrase: "i'll use", Lead: "use "}, {Phrase: "we'll use", Lead: "use "},
			{Phrase: "i will use", Lead: "use "}, {Phrase: "we will use", Lead: "use "},
			{Phrase: "let's use", Lead: "use "}, {Phrase: "i went with", Lead: "went with "},
			{Phrase: "i'm going with", Lead: "go with "},
			// Decisions said without "decided": chosen, settled, switched.
			{Phrase: "i opted to"}, {Phrase: "we opted to"}, {Phrase: "opted to"},
			{Phrase: "i settled on", Lead: "use "}, {Phrase: "we settled on", Lead: "use "},
			{Phrase: "i'll switch to", Lead: "switch to "}, {Phrase: "we'll switch to", Lead: "switch to "},
			{Phrase: "i switched to", Lead: "switch to "}, {Phrase: "we switched to", Lead: "switch to "},
			{Phrase: "i'm switching to", Lead: "switch to "}, {Phrase: "we're switching to", Lead: "switch to "},
			{Phrase: "let's go with", Lead: "go with "}, {Phrase: "we're going with", Lead: "go with "},
			{Phrase: "the fix is to"}, {Phrase: "from now on,"}, {Phrase: "from now on"},
		},
		Rationale: []Trigger{
			{Phrase: "the reason is that"}, {Phrase: "the reason is"}, {Phrase: "the reason was"},
			{Phrase: "because"}, {Phrase: "so that"},
		},
		RationaleReach: 2,
		Success: []string{
			"tests pass", "all tests pass", "succeeded", "completed", "is done", "done.",
			"fixed", "works now", "now works", "is working",
		},
		Failure: []string{
			"failed to", "could not", "couldn't", "unable to", "gave up", "still failing",
			"still fails", "not fixed", "blocked on",
		},
	}
}

// Transcript is what ExtractExperiences reads from one agent session.
type Transcript struct {
	AgentID   string
	SessionID string
	// Text is the agent's prose, in order.
	Text string
	// FilesModified are the paths of the session's write and edit tool
	// calls, in call order; repeats are dropped.
	FilesModified []string
	// Outcome is how the session ended, if the caller knows (from the
	// tool results, say); empty means infer it from Text.
	Outcome Outcome
}

// ExtractExperiences grafts experiences from a transcript by rule (seed
// 004 §3): each sentence holding a decision trigger gives one experience
// whose decision is the text after the trigger (up to a rationale trigger
// in the same sentence). A rationale trigger's text (up to a decision
// trigger) attaches to the nearest decision before it, or in its sentence,
// within rules.RationaleReach sentences; more
// than one is joined with "; ", and one with no decision in reach is
// dropped. Every experience carries all the session's modified files (the
// transcript does not say which edit served which decision), its outcome
// and the clock's time.
func ExtractExperiences(t Transcript, rules GraftRules, c clock.Clock) []Experience {
	outcome := t.Outcome
	sentences := splitSentences(t.Text)
	if outcome == "" {
		outcome = inferOutcome(sentences, rules)
	}
	files := dedupe(t.FilesModified)
	now := c.Now().Unix()

	var out []Experience
	lastDecision, lastAt := -1, 0
	for si, s := range sentences {
		lc := lowerSameWidth(s)
		dAt, dEnd, dTrig := findTrigger(lc, rules.Decision)
		rAt, rEnd, rTrig := findTrigger(lc, rules.Rationale)
		if dAt >= 0 && (strings.HasSuffix(lc, "?") || negated(lc[:dAt])) {
			// "Should we switch to X?", "I haven't decided to X": no
			// decision was made.
			dAt = -1
		}
		if dAt >= 0 {
			stop := len(s)
			if rAt > dEnd {
				stop = rAt // "I decided to Y because X"
			}
			if d := capture(dTrig.Lead, s[dEnd:stop]); d != "" {
				out = append(out, Experience{
					Timestamp: now, AgentID: t.AgentID, SessionID: t.SessionID,
					Decision: d, FilesTouched: slices.Clone(files), Outcome: outcome,
				})
				lastDecision, lastAt = len(out)-1, si
			}
		}
		if rAt >= 0 && lastDecision >= 0 && si-lastAt <= rules.RationaleReach {
			stop := len(s)
			if dAt > rEnd {
				stop = dAt // "Because X, I decided to Y"
			}
			if r := capture(rTrig.Lead, s[rEnd:stop]); r != "" {
				e := &out[lastDecision]
				if e.Rationale != "" {
					e.Rationale += "; "
				}
				e.Rationale += r
			}
		}
	}
	return out
}

// DefaultExperienceLimit is how many experiences RecentExperiences
// returns by default, to keep the anchor context small.
const DefaultExperienceLimit = 10

// RecentExperiences is seed 004 §3's loading strategy: the experiences
// newer than maxAge before the clock's now (strictly), newest first, at
// most limit of them (DefaultExperienceLimit if limit ≤ 0). Experiences
// with the same timestamp keep their log order. all is not modified.
func RecentExperiences(all []Experience, c clock.Clock, maxAge time.Duration, limit int) []Experience {
	if limit <= 0 {
		limit = DefaultExperienceLimit
	}
	threshold := c.Now().Add(-maxAge).Unix()
	var recent []Experience
	for _, e := range all {
		if e.Timestamp > threshold {
			recent = append(recent, e)
		}
	}
	slices.SortStableFunc(recent, func(a, b Experience) int { return cmp.Compare(b.Timestamp, a.Timestamp) })
	return recent[:min(limit, len(recent))]
}

// Memory returns the experience as a memory of KindExperience for repo,
// with DefaultConfidence since rules, not a model, found it.
func (e Experience) Memory(repo string) Memory {
	at := time.Unix(e.Timestamp, 0).UTC()
	return Memory{
		Content:      e.Decision,
		Kind:         KindExperience,
		Rationale:    e.Rationale,
		FilesTouched: slices.Clone(e.FilesTouched),
		Confidence:   DefaultConfidence,
		Repo:         repo,
		Session:      e.SessionID,
		Provider:     "rules",
		CreatedAt:    at,
		UpdatedAt:    at,
	}
}

// lowerSameWidth lowercases s rune by rune, keeping any rune (or invalid
// byte) whose lowercase has another UTF-8 length, so that offsets found in
// the result are offsets in s.
func lowerSameWidth(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if l := unicode.ToLower(r); r != utf8.RuneError && utf8.RuneLen(l) == n {
			b = utf8.AppendRune(b, l)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// findTrigger returns where in lc the earliest trigger starts and ends,
// preferring the longest phrase at the same start, or -1.
func findTrigger(lc string, triggers []Trigger) (at, end int, trig Trigger) {
	at = -1
	for _, t := range triggers {
		p := lowerSameWidth(t.Phrase)
		if p == "" {
			continue
		}
		i := indexWord(lc, p)
		if i < 0 {
			continue
		}
		if at < 0 || i < at || (i == at && i+len(p) > end) {
			at, end, trig = i, i+len(p), t
		}
	}
	return at, end, trig
}

// negated reports whether the words just before a trigger deny it: "not",
// "never", "n't" within the last three words.
func negated(before string) bool {
	words := strings.Fields(before)
	for _, w := range words[max(0, len(words)-3):] {
		if w == "not" || w == "never" || strings.HasSuffix(w, "n't") || w == "no" {
			return true
		}
	}
	return false
}

// indexWord finds p in s where it does not start or end inside a word, so
// "decided to" does not match "undecided to".
func indexWord(s, p string) int {
	for off := 0; off <= len(s)-len(p); {
		i := strings.Index(s[off:], p)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(p):])
		if (i == 0 || !isWordRune(before)) && (i+len(p) == len(s) || !isWordRune(after) || !isWordRune(lastRune(p))) {
			return i
		}
		off = i + 1
	}
	return -1
}

func lastRune(s string) rune { r, _ := utf8.DecodeLastRuneInString(s); return r }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// capture trims the captured text, strips its closing punctuation and
// capitalises it.
func capture(lead, rest string) string {
	rest = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(rest), ",:;-—"))
	text := strings.TrimSpace(strings.TrimRight(lead+rest, " .!?,;:"))
	if rest == "" || text == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(text)
	return string(unicode.ToUpper(r)) + text[n:]
}

// splitSentences cuts text after '.', '!' or '?' followed by white space,
// and at line breaks, so paths like src/db/mod.rs stay whole.
func splitSentences(text string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			emit(i)
		case '.', '!', '?':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t' || text[i+1] == '\n' || text[i+1] == '\r' {
				emit(i + 1)
			}
		}
	}
	emit(len(text))
	return out
}

func inferOutcome(sentences []string, rules GraftRules) Outcome {
	has := func(lc string, phrases []string) bool {
		return slices.ContainsFunc(phrases, func(p string) bool { return p != "" && strings.Contains(lc, strings.ToLower(p)) })
	}
	for i := len(sentences) - 1; i >= 0; i-- {
		lc := strings.ToLower(sentences[i])
		if has(lc, rules.Failure) {
			return OutcomeFailure
		}
		if has(lc, rules.Success) {
			return OutcomeSuccess
		}
	}
	return OutcomeUnknown
}

func dedupe(paths []string) []string {
	out := make([]string, 0, len(paths))
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
