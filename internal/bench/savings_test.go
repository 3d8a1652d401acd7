package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSavingsScenario runs the issue-10 savings scenario and checks how
// the four ways of sending the task's context relate: the outlined scene
// carries every file within the budget where the seed's packing drops
// some, the second scene of the session is smaller still, and a function's
// outline line is a fraction of the function.
func TestSavingsScenario(t *testing.T) {
	s, err := RunSavings(t.TempDir(), SavingsSeed, 0)
	if err != nil {
		t.Fatal(err)
	}
	var tbl bytes.Buffer
	if err := s.WriteTable(&tbl); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", tbl.String())

	if len(s.Files) != SavingsTaskFiles || s.Budget != SavingsBudget {
		t.Fatalf("%d files, budget %d", len(s.Files), s.Budget)
	}
	sum := s.CardTokens
	for _, f := range s.Files {
		sum += f.Tokens
	}
	if s.Whole != sum || s.Whole <= s.Budget {
		t.Fatalf("whole %d: want the files and card (%d), over the budget %d", s.Whole, sum, s.Budget)
	}
	count := func(sc SavingsScene, how string) int {
		n := 0
		for _, f := range s.Files {
			if sc.Shown[f.Path] == how {
				n++
			}
		}
		return n
	}

	// (b): within the budget, but some files are dropped and the scene
	// says it is truncated; nothing is outlined.
	if s.Seed.Tokens > s.Budget || !s.Seed.Truncated || count(s.Seed, ShownDropped) == 0 || count(s.Seed, ShownOutline) != 0 {
		t.Errorf("seed scene: %+v", s.Seed)
	}
	// (c): every file is in, some as outlines, within the budget.
	if s.Outlined.Tokens > s.Budget || count(s.Outlined, ShownDropped) != 0 || count(s.Outlined, ShownOutline) == 0 || count(s.Outlined, ShownWhole) == 0 {
		t.Errorf("outlined scene: %+v", s.Outlined)
	}
	if s.Outlined.Included <= s.Seed.Included {
		t.Errorf("outlined scene includes %d nodes, the seed's %d", s.Outlined.Included, s.Seed.Included)
	}
	// (d): the files the session held whole come as deltas (edited) or
	// unchanged; the whole page is smaller than (c).
	for _, f := range s.Files {
		got := s.Repeat.Shown[f.Path]
		if s.Outlined.Shown[f.Path] != ShownWhole {
			continue
		}
		want := ShownUnchanged
		if f.Edited {
			want = ShownDelta
		}
		if got != want {
			t.Errorf("repeat scene shows %s as %s, want %s", f.Path, got, want)
		}
	}
	if count(s.Repeat, ShownDelta) == 0 || s.Repeat.Tokens >= s.Outlined.Tokens || s.Repeat.Tokens > s.Budget {
		t.Errorf("repeat scene %d tokens, outlined %d: %+v", s.Repeat.Tokens, s.Outlined.Tokens, s.Repeat)
	}
	if !(s.WholeOverSeed > 1 && s.WholeOverOutlined > 1 && s.WholeOverRepeat > s.WholeOverOutlined) {
		t.Errorf("ratios: a/b %.2f a/c %.2f a/d %.2f", s.WholeOverSeed, s.WholeOverOutlined, s.WholeOverRepeat)
	}

	// (e): the function is about the seed's size, its outline line a
	// fraction of it.
	f := s.Func
	if f.Tokens < savingsFuncTokens || f.Tokens > savingsFuncTokens+100 {
		t.Errorf("function is %d tokens, want about %d", f.Tokens, savingsFuncTokens)
	}
	if !strings.HasPrefix(f.OutlineLine, "func (x *Ledger) ReconcileInvoices(") || f.OutlineTokens == 0 || f.OutlineTokens*5 > f.Tokens {
		t.Errorf("outline line %q: %d tokens of %d", f.OutlineLine, f.OutlineTokens, f.Tokens)
	}

	// The report is JSON with the documented fields.
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"whole_tokens"`, `"seed_scene"`, `"outlined_scene"`, `"repeat_scene"`, `"whole_over_repeat"`, `"outline_line"`, `"shown"`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Errorf("JSON lacks %s", k)
		}
	}
}

// The scenario is deterministic: two runs report the same figures.
func TestSavingsIsDeterministic(t *testing.T) {
	a, err := RunSavings(t.TempDir(), SavingsSeed, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := RunSavings(t.TempDir(), SavingsSeed, 0)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Errorf("two runs differ:\n%s\n%s", ja, jb)
	}
}
