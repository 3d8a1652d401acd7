package prune

import (
	"fmt"
	"strconv"
	"strings"
)

// Tally counts the calls one rule superseded and the output tokens that
// saved.
type Tally struct {
	Count  int `json:"count"`
	Tokens int `json:"tokens"`
}

func (t *Tally) add(tokens int) {
	t.Count++
	t.Tokens += tokens
}

// Stats is strategyStats.autoSupersede: a tally per rule.
type Stats struct {
	Hash Tally `json:"hash"`
	File Tally `json:"file"`
	Todo Tally `json:"todo"`
}

func (s *Stats) tally(r Reason) *Tally {
	switch r {
	case ReasonHash:
		return &s.Hash
	case ReasonFile:
		return &s.File
	}
	return &s.Todo
}

// Add adds o to s, to keep a conversation's running total across runs.
func (s *Stats) Add(o Stats) {
	for _, r := range []Reason{ReasonHash, ReasonFile, ReasonTodo} {
		t, u := s.tally(r), o.tally(r)
		t.Count += u.Count
		t.Tokens += u.Tokens
	}
}

// Total sums the three rules.
func (s Stats) Total() Tally {
	return Tally{
		Count:  s.Hash.Count + s.File.Count + s.Todo.Count,
		Tokens: s.Hash.Tokens + s.File.Tokens + s.Todo.Tokens,
	}
}

// Render is the `/acp stats` block of seed 001:
//
//	Strategy Effectiveness:
//	────────────────────────────────────────────────────────────
//	  Auto-Supersede        12 prunes, ~8.5k saved
//	    🔄 hash              5 prunes, ~4.2k
//	    📝 file              4 prunes, ~3.1k
//	    ✅ todo              3 prunes, ~1.2k
//
// Counts are right-aligned three wide, ending at display column 26 (an
// emoji is two columns wide); token figures are as FormatTokens gives them.
func (s Stats) Render() string {
	var b strings.Builder
	b.WriteString("Strategy Effectiveness:\n")
	b.WriteString(strings.Repeat("─", 60) + "\n")
	t := s.Total()
	fmt.Fprintf(&b, "  Auto-Supersede       %3d prunes, ~%s saved\n", t.Count, FormatTokens(t.Tokens))
	fmt.Fprintf(&b, "    🔄 hash            %3d prunes, ~%s\n", s.Hash.Count, FormatTokens(s.Hash.Tokens))
	fmt.Fprintf(&b, "    📝 file            %3d prunes, ~%s\n", s.File.Count, FormatTokens(s.File.Tokens))
	fmt.Fprintf(&b, "    ✅ todo            %3d prunes, ~%s\n", s.Todo.Count, FormatTokens(s.Todo.Tokens))
	return b.String()
}

// FormatTokens writes a token count as the stats block does: below 1,000
// as it is ("850"), from 1,000 in thousands with one decimal rounded half
// up ("8.5k" for 8,450 to 8,549; "1234.6k").
func FormatTokens(n int) string {
	if n < 1000 {
		return strconv.Itoa(n)
	}
	tenths := (n + 50) / 100
	return fmt.Sprintf("%d.%dk", tenths/10, tenths%10)
}
