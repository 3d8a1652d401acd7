package builtin

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

const (
	// maxTokens is where the model clips its input.
	maxTokens = 128
	// reservedIDs are the control symbols at the start of the vocabulary;
	// they never match text. Id 0 is the unknown symbol.
	reservedIDs = 6
	unknownID   = 0
	// separator replaces spaces and starts every input, as in SentencePiece.
	separator = "▁"
)

// tokenizer is the SentencePiece unigram model of USE Lite, reproducing the
// reference JavaScript tokenizer: a Viterbi pass over all vocabulary pieces
// that prefix each position, then a walk back from the end.
type tokenizer struct {
	scores  []float64
	lengths []int // piece length in runes
	trie    []trieNode
}

type trieNode struct {
	next map[rune]int32
	id   int32 // vocabulary id ending here, or -1
}

func newTokenizer(vocabJSON []byte) (*tokenizer, error) {
	var raw [][2]any
	if err := json.Unmarshal(vocabJSON, &raw); err != nil {
		return nil, fmt.Errorf("parse vocabulary: %w", err)
	}
	t := &tokenizer{
		scores:  make([]float64, len(raw)),
		lengths: make([]int, len(raw)),
		trie:    []trieNode{{id: -1}},
	}
	for id, entry := range raw {
		piece, ok := entry[0].(string)
		if !ok {
			return nil, fmt.Errorf("vocabulary entry %d: piece is not a string", id)
		}
		if s, ok := entry[1].(float64); ok {
			t.scores[id] = s // null scores stay 0, as in JavaScript
		}
		runes := []rune(piece)
		t.lengths[id] = len(runes)
		if id >= reservedIDs {
			t.insert(runes, int32(id))
		}
	}
	return t, nil
}

func (t *tokenizer) insert(piece []rune, id int32) {
	n := int32(0)
	for _, r := range piece {
		child, ok := t.trie[n].next[r]
		if !ok {
			child = int32(len(t.trie))
			t.trie = append(t.trie, trieNode{id: -1})
			if t.trie[n].next == nil {
				t.trie[n].next = make(map[rune]int32)
			}
			t.trie[n].next[r] = child
		}
		n = child
	}
	t.trie[n].id = id
}

// tokens returns the vocabulary ids of text, at most maxTokens of them.
func (t *tokenizer) tokens(text string) []int {
	ids := t.allTokens(text)
	if len(ids) > maxTokens {
		ids = ids[:maxTokens]
	}
	return ids
}

// allTokens returns the vocabulary ids of all of text.
func (t *tokenizer) allTokens(text string) []int {
	// SentencePiece, which the model was trained with, normalises
	// whitespace before it segments: its nmt_nfkc rule maps tabs and line
	// breaks to spaces and remove_extra_whitespaces drops leading, trailing
	// and repeated ones (github.com/google/sentencepiece,
	// doc/normalization.md). The reference JavaScript tokenizer maps only
	// spaces, so a line break there is an unknown symbol that also costs
	// the next word its word-start piece; a heading line or a title above a
	// passage would cost that on every chunk.
	text = strings.Join(strings.Fields(norm.NFKC.String(text)), " ")
	if text == "" {
		return nil
	}
	s := []rune(separator + strings.ReplaceAll(text, " ", separator))
	n := len(s)
	best := make([]float64, n+1)
	words := make([]int, n+1)
	// Visiting starts in ascending order updates each end position in the
	// same order as the reference, and best[start] is final by then. An
	// unreached position keeps best 0, which beats any real score: the
	// reference behaves so, and the walk back then takes an unknown.
	for start := range n {
		node := int32(0)
		for end := start; end < n; end++ {
			child, ok := t.trie[node].next[s[end]]
			if !ok {
				break
			}
			node = child
			id := t.trie[node].id
			if id < 0 {
				continue
			}
			score := t.scores[id] + best[start]
			if best[end+1] == 0 || score >= best[end+1] {
				best[end+1] = score
				words[end+1] = int(id)
			}
		}
	}
	var ids []int
	for i := n; i > 0; i -= t.lengths[words[i]] {
		id := words[i]
		if id == unknownID && len(ids) > 0 && ids[len(ids)-1] == unknownID {
			continue // runs of unknowns become one
		}
		ids = append(ids, id)
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}
