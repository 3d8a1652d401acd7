// Package tokens counts the tokens a language model would see in a text, with
// OpenAI's cl100k_base encoding. The indexer records counts on documents and
// chunks; the context builder spends its budget with them.
package tokens

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// The encoder is handed bounded pieces of text. Its memory grows with the
// piece, and its pre-split regexp backtracks: on a run of whitespace that
// holds newlines it takes time quadratic in the run's length (a megabyte of
// " \n" takes a minute). So pieces are at most pieceSize bytes, and no piece
// holds more than maxSpaceRun bytes of consecutive whitespace.
const (
	pieceSize   = 64 << 10
	maxSpaceRun = 256
)

// codec loads the encoding on first use rather than at init: building its
// vocabulary takes tens of milliseconds that a process which never counts
// should not pay.
var codec = sync.OnceValues(func() (tokenizer.Codec, error) {
	return tokenizer.Get(tokenizer.Cl100kBase)
})

// Count returns the number of cl100k_base tokens in s. Text longer than 64
// KiB is counted in pieces cut at newlines (or, failing that, at spaces or
// any rune boundary), which may differ from the exact count by a token per
// piece. Invalid UTF-8 counts as it would after replacement with U+FFFD.
func Count(s string) int {
	if s == "" {
		return 0
	}
	c, err := codec()
	if err != nil {
		// The encoding is compiled into the binary; failing to load it is a
		// build defect, not a runtime condition.
		panic("tokens: cl100k_base unavailable: " + err.Error())
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0x7f) >= 0 {
		// The encoder's compiled pre-split regexp matches no DEL, so DEL
		// would count as nothing; any other control character is a token
		// of its own as DEL is in cl100k_base.
		s = strings.ReplaceAll(s, "\x7f", "\x1f")
	}
	total := 0
	for len(s) > 0 {
		piece := s[:cut(s)]
		s = s[len(piece):]
		n, _ := c.Count(piece) // Count fails only on invalid UTF-8 in strict mode
		total += n
	}
	return total
}

// cut returns the length of the next piece of s: up to the point where a
// whitespace run reaches maxSpaceRun bytes, if one does within pieceSize;
// else all of s when short; else up to the last newline within pieceSize,
// the last space, or the last rune boundary.
func cut(s string) int {
	run := 0
	for i := 0; i < len(s) && i < pieceSize; i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			if run++; run == maxSpaceRun {
				return i + 1
			}
		default:
			run = 0
		}
	}
	if len(s) <= pieceSize {
		return len(s)
	}
	head := s[:pieceSize]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		return i + 1
	}
	if i := strings.LastIndexByte(head, ' '); i > 0 {
		return i + 1
	}
	n := pieceSize
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n == 0 {
		return pieceSize
	}
	return n
}
