// Package tokens counts the tokens a language model would see in a text, with
// OpenAI's cl100k_base encoding. The indexer records counts on documents and
// chunks; the context builder spends its budget with them.
package tokens

import (
	"hash/maphash"
	"runtime"
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
	t := acquireTable()
	defer t.mu.Unlock()
	total := 0
	for len(s) > 0 {
		part := s[:cut(s)]
		s = s[len(part):]
		for len(part) > 0 {
			n := nextPiece(part)
			total += t.count(c, part[:n])
			part = part[n:]
		}
	}
	return total
}

// pieceTable remembers the byte-pair counts of short pieces. Source text
// repeats its pieces (keywords, identifiers, indentation, punctuation) so
// much that remembering them makes counting several times faster than
// encoding every piece. A Count call holds one table for its whole run,
// so a lookup needs no synchronisation of its own.
type pieceTable struct {
	mu    sync.Mutex
	slots []pieceSlot // direct-mapped by the piece's hash
}

type pieceSlot struct {
	piece string
	count int32
}

const (
	// maxCachedPiece bounds the pieces remembered (whitespace up to
	// maxSpaceRun): longer ones rarely repeat.
	maxCachedPiece = 32
	tableSlots     = 1 << 15
)

var (
	pieceSeed  = maphash.MakeSeed()
	tables     []pieceTable
	tablesOnce sync.Once
	nextTable  atomic.Uint32
	tableCount = runtime.NumCPU
)

// acquireTable returns a table locked for the caller, preferring one no
// other Count holds.
func acquireTable() *pieceTable {
	tablesOnce.Do(func() {
		tables = make([]pieceTable, min(max(2*tableCount(), 4), 32))
		for i := range tables {
			tables[i].slots = make([]pieceSlot, tableSlots)
		}
	})
	first := int(nextTable.Add(1))
	for i := range tables {
		t := &tables[(first+i)%len(tables)]
		if t.mu.TryLock() {
			return t
		}
	}
	t := &tables[first%len(tables)]
	t.mu.Lock()
	return t
}

// count is the number of tokens byte-pair encoding makes of one pre-split
// piece.
func (t *pieceTable) count(c tokenizer.Codec, piece string) int {
	if len(piece) == 1 {
		return 1 // every byte is a token of its own
	}
	if len(piece) > maxCachedPiece && !(len(piece) <= maxSpaceRun && isSpaceRun(piece)) {
		n, _ := c.Count(piece) // Count fails only on invalid UTF-8 in strict mode
		return n
	}
	slot := &t.slots[maphash.String(pieceSeed, piece)%tableSlots]
	if slot.piece == piece {
		return int(slot.count)
	}
	// The encoder's pre-split of the piece alone is the piece itself, so
	// this is the piece's byte-pair count.
	n, _ := c.Count(piece)
	*slot = pieceSlot{piece: strings.Clone(piece), count: int32(n)}
	return n
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
