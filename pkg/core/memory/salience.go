package memory

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// Message is one message of a transcript, as salience selection sees it.
type Message struct {
	ID      string `json:"id"`
	Content string `json:"content"`
}

// SalienceConfig tunes salience selection (seed 003 §1). Start from
// DefaultSalienceConfig.
type SalienceConfig struct {
	// WeightSignal weighs a message's signal magnitude (the seed's
	// weightDelta on the mood delta).
	WeightSignal float64 `json:"weight_signal"`
	// WeightKeyword weighs its keyword score (the seed's weightEmotion).
	WeightKeyword float64 `json:"weight_keyword"`
	// TopK is how many messages are selected before context is added.
	TopK int `json:"top_k"`
	// MinMessages is how many messages token pruning always leaves.
	MinMessages int `json:"min_messages"`
	// MaxTokens is the budget; selection aims at 90% of it.
	MaxTokens int `json:"max_tokens"`
	// Keywords are the keyword tiers.
	Keywords Keywords `json:"keywords"`
	// CountTokens estimates a message's tokens; nil means tokens.Count.
	CountTokens func(string) int `json:"-"`
}

// DefaultSalienceConfig returns the seed's defaults (weights 0.5 and 0.3,
// top 24, at least 5 messages, 3,000 tokens) with CodingKeywords, since
// CueDeck reads coding-agent transcripts.
func DefaultSalienceConfig() SalienceConfig {
	return SalienceConfig{
		WeightSignal:  0.5,
		WeightKeyword: 0.3,
		TopK:          24,
		MinMessages:   5,
		MaxTokens:     3000,
		Keywords:      CodingKeywords(),
	}
}

// ErrInvalidConfig is wrapped by the errors of SalienceConfig.Validate.
var ErrInvalidConfig = errors.New("memory: invalid salience config")

// Validate reports a config selection cannot use: non-finite weights,
// TopK or MaxTokens below 1, or a negative MinMessages. Its errors wrap
// ErrInvalidConfig.
func (c SalienceConfig) Validate() error {
	switch {
	case math.IsNaN(c.WeightSignal) || math.IsInf(c.WeightSignal, 0):
		return fmt.Errorf("%w: weight_signal %v", ErrInvalidConfig, c.WeightSignal)
	case math.IsNaN(c.WeightKeyword) || math.IsInf(c.WeightKeyword, 0):
		return fmt.Errorf("%w: weight_keyword %v", ErrInvalidConfig, c.WeightKeyword)
	case c.TopK < 1:
		return fmt.Errorf("%w: top_k %d < 1", ErrInvalidConfig, c.TopK)
	case c.MinMessages < 0:
		return fmt.Errorf("%w: min_messages %d < 0", ErrInvalidConfig, c.MinMessages)
	case c.MaxTokens < 1:
		return fmt.Errorf("%w: max_tokens %d < 1", ErrInvalidConfig, c.MaxTokens)
	}
	return nil
}

// TokenSafetyMargin is the share of MaxTokens selection aims at.
const TokenSafetyMargin = 0.9

// PositionBoost is the seed's boost for the first and last fifth of a
// conversation: 0.2 when index/n < 0.2 or > 0.8, else 0.
func PositionBoost(index, n int) float64 {
	if n <= 0 {
		return 0
	}
	p := float64(index) / float64(n)
	if p < 0.2 || p > 0.8 {
		return 0.2
	}
	return 0
}

// Selector picks the salient messages of a transcript. It is safe for
// concurrent use if its RNG is (package clock's are).
type Selector struct {
	cfg   SalienceConfig
	kw    Keywords
	rng   clock.RNG
	count func(string) int
}

// NewSelector returns a selector drawing tie-breaks from rng. If cfg is
// invalid, the error wraps ErrInvalidConfig.
func NewSelector(cfg SalienceConfig, rng clock.RNG) (*Selector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, fmt.Errorf("%w: nil RNG", ErrInvalidConfig)
	}
	count := cfg.CountTokens
	if count == nil {
		count = tokens.Count
	}
	return &Selector{cfg: cfg, kw: cfg.Keywords.lowered(), rng: rng, count: count}, nil
}

// MessageScore is a selected message's salience.
type MessageScore struct {
	ID    string  `json:"id"`
	Index int     `json:"index"`
	Score float64 `json:"score"`
	// Context is true for a message kept only as the neighbour of a
	// selected one.
	Context bool `json:"context,omitempty"`
}

// Selection is the result of Select, in transcript order.
type Selection struct {
	Messages []Message `json:"messages"`
	IDs      []string  `json:"ids"`
	// PrunedCount is how many of the input messages were left out.
	PrunedCount     int            `json:"pruned_count"`
	EstimatedTokens int            `json:"estimated_tokens"`
	Scores          []MessageScore `json:"scores"`
}

// Score is a message's salience: WeightSignal·signal +
// WeightKeyword·keyword score + PositionBoost(index, n). A non-finite
// signal counts as 0.
func (s *Selector) Score(content string, signal float64, index, n int) float64 {
	if math.IsNaN(signal) || math.IsInf(signal, 0) {
		signal = 0
	}
	return s.cfg.WeightSignal*signal +
		s.cfg.WeightKeyword*s.kw.score(strings.ToLower(content)) +
		PositionBoost(index, n)
}

// Select is seed 003 §1's selectSalientMessages. signals[i] is message i's
// signal magnitude, the seed's mood delta generalised (for a coding
// transcript, say, 1 for a failed tool call or a user's correction);
// signals may be shorter than messages or nil, and a missing signal is 0.
//
// Messages are ranked by score, highest first. Equal scores are broken by
// the RNG: Select draws one key per message, in message order, before
// ranking (n draws whatever the ties, so the RNG advances by n each call),
// and the lower key ranks first; equal keys fall back to message order.
// So a given RNG state always yields the same selection.
//
// The TopK best are selected, then the message before and after each is
// added as context, once. A context message carries its own score, and as
// it ranks below every selected message (it was not in the top K) token
// pruning removes context before any selected message. While the
// estimated tokens (the sum of each kept message's count) exceed
// MaxTokens·0.9 and more than MinMessages remain, the lowest-ranked
// message is removed. The rest are returned in transcript order.
func (s *Selector) Select(messages []Message, signals []float64) Selection {
	n := len(messages)
	if n == 0 {
		return Selection{}
	}
	keys := make([]float64, n)
	for i := range keys {
		keys[i] = s.rng.NextFloat()
	}
	scores := make([]float64, n)
	order := make([]int, n)
	for i, m := range messages {
		var sig float64
		if i < len(signals) {
			sig = signals[i]
		}
		scores[i] = s.Score(m.Content, sig, i, n)
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})

	// kept lists indices best first; role[i] is 1 for selected, 2 for
	// context, 0 for left out.
	role := make([]uint8, n)
	top := order[:min(s.cfg.TopK, n)]
	for _, i := range top {
		role[i] = 1
	}
	for _, i := range top {
		for _, j := range [2]int{i - 1, i + 1} {
			if j >= 0 && j < n && role[j] == 0 {
				role[j] = 2
			}
		}
	}
	kept := make([]int, 0, min(3*len(top), n))
	for _, i := range order {
		if role[i] != 0 {
			kept = append(kept, i)
		}
	}

	counts := make([]int, len(kept))
	total := 0
	for k, i := range kept {
		counts[k] = s.count(messages[i].Content)
		total += counts[k]
	}
	limit := float64(s.cfg.MaxTokens) * TokenSafetyMargin
	for float64(total) > limit && len(kept) > s.cfg.MinMessages {
		last := len(kept) - 1
		total -= counts[last]
		kept, counts = kept[:last], counts[:last]
	}

	slices.Sort(kept)
	sel := Selection{
		Messages:        make([]Message, len(kept)),
		IDs:             make([]string, len(kept)),
		PrunedCount:     n - len(kept),
		EstimatedTokens: total,
		Scores:          make([]MessageScore, len(kept)),
	}
	for k, i := range kept {
		sel.Messages[k] = messages[i]
		sel.IDs[k] = messages[i].ID
		sel.Scores[k] = MessageScore{ID: messages[i].ID, Index: i, Score: scores[i], Context: role[i] == 2}
	}
	return sel
}
