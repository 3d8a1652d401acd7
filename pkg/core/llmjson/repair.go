package llmjson

import (
	"encoding/json"
	"errors"
	"strings"
)

// Limits of Repair (seed 003 §7).
const (
	// MaxLength is the longest input, in bytes, that Repair accepts.
	MaxLength = 50_000
	// MaxRepairs bounds the repair passes Repair makes over one input,
	// counting passes over every candidate start.
	MaxRepairs = 10
)

// Errors of Repair. Each stands for the seed's null result.
var (
	ErrTooLarge     = errors.New("llmjson: input longer than MaxLength")
	ErrNoJSON       = errors.New("llmjson: no JSON object or array in input")
	ErrUnrepairable = errors.New("llmjson: input could not be repaired into valid JSON")
)

// Repair returns input as valid JSON, repairing what a language model
// commonly gets wrong: prose or a markdown fence around the value, trailing
// commas, single-quoted strings, unescaped quotes and raw control characters
// inside strings, and a value cut short (an unclosed string, a truncated
// number or literal, a dangling key, unclosed objects and arrays).
//
// Input that is already valid JSON, of any kind, is returned unchanged.
// Otherwise the result is the first object or array found in input, repaired.
//
// If input is longer than MaxLength bytes, ErrTooLarge is returned; if it
// holds no '{' or '[', ErrNoJSON; if no repair makes it valid,
// ErrUnrepairable. The string is empty whenever the error is not nil.
func Repair(input string) (string, error) {
	if len(input) > MaxLength {
		return "", ErrTooLarge
	}
	if json.Valid([]byte(input)) {
		return input, nil
	}
	return repair(input)
}

// repair is Repair without the length limit and the fast path; the stream
// assembler calls it on buffers up to MaxBufferSize.
func repair(input string) (string, error) {
	text := input
	if body, ok := fenced(input); ok {
		text = body
	}
	start := strings.IndexAny(text, "{[")
	if start < 0 {
		return "", ErrNoJSON
	}
	for budget := MaxRepairs; start >= 0 && budget > 0; {
		working := text[start:]
		// A pass that stops early (its value closed) tells where the next
		// candidate may begin: prose such as "see [1]" before the JSON.
		next := -1
		for pass := 0; budget > 0; pass++ {
			budget--
			out, consumed := repairPass(working)
			if pass == 0 && consumed < len(working) {
				next = start + consumed
			}
			if json.Valid([]byte(out)) {
				return out, nil
			}
			if out == working {
				break
			}
			working = out
		}
		if next < 0 {
			break
		}
		i := strings.IndexAny(text[next:], "{[")
		if i < 0 {
			break
		}
		start = next + i
	}
	return "", ErrUnrepairable
}

// fenced returns the body of the first markdown code fence (```, with or
// without a language tag) that holds an object or array. A fence left open
// runs to the end of input, as a truncated reply leaves it.
func fenced(input string) (string, bool) {
	rest := input
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			return "", false
		}
		rest = rest[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return "", false
		}
		rest = rest[nl+1:]
		body := rest
		end := strings.Index(rest, "```")
		if end >= 0 {
			body = rest[:end]
		}
		if strings.ContainsAny(body, "{[") {
			return body, true
		}
		if end < 0 {
			return "", false
		}
		rest = rest[end+3:]
	}
}

// slot is where a container is in its grammar.
type slot uint8

const (
	expectKey   slot = iota // object: after '{' or ','
	expectColon             // object: after a key
	expectValue             // object: after ':'; array: after '[' or ','
	afterValue              // after a member or element
)

// frame is one open object or array.
type frame struct {
	kind  byte // '{' or '['
	slot  slot
	comma int // offset in out of the last comma written, or -1
	// member is the offset in out where the current key's member began
	// (its leading comma included), so a dangling key can be dropped.
	member int
}

// repairer is one pass of the repair state machine over text that starts
// with '{' or '['. The seed's states map onto it as: default is the main
// loop of repairPass, in_string is scanString, escape is scanEscape and
// in_number is scanNumber; scanWord adds literals, which the seed drops.
type repairer struct {
	src   string
	out   []byte
	stack []frame
	open  [2]int // open objects and arrays in stack, so a stray closer is not a stack walk
}

// repairPass makes one repair pass over src. It returns the repaired text
// and how many bytes of src it consumed: it stops when the first value
// closes, leaving what follows (prose, a second value) unread.
func repairPass(src string) (string, int) {
	r := &repairer{src: src, out: make([]byte, 0, len(src)+16)}
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			j := i + 1
			for j < len(src) && isSpace(src[j]) {
				j++
			}
			r.out = append(r.out, src[i:j]...)
			i = j
		case c == '{' || c == '[':
			r.place(false)
			r.out = append(r.out, c)
			f := frame{kind: c, slot: expectValue, comma: -1, member: -1}
			if c == '{' {
				f.slot = expectKey
			}
			r.stack = append(r.stack, f)
			r.open[kindIndex(c)]++
			i++
		case c == '}' || c == ']':
			i++
			if r.close(c) && len(r.stack) == 0 {
				return string(r.out), i
			}
		case c == ',':
			r.comma()
			i++
		case c == ':':
			if f := r.top(); f != nil && f.slot == expectColon {
				f.slot = expectValue
			}
			r.out = append(r.out, ':')
			i++
		case c == '"' || c == '\'':
			r.place(true)
			i = r.scanString(i)
		case c == '-' || isDigit(c):
			i = r.scanNumber(i)
		case isWordStart(c):
			i = r.scanWord(i)
		default:
			// Unknown bytes stay: repair does not guess what prose inside
			// a value meant, and validation rejects the result.
			r.out = append(r.out, c)
			i++
		}
	}
	for len(r.stack) > 0 {
		r.closeTop()
	}
	return string(r.out), len(src)
}

func (r *repairer) top() *frame {
	if len(r.stack) == 0 {
		return nil
	}
	return &r.stack[len(r.stack)-1]
}

// place readies out for the next token and reports whether it is a key.
// keyable says the token can be a key (a string or a bare word). A missing
// comma or colon is written here; a token that fits nowhere is left for
// validation to reject.
func (r *repairer) place(keyable bool) (key bool) {
	f := r.top()
	if f == nil {
		return false
	}
	if f.kind == '[' {
		if f.slot == afterValue {
			f.comma = len(r.out)
			r.out = append(r.out, ',')
		}
		f.slot = afterValue
		return false
	}
	switch f.slot {
	case expectKey:
		if keyable {
			f.member = len(r.out)
			if f.comma >= 0 {
				f.member = f.comma
			}
			f.slot = expectColon
			return true
		}
		f.slot = afterValue
	case expectColon:
		r.out = append(r.out, ':')
		f.slot = afterValue
	case expectValue:
		f.slot = afterValue
	case afterValue:
		if keyable {
			f.comma = len(r.out)
			f.member = f.comma
			r.out = append(r.out, ',')
			f.slot = expectColon
			return true
		}
	}
	return false
}

func (r *repairer) comma() {
	f := r.top()
	switch {
	case f != nil && f.slot == afterValue:
		f.comma = len(r.out)
		f.slot = expectValue
		if f.kind == '{' {
			f.slot = expectKey
		}
	case f != nil && (f.slot == expectKey || f.kind == '[' && f.slot == expectValue):
		return // a doubled comma, or one right after the opener
	}
	r.out = append(r.out, ',')
}

// close handles a closing byte c. It closes the innermost container c can
// close, closing any opened inside it first, so "[{" followed by ']' gets
// its '}'. A closer that matches no open container is dropped. It reports
// whether a container was closed.
func (r *repairer) close(c byte) bool {
	open := byte('{')
	if c == ']' {
		open = '['
	}
	if r.open[kindIndex(open)] == 0 {
		return false
	}
	for k := len(r.stack) - 1; k >= 0; k-- {
		if r.stack[k].kind == open {
			for len(r.stack) > k {
				r.closeTop()
			}
			return true
		}
	}
	return false
}

// closeTop closes the innermost container: a trailing comma or a dangling
// key goes, then the closer is written.
func (r *repairer) closeTop() {
	f := r.stack[len(r.stack)-1]
	switch {
	case f.kind == '{' && (f.slot == expectColon || f.slot == expectValue):
		r.out = r.out[:f.member]
	case (f.slot == expectKey || f.slot == expectValue) && f.comma >= 0:
		r.out = r.out[:f.comma]
	}
	if f.kind == '{' {
		r.out = append(r.out, '}')
	} else {
		r.out = append(r.out, ']')
	}
	r.stack = r.stack[:len(r.stack)-1]
	r.open[kindIndex(f.kind)]--
}

func kindIndex(open byte) int {
	if open == '{' {
		return 0
	}
	return 1
}

// scanString copies the string starting at src[i] (opened by '"' or '\”)
// to out as a double-quoted JSON string and returns the offset after it.
func (r *repairer) scanString(i int) int {
	src, q := r.src, r.src[i]
	r.out = append(r.out, '"')
	i++
	for i < len(src) {
		j := i
		for j < len(src) && src[j] != q && src[j] != '"' && src[j] != '\\' && src[j] >= 0x20 {
			j++
		}
		r.out = append(r.out, src[i:j]...)
		if i = j; i >= len(src) {
			break
		}
		switch c := src[i]; {
		case c == q:
			if closesString(src, i+1) {
				r.out = append(r.out, '"')
				return i + 1
			}
			// A quote inside the text, as in "say "hi" now" or 'it's'.
			if q == '"' {
				r.out = append(r.out, '\\', '"')
			} else {
				r.out = append(r.out, '\'')
			}
			i++
		case c == '"': // inside a single-quoted string
			r.out = append(r.out, '\\', '"')
			i++
		case c == '\\':
			i = r.scanEscape(i)
		default: // a raw control character
			r.out = appendControl(r.out, c)
			i++
		}
	}
	// Unclosed at the end of input.
	r.out = append(r.out, '"')
	return i
}

// closesString reports whether a quote whose next byte is at j ends its
// string: in valid JSON a string is always followed, after any whitespace,
// by ',', ':', '}', ']' or the end, and a model that forgets a comma puts
// the next member on a new line.
func closesString(src string, j int) bool {
	newline := false
	for ; j < len(src) && isSpace(src[j]); j++ {
		newline = newline || src[j] == '\n'
	}
	if j == len(src) {
		return true
	}
	switch src[j] {
	case ',', ':', '}', ']':
		return true
	}
	return newline
}

// scanEscape copies the escape sequence at src[i] ('\\') and returns the
// offset after it. Escapes JSON lacks become text: \' is ', \x is \\x. An
// escape cut off by the end of input is dropped.
func (r *repairer) scanEscape(i int) int {
	src := r.src
	if i+1 >= len(src) {
		return len(src)
	}
	switch c := src[i+1]; c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		r.out = append(r.out, '\\', c)
		return i + 2
	case '\'':
		r.out = append(r.out, '\'')
		return i + 2
	case 'u':
		n := 0
		for n < 4 && i+2+n < len(src) && isHex(src[i+2+n]) {
			n++
		}
		if n == 4 {
			r.out = append(r.out, src[i:i+6]...)
			return i + 6
		}
		if i+2+n == len(src) {
			return len(src)
		}
	}
	r.out = append(r.out, '\\', '\\')
	return i + 1
}

func appendControl(out []byte, c byte) []byte {
	switch c {
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	}
	const hex = "0123456789abcdef"
	return append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// scanNumber copies the number starting at src[i] and returns the offset
// after it. A number cut short ("1.", "2e+", "-") keeps its longest valid
// prefix; if none, the value is missing and its key will be dropped.
// Anything else malformed is copied for validation to reject.
func (r *repairer) scanNumber(i int) int {
	j := i
	for j < len(r.src) && isNumberByte(r.src[j]) {
		j++
	}
	tok := r.src[i:j]
	valid, prefix := numberPrefix(tok)
	switch {
	case valid:
		r.place(false)
		r.out = append(r.out, tok...)
	case prefix > 0:
		r.place(false)
		r.out = append(r.out, tok[:prefix]...)
	case prefix < 0:
		r.place(false)
		r.out = append(r.out, tok...)
	}
	return j
}

// numberPrefix runs the JSON number grammar over s. valid reports whether s
// is a number. Otherwise prefix is the length of the longest prefix that is
// one, when s could be the start of a number, or -1 when it cannot.
func numberPrefix(s string) (valid bool, prefix int) {
	// States: 0 start, 1 after '-', 2 after a leading '0', 3 integer
	// digits, 4 after '.', 5 fraction digits, 6 after 'e', 7 after the
	// exponent's sign, 8 exponent digits. 2, 3, 5 and 8 accept.
	state, last := 0, 0
	for k := 0; k < len(s); k++ {
		c := s[k]
		digit := isDigit(c)
		switch {
		case state == 0 && c == '-':
			state = 1
		case (state == 0 || state == 1) && c == '0':
			state = 2
		case (state == 0 || state == 1) && digit, state == 3 && digit:
			state = 3
		case (state == 2 || state == 3) && c == '.':
			state = 4
		case (state == 4 || state == 5) && digit:
			state = 5
		case (state == 2 || state == 3 || state == 5) && (c == 'e' || c == 'E'):
			state = 6
		case state == 6 && (c == '+' || c == '-'):
			state = 7
		case (state == 6 || state == 7 || state == 8) && digit:
			state = 8
		default:
			return false, -1
		}
		if state == 2 || state == 3 || state == 5 || state == 8 {
			last = k + 1
		}
	}
	return last == len(s), last
}

// scanWord copies the bare word starting at src[i] and returns the offset
// after it. Where a key belongs (after '{' or ','), a word followed by ':'
// becomes a quoted key; without the colon it is more likely prose in braces. As a value, JSON's
// literals stay, Python's True, False and None become JSON's, and a literal
// cut off by the end of input is completed; other words are copied for
// validation to reject.
func (r *repairer) scanWord(i int) int {
	j := i
	for j < len(r.src) && isWordByte(r.src[j]) {
		j++
	}
	word := r.src[i:j]
	if f := r.top(); f != nil && f.kind == '{' && f.slot == afterValue {
		// A word after a member is not a key a comma was forgotten before.
		r.out = append(r.out, word...)
		return j
	}
	if r.place(colonFollows(r.src, j)) {
		r.out = append(r.out, '"')
		r.out = append(r.out, word...)
		r.out = append(r.out, '"')
		return j
	}
	switch word {
	case "True":
		word = "true"
	case "False":
		word = "false"
	case "None":
		word = "null"
	}
	if j == len(r.src) {
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(lit, word) {
				word = lit
			}
		}
	}
	r.out = append(r.out, word...)
	return j
}

func colonFollows(src string, j int) bool {
	for j < len(src) && isSpace(src[j]) {
		j++
	}
	return j < len(src) && src[j] == ':'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
func isNumberByte(c byte) bool {
	return isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}
func isWordStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '$'
}
func isWordByte(c byte) bool { return isWordStart(c) || isDigit(c) }
