// Package tokens counts the tokens a language model would see in a text, with
// OpenAI's cl100k_base encoding. The indexer records counts on documents and
// chunks; the context builder spends its budget with them.
package tokens

import (
	"hash/maphash"
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
		part := s[:cut(s)]
		s = s[len(part):]
		splitPieces(part, func(piece string) { total += pieceCount(c, piece) })
	}
	return total
}

// pieceCount is the number of tokens byte-pair encoding makes of one
// pre-split piece. Source text repeats its pieces (keywords, identifiers,
// indentation, punctuation) so much that remembering the short ones makes
// counting several times faster than encoding every piece.
func pieceCount(c tokenizer.Codec, piece string) int {
	if len(piece) == 1 {
		return 1 // every byte is a token of its own
	}
	if len(piece) > maxCachedPiece && !(len(piece) <= maxSpaceRun && isSpaceRun(piece)) {
		n, _ := c.Count(piece) // Count fails only on invalid UTF-8 in strict mode
		return n
	}
	sh := &pieceCache[maphash.String(pieceSeed, piece)%uint64(len(pieceCache))]
	sh.mu.RLock()
	n, ok := sh.counts[piece]
	sh.mu.RUnlock()
	if ok {
		return int(n)
	}
	// The encoder's pre-split of the piece alone is the piece itself, so
	// this is the piece's byte-pair count.
	count, _ := c.Count(piece)
	sh.mu.Lock()
	if len(sh.counts) >= maxShardPieces {
		clear(sh.counts) // the working set of a repository refills it at once
	}
	if sh.counts == nil {
		sh.counts = make(map[string]int32)
	}
	sh.counts[strings.Clone(piece)] = int32(count)
	sh.mu.Unlock()
	return count
}

// isSpaceRun reports whether piece is ASCII whitespace: indentation and
// blank lines, which repeat as much as words do and cost the encoder's
// regexp time quadratic in their length.
func isSpaceRun(piece string) bool {
	for i := 0; i < len(piece); i++ {
		if c := piece[i]; c != ' ' && (c < '\t' || c > '\r') {
			return false
		}
	}
	return true
}

// The piece cache: pieces up to maxCachedPiece bytes (whitespace up to
// maxSpaceRun), at most
// len(pieceCache)*maxShardPieces of them (a few MiB), in shards so that
// the indexer's workers rarely wait on each other.
const (
	maxCachedPiece = 32
	maxShardPieces = 4096
)

var (
	pieceSeed  = maphash.MakeSeed()
	pieceCache [64]struct {
		mu     sync.RWMutex
		counts map[string]int32
	}
)

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
