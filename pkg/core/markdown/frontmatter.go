package markdown

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// FrontmatterError says why a file's frontmatter could not be read.
type FrontmatterError struct {
	// Line is the line in the file (1-indexed) the problem was found at.
	Line int
	// Msg describes the problem and, where it can, how to fix it.
	Msg string
}

func (e *FrontmatterError) Error() string {
	return fmt.Sprintf("frontmatter: line %d: %s", e.Line, e.Msg)
}

// frontmatter is the raw block at the top of a file.
type frontmatter struct {
	yaml []byte
	// closeLine is the line of the closing ---, or 0 if there is none.
	closeLine int
	// bodyOffset is the byte offset just past the closing line.
	bodyOffset int
}

var bom = []byte("\uFEFF")

// splitFrontmatter finds a block that opens with a --- first line and closes
// with the next --- line. It reports false when the file does not open one.
func splitFrontmatter(src []byte) (frontmatter, bool) {
	off := 0
	if bytes.HasPrefix(src, bom) {
		off = len(bom)
	}
	line, next := nextLine(src, off)
	if !isFence(line) {
		return frontmatter{}, false
	}
	start := next
	for n := 2; next < len(src); n++ {
		lineStart := next
		line, next = nextLine(src, next)
		if isFence(line) {
			return frontmatter{yaml: src[start:lineStart], closeLine: n, bodyOffset: next}, true
		}
	}
	return frontmatter{yaml: src[start:]}, true
}

// nextLine returns the line starting at off, without its line ending, and
// the offset of the line after it.
func nextLine(src []byte, off int) (line []byte, next int) {
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return src[off:], len(src)
	}
	return src[off : off+i], off + i + 1
}

func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// decode parses the block as a YAML mapping. Values come back as JSON types
// (see jsonable), so that a DocRecord holding them always encodes.
func (fm frontmatter) decode() (map[string]any, *FrontmatterError) {
	if fm.closeLine == 0 {
		return nil, &FrontmatterError{Line: 1, Msg: "frontmatter opened at line 1 is never closed with ---; " +
			"add a --- line after the YAML, or remove the first line if it is not frontmatter"}
	}
	// The YAML's line 1 is the file's line 2, just under the opening ---.
	const offset = 1
	var root yaml.Node
	if err := yaml.Unmarshal(fm.yaml, &root); err != nil {
		fe := yamlError(err, offset+zeroBasedLine(err), fm.closeLine)
		if l := fe.Line - offset; l >= 1 && bytes.IndexByte(yamlLine(fm.yaml, l), '\t') >= 0 {
			fe.Msg += " (indent YAML with spaces, not tabs)"
		}
		return nil, fe
	}
	if len(root.Content) == 0 {
		return map[string]any{}, nil
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, &FrontmatterError{
			Line: top.Line + offset,
			Msg:  fmt.Sprintf("frontmatter must be a mapping of keys to values (key: value lines), not %s", nodeKindName(top)),
		}
	}
	var v any
	if err := top.Decode(&v); err != nil {
		return nil, yamlError(err, offset, fm.closeLine)
	}
	m, _ := jsonable(v).(map[string]any)
	return m, nil
}

func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a single value"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

// zeroBasedLine returns 1 if err is one of the yaml parser's (as opposed to
// scanner's) errors, whose line number yaml.v3 reports counting from 0.
func zeroBasedLine(err error) int {
	msg := strings.TrimPrefix(yamlLineRE.ReplaceAllString(err.Error(), ""), "yaml: ")
	msg = strings.TrimPrefix(msg, ": ")
	for _, p := range []string{"did not find expected", "found undefined tag handle", "found duplicate %", "found incompatible YAML document"} {
		if strings.HasPrefix(msg, p) {
			return 1
		}
	}
	return 0
}

// yamlLine returns line n (1-indexed) of the block.
func yamlLine(b []byte, n int) []byte {
	for ; n > 1; n-- {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	return line
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlError turns a yaml error into a FrontmatterError whose line numbers,
// the one in Line and any in Msg, count from the top of the file.
func yamlError(err error, offset, closeLine int) *FrontmatterError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	// A type error lists one problem per line; the first is enough to act on.
	problems := strings.Split(strings.TrimSpace(msg), "\n")
	msg = strings.TrimSpace(problems[0])
	if more := len(problems) - 1; more > 0 {
		msg += fmt.Sprintf(" (and %d more)", more)
	}
	line := 0
	msg = yamlLineRE.ReplaceAllStringFunc(msg, func(s string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(s, "line "))
		if err != nil {
			return s
		}
		n = min(n+offset, closeLine)
		if line == 0 {
			line = n
		}
		return "line " + strconv.Itoa(n)
	})
	if line == 0 {
		line = offset + 1
	}
	msg = strings.TrimPrefix(msg, "line "+strconv.Itoa(line)+": ")
	return &FrontmatterError{Line: line, Msg: msg}
}

// jsonable converts a decoded YAML value into one encoding/json accepts and
// decodes back alike: maps get string keys, times become RFC 3339 strings
// (a bare date stays a date) and NaN and infinities become their YAML text.
func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonable(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonable(e)
		}
		return v
	case time.Time:
		if v.Location() == time.UTC && v.Equal(v.Truncate(24*time.Hour)) {
			return v.Format(time.DateOnly)
		}
		return v.Format(time.RFC3339Nano)
	case float64:
		switch {
		case math.IsNaN(v):
			return ".nan"
		case math.IsInf(v, 1):
			return ".inf"
		case math.IsInf(v, -1):
			return "-.inf"
		}
		return v
	case []byte:
		return string(v)
	case nil, string, bool, int, int64, uint64:
		return v
	default:
		return fmt.Sprint(v)
	}
}
