package docparse

import (
	"strings"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// ChunkOptions tune how Build cuts a file into chunks.
type ChunkOptions struct {
	// MaxTokens is the most tokens (tokens.Count, cl100k_base) that
	// ChunkText may return for a chunk: the heading path line and the
	// chunk's lines together. Zero or less means MaxChunkTokens. An
	// indexer that feeds the built-in embedding model, which sees at most
	// 128 tokens of its own, passes about 128 less a margin for the
	// difference between the two tokenizers.
	//
	// Chunks keep whole lines, so a chunk of a single line may exceed
	// MaxTokens; no chunk of two lines or more does.
	MaxTokens int
}

func (o ChunkOptions) maxTokens() int {
	if o.MaxTokens <= 0 {
		return MaxChunkTokens
	}
	return o.MaxTokens
}

// ChunkText returns the text to embed for c, a chunk that Build made of
// content: the heading path joined by " > " on a line of its own, then the
// chunk's lines without the final line ending. A chunk without a heading
// path is its lines alone. For example, the chunk of a section "Login"
// under "Auth" in docs.md embeds as
//
//	Auth > Login
//	## Login
//	Send the form ...
//
// Invalid UTF-8 in content is replaced as Build replaces it, so content is
// the file as Build received it. To embed every chunk of a file, use
// ChunkTexts, which reads the content once.
func ChunkText(content string, c events.Chunk) string {
	return ChunkTexts(content, []events.Chunk{c})[0]
}

// ChunkTexts returns ChunkText of each chunk, in order.
func ChunkTexts(content string, chunks []events.Chunk) []string {
	if !utf8.ValidString(content) {
		content = strings.ToValidUTF8(content, "\uFFFD")
	}
	lines := newLines(content)
	n := lines.count()
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		a, b := max(c.StartLine, 1), min(c.EndLine, n)
		text := ""
		if a <= b {
			text = lines.text(content, a, b)
		}
		texts[i] = headingPrefix(c.HeadingPath) + text
	}
	return texts
}

// headingPrefix is the line ChunkText puts before a chunk's text.
func headingPrefix(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return strings.Join(path, " > ") + "\n"
}

// chunker cuts line ranges of one file into chunks under a token budget.
type chunker struct {
	content string
	lines   lineIndex
	// counter counts stretches of content without splitting them again.
	counter *tokens.Counter
	max     int
	// lineTokens[l] estimates what line l adds to a chunk: its tokens and
	// one for its line ending; zero until counted.
	lineTokens []int
	// glued[l] says line l may not start a piece: it continues a code
	// fence (markdown only).
	glued []bool
}

func newChunker(content string, lines lineIndex, counter *tokens.Counter, maxTokens int) *chunker {
	return &chunker{content: content, lines: lines, counter: counter, max: maxTokens}
}

// count is tokens.Count of lines a..b as text returns them.
func (c *chunker) count(a, b int) int {
	return c.counter.Range(c.lines.span(c.content, a, b))
}

func (c *chunker) lineCost(l int) int {
	if c.lineTokens == nil {
		c.lineTokens = make([]int, c.lines.count()+1)
	}
	if c.lineTokens[l] == 0 {
		c.lineTokens[l] = c.count(l, l) + 1
	}
	return c.lineTokens[l]
}

// label is the heading path of a region's chunks and the line ChunkText
// puts before them, counted only when a chunk comes near the budget.
type label struct {
	path   []string
	prefix string
	cost   int // tokens of prefix; -1 until counted
}

func newLabel(path []string) *label {
	return &label{path: path, prefix: headingPrefix(path), cost: -1}
}

func (l *label) tokens() int {
	if l.cost < 0 {
		l.cost = tokens.Count(l.prefix)
	}
	return l.cost
}

// region returns lines first..last, trimmed of blank lines, as one chunk
// labelled path if its ChunkText fits the budget. Otherwise it packs them
// into consecutive chunks: paragraphs (runs of lines between blank lines,
// a code fence counting as one run) whole while they fit, the lines of a
// paragraph that does not fit one by one; a piece of one line is kept
// whole even when it alone is over the budget.
func (c *chunker) region(first, last int, path []string) []events.Chunk {
	first, last, ok := c.lines.trim(c.content, first, last)
	if !ok {
		return nil
	}
	lb := newLabel(path)
	var chunks []events.Chunk
	if first == last {
		// One line is one chunk whatever its count.
		ch, _ := c.chunk(first, last, lb, false)
		return append(chunks, ch)
	}
	// Counting the whole region first pays when it is likely to fit: a
	// token averages 3 to 5 bytes. A region that fits but is not counted
	// here still comes out as one chunk below, at the cost of counting
	// its lines.
	size := c.lines.size - c.lines.starts[first-1]
	if last < len(c.lines.starts) {
		size = c.lines.starts[last] - c.lines.starts[first-1]
	}
	if size <= 8*c.max {
		if ch, ok := c.chunk(first, last, lb, true); ok {
			return append(chunks, ch)
		}
	}
	start, cost := 0, lb.tokens() // start is 0 while no piece is open
	add := func(a, b, n int) {
		if start != 0 && cost+n > c.max {
			chunks = c.emit(chunks, start, a-1, lb)
			start, cost = 0, lb.tokens()
		}
		if start == 0 {
			start = a
		}
		cost += n
	}
	for a := first; a <= last; {
		b, n := c.paragraph(a, last)
		if lb.tokens()+n <= c.max {
			add(a, b, n)
		} else {
			for l := a; l <= b; l++ {
				add(l, l, c.lineCost(l))
			}
		}
		a = b + 1
		for a <= last && c.lines.blank(c.content, a) {
			a++
		}
	}
	if start != 0 {
		chunks = c.emit(chunks, start, last, lb)
	}
	return chunks
}

// paragraph returns the last line of the paragraph that starts at a, a
// non-blank line, and its estimated cost.
func (c *chunker) paragraph(a, last int) (int, int) {
	b, n := a, c.lineCost(a)
	for b < last {
		next := b + 1
		if c.lines.blank(c.content, next) && !c.isGlued(next) {
			break
		}
		b = next
		n += c.lineCost(b)
		if n > c.max {
			// Too long to keep whole anyway; stop measuring it here so
			// the caller splits it at its lines.
			for b < last && (!c.lines.blank(c.content, b+1) || c.isGlued(b+1)) {
				b++
			}
			return b, n
		}
	}
	return b, n
}

func (c *chunker) isGlued(l int) bool { return c.glued != nil && c.glued[l] }

// emit appends lines a..b as one or more chunks. The estimate that packed
// them may fall short of the exact count; then the lines are halved until
// each piece fits or is a single line.
func (c *chunker) emit(chunks []events.Chunk, a, b int, lb *label) []events.Chunk {
	a, b, ok := c.lines.trim(c.content, a, b)
	if !ok {
		return chunks
	}
	if ch, ok := c.chunk(a, b, lb, a < b); ok || a == b {
		return append(chunks, ch)
	}
	m := a + (b-a)/2
	chunks = c.emit(chunks, a, m, lb)
	return c.emit(chunks, m+1, b, lb)
}

// chunk returns the chunk of lines a..b and, if check is set, whether its
// ChunkText fits the budget. The prefix ends in a newline, where
// cl100k_base's pre-split always cuts, so the ChunkText's count is the
// prefix's plus the text's; only a run of whitespace that tokens.Count
// cuts (see its doc) can shift that by a token. The exact count is taken
// only that close to the budget. A token is at least a byte, so a short
// prefix need not be counted at all.
func (c *chunker) chunk(a, b int, lb *label, check bool) (events.Chunk, bool) {
	text := c.lines.text(c.content, a, b)
	var n int
	if a == b && c.lineTokens != nil && c.lineTokens[a] != 0 {
		n = c.lineTokens[a] - 1 // counted already, and a long line is slow to count
	} else {
		n = c.count(a, b)
	}
	ch := events.Chunk{StartLine: a, EndLine: b, HeadingPath: lb.path, Tokens: n}
	if !check {
		return ch, true
	}
	if n+len(lb.prefix) <= c.max-embedSlack {
		return ch, true
	}
	switch sum := lb.tokens() + n; {
	case sum <= c.max-embedSlack:
		return ch, true
	case sum > c.max+embedSlack || lb.prefix == "":
		return ch, sum <= c.max
	}
	return ch, tokens.Count(lb.prefix+text) <= c.max
}

// embedSlack bounds how far the count of a ChunkText may be from the sum
// of its parts' counts.
const embedSlack = 2
