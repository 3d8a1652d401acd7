// Package tokens counts the tokens a language model would see in a text, with
// OpenAI's cl100k_base encoding. The indexer records counts on documents and
// chunks; the context builder spends its budget with them.
package tokens

import (
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"
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

// ranks maps every cl100k_base token to its rank (its id), read from the
// encoder's own vocabulary on first use, so that short pieces are merged
// here without the encoder's regexp, which costs microseconds a piece.
var ranks = sync.OnceValues(func() (*rankTable, error) {
	c, err := codec()
	if err != nil {
		return nil, err
	}
	const ordinary = 100256 // ids above are special tokens
	t := newRankTable(ordinary)
	n := 0
	for id := range ordinary {
		if tok, err := c.Decode([]uint{uint(id)}); err == nil && tok != "" {
			if _, dup := t.lookup(tok); !dup {
				n++
			}
			t.add(tok, int32(id))
		}
	}
	if n != ordinary {
		return nil, fmt.Errorf("tokens: cl100k_base has %d of %d ordinary tokens", n, ordinary)
	}
	return t, nil
})

// rankTable holds the ranks of tokens of up to 8 bytes under their bytes
// packed in a word, which a merge looks up far more often than a longer
// one: a word key is hashed and compared in one step, where a string key
// was most of the cost of merging a piece. Keys of up to 7 bytes hold
// their length in the top byte; 8-byte keys need all 64 bits and have a
// map of their own.
type rankTable struct {
	upTo7, eight map[uint64]int32
	long         map[string]int32
}

func newRankTable(n int) *rankTable {
	return &rankTable{upTo7: make(map[uint64]int32, n), eight: make(map[uint64]int32), long: make(map[string]int32)}
}

// packed is s, of at most 8 bytes, in a word, its first byte lowest.
func packed(s string) uint64 {
	var k uint64
	for i := len(s) - 1; i >= 0; i-- {
		k = k<<8 | uint64(s[i])
	}
	return k
}

func (t *rankTable) add(tok string, r int32) {
	switch {
	case len(tok) < 8:
		t.upTo7[packed(tok)|uint64(len(tok))<<56] = r
	case len(tok) == 8:
		t.eight[packed(tok)] = r
	default:
		t.long[tok] = r
	}
}

func (t *rankTable) lookup(s string) (int32, bool) {
	var r int32
	var ok bool
	switch {
	case len(s) < 8:
		r, ok = t.upTo7[packed(s)|uint64(len(s))<<56]
	case len(s) == 8:
		r, ok = t.eight[packed(s)]
	default:
		r, ok = t.long[s]
	}
	return r, ok
}

// Count returns the number of cl100k_base tokens in s. Text longer than 64
// KiB is counted in pieces cut at newlines (or, failing that, at spaces or
// any rune boundary), which may differ from the exact count by a token per
// piece. Invalid UTF-8 counts as it would after replacement with U+FFFD.
func Count(s string) int {
	if s == "" {
		return 0
	}
	c, err := codec()
	if err == nil {
		_, err = ranks()
	}
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
		for len(part) > 0 {
			n := nextPiece(part)
			total += pieceCount(c, part[:n])
			part = part[n:]
		}
	}
	return total
}

// pieceCounts remembers the byte-pair counts of short pieces, direct-mapped
// by a piece's hash. Source text repeats its pieces (keywords, identifiers,
// indentation, punctuation) so much that remembering them makes counting
// several times faster than merging every piece. A slot holds the piece's
// hash above countBits and its count below, in one word: a lookup is one
// load with no pointer to follow or string to compare, which halved the
// cost of a hit on real code, and every Count shares the table without
// locks. A piece is known by its hash alone: two pieces of this table
// agreeing in all 54 bits kept are rarer than one in 10^9 per file.
var pieceCounts [1 << 17]atomic.Uint64

// countBits holds a cached count: pieces are at most maxSpaceRun bytes,
// so counts are at most 256.
const countBits = 10

// maxCachedPiece bounds the pieces remembered, but for whitespace (up to
// maxSpaceRun, which Count never exceeds): longer ones rarely repeat.
const maxCachedPiece = 32

var pieceSeed = maphash.MakeSeed()

// pieceCount is the number of tokens byte-pair encoding makes of one
// pre-split piece.
func pieceCount(c tokenizer.Codec, piece string) int {
	if len(piece) == 1 {
		return 1 // every byte is a token of its own
	}
	if len(piece) > maxMergedPiece {
		n, _ := c.Count(piece) // Count fails only on invalid UTF-8 in strict mode
		return n
	}
	if len(piece) > maxCachedPiece && !isSpaceRun(piece) {
		return mergeCount(piece)
	}
	h := maphash.String(pieceSeed, piece)
	tag := h &^ (1<<countBits - 1)
	slot := &pieceCounts[h%uint64(len(pieceCounts))]
	if v := slot.Load(); v != 0 && v&^(1<<countBits-1) == tag {
		return int(v & (1<<countBits - 1))
	}
	n := mergeCount(piece)
	slot.Store(tag | uint64(n))
	return n
}

// maxMergedPiece bounds the pieces mergeCount merges; the encoder merges
// longer ones (rare: a word of hundreds of letters) in O(n log n).
const maxMergedPiece = maxSpaceRun

// mergeCount returns the number of tokens byte-pair encoding makes of a
// piece of at most maxMergedPiece bytes: starting from its bytes, the
// adjacent pair whose joined bytes have the lowest rank is merged, the
// leftmost on a tie, until no pair is a token.
func mergeCount(piece string) int {
	rs, _ := ranks() // loaded by Count
	if _, ok := rs.lookup(piece); ok {
		return 1
	}
	const none = math.MaxInt32
	var bounds [maxMergedPiece + 1]int32
	var pairRank [maxMergedPiece + 1]int32 // pairRank[i]: parts i and i+1 joined
	n := len(piece) + 1                    // boundaries
	for i := range n {
		bounds[i] = int32(i)
	}
	rankOf := func(i int) int32 {
		if i+2 >= n {
			return none
		}
		if r, ok := rs.lookup(piece[bounds[i]:bounds[i+2]]); ok {
			return r
		}
		return none
	}
	for i := range n - 1 {
		pairRank[i] = rankOf(i)
	}
	for n > 2 {
		lowest, at := int32(none), -1
		for i := range n - 2 {
			if pairRank[i] < lowest {
				lowest, at = pairRank[i], i
			}
		}
		if at < 0 {
			break
		}
		copy(bounds[at+1:n-1], bounds[at+2:n])
		copy(pairRank[at+1:n-1], pairRank[at+2:n])
		n--
		pairRank[at] = rankOf(at)
		if at > 0 {
			pairRank[at-1] = rankOf(at - 1)
		}
	}
	return n - 1
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

// spaceRunEnd returns the index just past the first maxSpaceRun bytes of
// ASCII whitespace in a row in s, or 0 if there are none. Such a run covers
// two of the bytes at every stride of half its length, so those alone are
// looked at until one is whitespace.
func spaceRunEnd(s string) int {
	const stride = maxSpaceRun / 2
	scanned := 0 // s[:scanned] holds no run long enough
	for p := stride - 1; p < len(s); p += stride {
		if !isSpaceByte(s[p]) {
			continue
		}
		a := p
		for a > scanned && isSpaceByte(s[a-1]) {
			a--
		}
		e := p + 1
		for e < len(s) && e < a+maxSpaceRun && isSpaceByte(s[e]) {
			e++
		}
		if e-a == maxSpaceRun {
			return e
		}
		scanned = e
	}
	return 0
}

func isSpaceByte(c byte) bool { return c < utf8.RuneSelf && asciiClass[c] == classSpace }

// cut returns the length of the next piece of s: up to the point where a
// whitespace run reaches maxSpaceRun bytes, if one does within pieceSize;
// else all of s when short; else up to the last newline within pieceSize,
// the last space, or the last rune boundary.
func cut(s string) int {
	if end := spaceRunEnd(s[:min(len(s), pieceSize)]); end > 0 {
		return end
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
