package memory

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// words counts whitespace-separated words, so token figures in these tests
// are easy to work out by hand.
func words(s string) int { return len(strings.Fields(s)) }

func newTestSelector(t testing.TB, cfg SalienceConfig, rng clock.RNG) *Selector {
	t.Helper()
	if cfg.CountTokens == nil {
		cfg.CountTokens = words
	}
	s, err := NewSelector(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func plainMessages(n int) []Message {
	ms := make([]Message, n)
	for i := range ms {
		ms[i] = Message{ID: fmt.Sprintf("m%d", i), Content: "plain text here"}
	}
	return ms
}

func TestPositionBoost(t *testing.T) {
	for i, want := range []float64{0.2, 0.2, 0, 0, 0, 0, 0, 0, 0, 0.2} {
		if got := PositionBoost(i, 10); got != want {
			t.Errorf("PositionBoost(%d, 10) = %v, want %v", i, got, want)
		}
	}
	if PositionBoost(0, 0) != 0 {
		t.Error("no messages, no boost")
	}
}

func TestKeywordPresets(t *testing.T) {
	emo, code := EmotionKeywords(), CodingKeywords()
	for _, c := range []struct {
		kw   Keywords
		text string
		want float64
	}{
		{emo, "I LOVE this", 1.0},
		{emo, "I'm a bit worried", 0.5},
		{emo, "that's fine", 0.2},
		{emo, "the build ran", 0},
		{code, "Actually, revert that change", 1.0},
		{code, "We decided on Badger instead of bolt", 1.0},
		{code, "No, use the other flag", 1.0},
		{code, "panic: assignment to entry in nil map", 0.5},
		{code, "the test FAILED with a stack trace", 0.5},
		{code, "TODO: wire the breaker", 0.2},
		{code, "reading the file", 0},
		{Keywords{High: []string{"Cutover"}}, "the cutover is tonight", 1.0},
		{Keywords{High: []string{""}}, "anything", 0},
	} {
		if got := c.kw.Score(c.text); got != c.want {
			t.Errorf("Score(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestScoreFormula(t *testing.T) {
	s := newTestSelector(t, DefaultSalienceConfig(), clock.NewDeterministicRNG(1))
	// 0.5·0.8 + 0.3·1.0 + 0.2 (first fifth)
	if got := s.Score("Actually, no", 0.8, 0, 10); math.Abs(got-0.9) > 1e-12 {
		t.Errorf("score %v, want 0.9", got)
	}
	// 0.5·0 + 0.3·0.5 + 0 (middle)
	if got := s.Score("error: boom", math.NaN(), 5, 10); math.Abs(got-0.15) > 1e-12 {
		t.Errorf("score %v, want 0.15 (NaN signal counts as 0)", got)
	}
}

func TestSelectEmpty(t *testing.T) {
	s := newTestSelector(t, DefaultSalienceConfig(), clock.NewDeterministicRNG(1))
	if got := s.Select(nil, nil); len(got.Messages) != 0 || got.PrunedCount != 0 {
		t.Fatalf("got %+v", got)
	}
}

// TestSelectBreaksTiesWithRNG: ten middle-of-the-road messages with equal
// scores; which one wins the single top-K slot is the one with the lowest
// random key, and keys are drawn in message order.
func TestSelectBreaksTiesWithRNG(t *testing.T) {
	ms := plainMessages(10)
	ms[0].Content, ms[1].Content, ms[9].Content = "", "", "" // boosted ends, but still ties among themselves
	cfg := DefaultSalienceConfig()
	cfg.TopK = 1
	cfg.MinMessages = 0
	signals := []float64{0, 0, 1, 1, 1, 1, 1, 1, 0} // messages 2..7 tie at 0.5
	rng := clock.NewDeterministicRNG(1)
	s := newTestSelector(t, cfg, rng)

	keys := []float64{0.1, 0.1, 0.9, 0.8, 0.7, 0.05, 0.6, 0.5, 0.1, 0.1}
	rng.SetSequence(keys)
	got := s.Select(ms, signals)
	if want := []string{"m4", "m5", "m6"}; !slices.Equal(got.IDs, want) {
		t.Fatalf("selected %v, want %v (m5 has the lowest key among the ties)", got.IDs, want)
	}
	if got.Scores[1].Context || !got.Scores[0].Context || !got.Scores[2].Context {
		t.Fatalf("context flags %+v", got.Scores)
	}
	if got.Scores[0].Score != got.Scores[1].Score {
		t.Fatalf("m4 and m5 tie, scores %+v", got.Scores)
	}

	keys[5], keys[2] = 0.95, 0.01
	rng.SetSequence(keys)
	if got := s.Select(ms, signals); !slices.Equal(got.IDs, []string{"m1", "m2", "m3"}) {
		t.Fatalf("with m2's key lowest, selected %v", got.IDs)
	}

	// Equal keys fall back to message order.
	rng.SetSequence([]float64{0.5})
	if got := s.Select(ms, signals); !slices.Equal(got.IDs, []string{"m1", "m2", "m3"}) {
		t.Fatalf("with equal keys, selected %v", got.IDs)
	}
}

// TestSelectIsDeterministic: many ties, the LCG breaks them, and the same
// seed gives the same selection every time while another seed need not.
func TestSelectIsDeterministic(t *testing.T) {
	ms := plainMessages(200)
	for i := 0; i < len(ms); i += 7 {
		ms[i].Content = "the test failed again"
	}
	cfg := DefaultSalienceConfig()
	cfg.TopK = 10
	run := func(seed int64) Selection {
		return newTestSelector(t, cfg, clock.NewDeterministicRNG(seed)).Select(ms, nil)
	}
	first := run(42)
	for range 5 {
		if again := run(42); !reflect.DeepEqual(again, first) {
			t.Fatalf("seed 42 gave %v then %v", first.IDs, again.IDs)
		}
	}
	if other := run(43); slices.Equal(other.IDs, first.IDs) {
		t.Fatalf("seeds 42 and 43 broke the ties identically: %v", other.IDs)
	}
}

func TestSelectAdvancesRNGByMessageCount(t *testing.T) {
	rng, ref := clock.NewDeterministicRNG(9), clock.NewDeterministicRNG(9)
	newTestSelector(t, DefaultSalienceConfig(), rng).Select(plainMessages(37), nil)
	for range 37 {
		ref.NextFloat()
	}
	if rng.NextFloat() != ref.NextFloat() {
		t.Fatal("Select must draw exactly one key per message")
	}
}

func TestSelectContextWindowsWithoutDuplicates(t *testing.T) {
	ms := plainMessages(20)
	cfg := DefaultSalienceConfig()
	cfg.TopK = 2
	signals := make([]float64, 20)
	signals[10], signals[11] = 2, 1.9 // adjacent winners share context
	got := newTestSelector(t, cfg, clock.NewDeterministicRNG(1)).Select(ms, signals)
	if want := []string{"m9", "m10", "m11", "m12"}; !slices.Equal(got.IDs, want) {
		t.Fatalf("selected %v, want %v", got.IDs, want)
	}
	wantContext := []bool{true, false, false, true}
	for i, sc := range got.Scores {
		if sc.Context != wantContext[i] || sc.ID != got.IDs[i] || sc.Index != 9+i {
			t.Errorf("score %d = %+v", i, sc)
		}
	}
	if got.PrunedCount != 16 || got.EstimatedTokens != 12 {
		t.Errorf("pruned %d, tokens %d", got.PrunedCount, got.EstimatedTokens)
	}
	if !slices.Equal([]Message{ms[9], ms[10], ms[11], ms[12]}, got.Messages) {
		t.Error("messages must follow the ids")
	}
}

func TestSelectPrunesContextFirstThenLowest(t *testing.T) {
	ms := plainMessages(30) // 3 tokens each with words
	signals := make([]float64, 30)
	for i, v := range map[int]float64{5: 5, 10: 4, 15: 3, 20: 2, 25: 1} {
		signals[i] = v
	}
	cfg := DefaultSalienceConfig()
	cfg.TopK = 5
	cfg.MinMessages = 2
	// 5 selected + 10 context = 15 messages, 45 tokens. A cap of 9 tokens
	// (10·0.9) keeps three messages; all context goes before any winner.
	cfg.MaxTokens = 10
	got := newTestSelector(t, cfg, clock.NewDeterministicRNG(1)).Select(ms, signals)
	if want := []string{"m5", "m10", "m15"}; !slices.Equal(got.IDs, want) {
		t.Fatalf("kept %v, want %v", got.IDs, want)
	}
	if got.EstimatedTokens != 9 || got.PrunedCount != 27 {
		t.Fatalf("tokens %d, pruned %d", got.EstimatedTokens, got.PrunedCount)
	}

	// MinMessages stops pruning even over the cap.
	cfg.MaxTokens, cfg.MinMessages = 1, 4
	got = newTestSelector(t, cfg, clock.NewDeterministicRNG(1)).Select(ms, signals)
	if want := []string{"m5", "m10", "m15", "m20"}; !slices.Equal(got.IDs, want) || got.EstimatedTokens != 12 {
		t.Fatalf("kept %v (%d tokens), want %v", got.IDs, got.EstimatedTokens, want)
	}
}

func TestSelectSignalsAreOptional(t *testing.T) {
	ms := plainMessages(10)
	s := newTestSelector(t, DefaultSalienceConfig(), clock.NewDeterministicRNG(3))
	a := s.Select(ms, nil)
	s = newTestSelector(t, DefaultSalienceConfig(), clock.NewDeterministicRNG(3))
	b := s.Select(ms, []float64{0, 0})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("a short signal slice must act as zeros")
	}
}

func TestSelectDefaultCounterIsTokensCount(t *testing.T) {
	s, err := NewSelector(DefaultSalienceConfig(), clock.NewDeterministicRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Select([]Message{{ID: "a", Content: "hello world"}}, nil)
	if got.EstimatedTokens != 2 {
		t.Fatalf("cl100k counts %q as 2 tokens, got %d", "hello world", got.EstimatedTokens)
	}
}

func TestNewSelectorRejectsBadConfig(t *testing.T) {
	for name, mutate := range map[string]func(*SalienceConfig){
		"top_k":      func(c *SalienceConfig) { c.TopK = 0 },
		"max_tokens": func(c *SalienceConfig) { c.MaxTokens = 0 },
		"min":        func(c *SalienceConfig) { c.MinMessages = -1 },
		"weight":     func(c *SalienceConfig) { c.WeightSignal = math.Inf(1) },
		"keyword":    func(c *SalienceConfig) { c.WeightKeyword = math.NaN() },
	} {
		cfg := DefaultSalienceConfig()
		mutate(&cfg)
		if _, err := NewSelector(cfg, clock.NewDeterministicRNG(1)); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := NewSelector(DefaultSalienceConfig(), nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("nil RNG: err = %v", err)
	}
}

func BenchmarkSelect1000(b *testing.B) {
	lines := []string{
		"Let me read the file first.",
		"I'll run the tests now.",
		"The test failed with a panic in the handler.",
		"Actually, that's wrong: we decided to use NATS KV instead of Redis.",
		"Here is the diff for internal/bus/kv.go.",
		"TODO: add a metric for redeliveries.",
	}
	ms := make([]Message, 1000)
	signals := make([]float64, 1000)
	for i := range ms {
		ms[i] = Message{ID: fmt.Sprintf("m%d", i), Content: strings.Repeat(lines[i%len(lines)]+" ", 1+i%4)}
		if i%17 == 0 {
			signals[i] = 1
		}
	}
	s, err := NewSelector(DefaultSalienceConfig(), clock.NewDeterministicRNG(1))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s.Select(ms, signals)
	}
}
