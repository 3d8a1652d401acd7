package tokens

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Counter counts a text once and then any stretch of it (its chunks, its
// lines) without splitting that stretch again: the indexer counts each
// file whole and each of its chunks, which is the same text twice.
// Range(x, y) is always Count(text[x:y]); where reusing the whole count
// could be off (a stretch that does not start where a piece does, one the
// whole count cut in parts) it counts the stretch afresh.
type Counter struct {
	s string
	// ends[i] is where piece i ends, cum[i] the tokens of pieces 0..i.
	ends, cum []int32
	// cuts are where Count cut the text into parts.
	cuts  []int32
	total int
	// plain is false for text Count would repair first (invalid UTF-8)
	// or too long for int32 offsets: every range is counted afresh.
	plain bool
}

// NewCounter counts s.
func NewCounter(s string) *Counter {
	c := &Counter{s: s}
	if !utf8.ValidString(s) || len(s) >= 1<<31-1 {
		c.total = Count(s)
		return c
	}
	c.plain = true
	codec, err := codec()
	if err == nil {
		_, err = ranks()
	}
	if err != nil {
		panic("tokens: cl100k_base unavailable: " + err.Error())
	}
	// DEL counts as another control character (see Count); it keeps the
	// offsets.
	text := s
	if strings.IndexByte(text, 0x7f) >= 0 {
		text = strings.ReplaceAll(text, "\x7f", "\x1f")
	}
	c.ends = offsets(len(text)/4 + 1)
	c.cum = offsets(len(text)/4 + 1)
	at, total := 0, 0
	for at < len(text) {
		n := cut(text[at:])
		part := text[at : at+n]
		for len(part) > 0 {
			k := nextPiece(part)
			total += pieceCount(codec, part[:k])
			at += k
			part = part[k:]
			c.ends = append(c.ends, int32(at))
			c.cum = append(c.cum, int32(total))
		}
		if at < len(text) {
			c.cuts = append(c.cuts, int32(at))
		}
	}
	c.total = total
	return c
}

// spareOffsets holds the offset slices of released Counters: two of a
// quarter of the text's length each, per file indexed, were a tenth of the
// indexer's garbage.
var spareOffsets sync.Pool

func offsets(n int) []int32 {
	if p, _ := spareOffsets.Get().(*[]int32); p != nil && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]int32, 0, n)
}

// Release hands c's memory on to the next Counter; c must not be used
// after.
func (c *Counter) Release() {
	for _, s := range [][]int32{c.ends, c.cum} {
		if cap(s) > 0 {
			spareOffsets.Put(&s)
		}
	}
	*c = Counter{}
}

// Total is Count of the whole text.
func (c *Counter) Total() int { return c.total }

// Range returns Count(text[x:y]).
func (c *Counter) Range(x, y int) int {
	if x >= y {
		return 0
	}
	sub := c.s[x:y]
	if !c.plain || len(sub) > pieceSize || c.cutWithin(x, y) || spaceRunEnd(sub) != 0 {
		return Count(sub)
	}
	// The piece starting at x: the whole count holds it only if a piece
	// starts there.
	first := 0
	if x > 0 {
		i := sort.Search(len(c.ends), func(i int) bool { return int(c.ends[i]) >= x })
		if i == len(c.ends) || int(c.ends[i]) != x {
			return Count(sub)
		}
		first = i + 1
	}
	// The last two pieces before y are counted afresh. A piece's shape
	// depends only on its own text and the character after it, but for
	// the whitespace run it starts: a run that goes on past y can end in a
	// piece of its spaces and one of its last space in the whole text
	// where the stretch has one piece of them; a piece before those, or
	// one ending at the run's last line break, is the same in both.
	last := sort.Search(len(c.ends), func(i int) bool { return int(c.ends[i]) > y }) - 1
	last -= 2
	if last < first {
		return Count(sub)
	}
	n := int(c.cum[last])
	if first > 0 {
		n -= int(c.cum[first-1])
	}
	return n + Count(c.s[c.ends[last]:y])
}

func (c *Counter) cutWithin(x, y int) bool {
	i := sort.Search(len(c.cuts), func(i int) bool { return int(c.cuts[i]) > x })
	return i < len(c.cuts) && int(c.cuts[i]) < y
}
