// Package guard is CueDeck's security guard: it finds secrets in text and
// replaces each with a marker naming the rule that found it, such as
// [REDACTED:aws-access-key-id]. Every tool result an edge returns to an agent
// and every memory the extractor persists passes through a Guard first.
//
// Because it sits on every tool result, clean text must be cheap: each rule
// starts from a literal (a token prefix, "-----BEGIN ", "eyJ", "://", or an
// assignment's '=' or ':') found with a substring search, and the heavier
// checks (lengths, alphabets, entropy, decoding a JWT header) run only there.
//
// What it decides: documentation examples (AKIAIOSFODNN7EXAMPLE, jwt.io's
// token) are redacted unless Options.AllowDocExamples says otherwise; Stripe
// test keys are secrets; placeholders (changeme, <your-token>, ${VAR},
// xxxx, env lookups) are not; and a string found as a secret once is
// redacted wherever else it occurs in the same text.
//
// The package is pure: it imports no NATS, Badger, network or filesystem code.
package guard

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// DefaultMarker is the replacement format: %s is the id of the rule that
// found the secret.
const DefaultMarker = "[REDACTED:%s]"

// maxPasses bounds the re-scans Redact makes after a redaction changed the
// text (a marker can complete the boundary a neighbouring secret needed).
const maxPasses = 8

// Finding says where a secret was in the input. It never holds the secret.
type Finding struct {
	// Rule is the id of the rule that found it, the same id the marker names.
	Rule string
	// Start and End are byte offsets in the text given to Redact: the secret
	// was text[Start:End].
	Start, End int
}

// Rule is an extra rule a caller adds to the built-in ones.
type Rule struct {
	// ID names the rule in markers and findings: lowercase letters, digits
	// and '-', unique among all rules.
	ID string
	// Keywords are literal substrings; Pattern runs only on text containing
	// at least one (case-sensitive). With none, Pattern runs on all text.
	Keywords []string
	// Pattern matches a secret. If it has a group named "secret", only that
	// group is redacted; otherwise the whole match is.
	Pattern *regexp.Regexp
}

// Options configures a Guard. The zero value is the default guard.
type Options struct {
	// Allow lists exact strings that are never redacted, however a rule
	// matches them.
	Allow []string
	// AllowPatterns: a candidate secret that any of these matches (as
	// regexp.MatchString on the secret alone) is never redacted.
	AllowPatterns []*regexp.Regexp
	// AllowDocExamples adds DocExamples to Allow. Off by default: a guard
	// redacts AKIAIOSFODNN7EXAMPLE like any other key, since a marker in a
	// quoted AWS manual costs little and a real key ending in EXAMPLE costs a lot.
	AllowDocExamples bool
	// Rules are extra rules, tried after the built-in specific rules and
	// before the generic key = value rule.
	Rules []Rule
	// Marker is the replacement format, with exactly one %s for the rule id
	// and text on both sides of it; its first and last bytes must be ASCII
	// punctuation that no secret alphabet uses. Empty means DefaultMarker.
	Marker string
}

var (
	// ErrInvalidMarker is returned by New for a Marker format it cannot use.
	ErrInvalidMarker = errors.New("guard: invalid marker format")
	// ErrInvalidRule is returned by New for an extra rule without an ID or
	// Pattern, or whose ID is malformed or already taken.
	ErrInvalidRule = errors.New("guard: invalid rule")
)

// Guard redacts secrets. It is immutable after New and safe for concurrent use.
type Guard struct {
	// ids[r] is the id of rule r; a lower r wins when findings overlap.
	// Built-in specific rules come first, then extra rules, then generic.
	ids     []string
	generic int
	extras  []extraRule

	markers       []string // markers[r] is the marker for rule r
	markerPrefix  string   // the literal text before %s
	maxMarker     int
	open, close   byte // first and last bytes of every marker
	allow         map[string]bool
	allowPatterns []*regexp.Regexp
}

type extraRule struct {
	Rule
	rule  int
	group int // submatch index of the secret; 0 for the whole match
}

// cand is a candidate secret: text[start:end], found by rule.
type cand struct {
	start, end int
	rule       int
}

var defaultGuard = func() *Guard {
	g, err := New(Options{})
	if err != nil {
		panic(err)
	}
	return g
}()

// Redact runs the default guard (New(Options{})) on text.
func Redact(text string) (string, []Finding) { return defaultGuard.Redact(text) }

// New builds a Guard. It returns ErrInvalidMarker or ErrInvalidRule,
// wrapped with the reason, for options it cannot use.
func New(opts Options) (*Guard, error) {
	g := &Guard{allow: map[string]bool{}}
	g.ids = append(g.ids, builtinIDs[:numSpecific]...)
	taken := map[string]bool{}
	for _, id := range builtinIDs {
		taken[id] = true
	}
	for _, r := range opts.Rules {
		if !validID(r.ID) || taken[r.ID] || r.Pattern == nil {
			return nil, fmt.Errorf("%w: %q (ids are [a-z0-9-], unique, with a Pattern)", ErrInvalidRule, r.ID)
		}
		taken[r.ID] = true
		e := extraRule{Rule: r, rule: len(g.ids)}
		if i := r.Pattern.SubexpIndex("secret"); i > 0 {
			e.group = i
		}
		g.extras = append(g.extras, e)
		g.ids = append(g.ids, r.ID)
	}
	g.generic = len(g.ids)
	g.ids = append(g.ids, RuleGenericSecret)

	format := opts.Marker
	if format == "" {
		format = DefaultMarker
	}
	prefix, suffix, ok := strings.Cut(format, "%s")
	if !ok || prefix == "" || suffix == "" || strings.Contains(prefix, "%") || strings.Contains(suffix, "%") ||
		!markerByte(prefix[0]) || !markerByte(suffix[len(suffix)-1]) {
		return nil, fmt.Errorf("%w: %q (want one %%s with text on both sides, starting and ending in ASCII punctuation such as [ ] < > { })", ErrInvalidMarker, format)
	}
	g.markerPrefix, g.open, g.close = prefix, prefix[0], suffix[len(suffix)-1]
	for _, id := range g.ids {
		m := prefix + id + suffix
		g.markers = append(g.markers, m)
		g.maxMarker = max(g.maxMarker, len(m))
	}

	for _, s := range opts.Allow {
		g.allow[s] = true
	}
	if opts.AllowDocExamples {
		for _, s := range docExamples {
			g.allow[s] = true
		}
	}
	g.allowPatterns = slices.Clone(opts.AllowPatterns)
	return g, nil
}

func validID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// markerByte reports whether c may open or close a marker: punctuation that
// no rule admits into a secret, so a marker never blends into a neighbour.
func markerByte(c byte) bool { return strings.IndexByte("[]<>{}()|!#~^", c) >= 0 }

// Redact returns text with every secret replaced by its rule's marker, and
// one Finding per replacement, in order. Text without secrets is returned
// as is. Redact is idempotent: redacting its output changes nothing.
func (g *Guard) Redact(text string) (string, []Finding) {
	spans := g.pass(text)
	if len(spans) == 0 {
		return text, nil
	}
	out, segs := g.apply(text, spans)
	for range maxPasses {
		// A marker can give a neighbouring secret the boundary it lacked, so
		// scan again until nothing changes; new spans never touch a marker.
		more := g.pass(out)
		if len(more) == 0 {
			break
		}
		for _, s := range more {
			// Each new span lies inside one unredacted segment of out.
			k := sort.Search(len(segs), func(k int) bool { return segs[k].out+segs[k].n > s.start })
			shift := segs[k].orig - segs[k].out
			spans = append(spans, cand{s.start + shift, s.end + shift, s.rule})
		}
		slices.SortFunc(spans, func(a, b cand) int { return a.start - b.start })
		out, segs = g.apply(text, spans)
	}
	findings := make([]Finding, len(spans))
	for i, s := range spans {
		findings[i] = Finding{Rule: g.ids[s.rule], Start: s.start, End: s.end}
	}
	redacted.Add(uint64(len(findings)))
	return out, findings
}

// redacted counts the findings every Guard in the process has redacted.
// Clean text, the common case, returns before touching it.
var redacted atomic.Uint64

// Redactions is how many secrets every Guard in this process has redacted
// since it started: a running total for operators' metrics (a process that
// keeps leaking secrets into its context shows here), never decreasing.
func Redactions() uint64 { return redacted.Load() }

// segment maps an unredacted run of the output back to the input.
type segment struct{ out, orig, n int }

// apply replaces the sorted, disjoint spans of text with markers.
func (g *Guard) apply(text string, spans []cand) (string, []segment) {
	var b strings.Builder
	b.Grow(len(text) + len(spans)*g.maxMarker)
	segs := make([]segment, 0, len(spans)+1)
	at := 0
	for _, s := range spans {
		segs = append(segs, segment{out: b.Len(), orig: at, n: s.start - at})
		b.WriteString(text[at:s.start])
		b.WriteString(g.markers[s.rule])
		at = s.end
	}
	segs = append(segs, segment{out: b.Len(), orig: at, n: len(text) - at})
	b.WriteString(text[at:])
	return b.String(), segs
}

// pass finds the secrets in text: the rules' candidates, less those on a
// marker or allowed, plus every other occurrence of each, merged into
// sorted, disjoint spans.
func (g *Guard) pass(text string) []cand {
	var cs []cand
	cs = scanPrivateKeys(text, cs)
	cs = scanTokens(text, cs)
	cs = scanJWTs(text, cs)
	cs = scanURLs(text, cs)
	for _, e := range g.extras {
		cs = e.scan(text, cs)
	}
	cs = scanAssignments(text, cs, g.generic)
	if len(cs) == 0 {
		return nil
	}
	protected := g.markersIn(text)
	kept := cs[:0]
	for _, c := range cs {
		if c.end > c.start && !overlaps(protected, c) && g.acceptable(text[c.start:c.end]) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return merge(g.propagate(text, kept, protected))
}

func (e extraRule) scan(text string, cs []cand) []cand {
	if len(e.Keywords) > 0 && !slices.ContainsFunc(e.Keywords, func(k string) bool { return strings.Contains(text, k) }) {
		return cs
	}
	for _, m := range e.Pattern.FindAllStringSubmatchIndex(text, -1) {
		if s, t := m[2*e.group], m[2*e.group+1]; s >= 0 && t > s {
			cs = append(cs, cand{s, t, e.rule})
		}
	}
	return cs
}

// acceptable rejects allowed strings, and strings that could be read inside
// a marker or across its edge: that keeps Redact idempotent, and keeps a
// reported secret out of the output.
func (g *Guard) acceptable(s string) bool {
	if g.allow[s] || strings.IndexByte(s, g.open) >= 0 || strings.IndexByte(s, g.close) >= 0 {
		return false
	}
	if len(s) <= g.maxMarker {
		for _, m := range g.markers {
			if strings.Contains(m, s) {
				return false
			}
		}
	}
	for _, re := range g.allowPatterns {
		if re.MatchString(s) {
			return false
		}
	}
	return true
}

// markersIn returns the spans of the markers already in text, sorted.
func (g *Guard) markersIn(text string) []cand {
	var spans []cand
	for i := 0; ; {
		j := strings.Index(text[i:], g.markerPrefix)
		if j < 0 {
			return spans
		}
		at := i + j
		i = at + 1
		for r, m := range g.markers {
			if strings.HasPrefix(text[at:], m) {
				spans = append(spans, cand{at, at + len(m), r})
				i = at + len(m)
				break
			}
		}
	}
}

// overlaps reports whether c overlaps any of the sorted, disjoint spans.
func overlaps(spans []cand, c cand) bool {
	k := sort.Search(len(spans), func(k int) bool { return spans[k].end > c.start })
	return k < len(spans) && spans[k].start < c.end
}

// propagate adds every other occurrence of each found secret: a string
// recognised as a secret in one place is a secret everywhere in the text.
func (g *Guard) propagate(text string, cs, protected []cand) []cand {
	seen := make(map[string]int, len(cs))
	for _, c := range cs {
		s := text[c.start:c.end]
		if r, ok := seen[s]; !ok || c.rule < r {
			seen[s] = c.rule
		}
	}
	return findAll(text, seen, cs, protected)
}

// merge sorts candidates and unites overlapping ones; a united span is
// named after its highest-priority (lowest-numbered) rule.
func merge(cs []cand) []cand {
	slices.SortFunc(cs, func(a, b cand) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	out := cs[:1]
	for _, c := range cs[1:] {
		last := &out[len(out)-1]
		if c.start < last.end {
			last.end = max(last.end, c.end)
			last.rule = min(last.rule, c.rule)
			continue
		}
		out = append(out, c)
	}
	return out
}
