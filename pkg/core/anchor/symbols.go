// Package anchor finds the part of a file that a read_doc anchor names
// when it is not a markdown heading (package markdown finds those): a code
// symbol, read from the heading paths of the chunks the indexer cut the
// file into (internal/docparse), or a line range ("L10-L40"). The edge
// uses it to answer read_doc and to list a code file's anchors in
// read_context.
//
// A code file's symbols are its chunks' heading paths: Go declarations
// named as go/parser sees them ("func (*Index).Search", "type Config"),
// other languages' declaration lines ("def load(path):", under
// "class Store:" for a method). A symbol spans its chunks, and a container
// ("class Store:", "impl Store {") the chunks of its members too. Deriving
// them from the record keeps the indexer as it is.
//
// The package is pure: it reads chunks and text and returns values.
package anchor

import (
	"regexp"
	"slices"
	"strings"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// Kind is what a symbol declares; it orders the symbols Top lists.
type Kind int

// The kinds of Symbol, in the order Top lists them.
const (
	KindType Kind = iota
	KindFunc
	KindMethod
	KindOther
	KindPackage
)

// Symbol is one declaration of a code file.
type Symbol struct {
	// Label is the chunk heading path entry, as read_context shows it.
	Label string
	// Names are the declared identifiers ("Search"; a Go group has
	// several); Qualifier is the receiver's or container's name ("Index").
	Names     []string
	Qualifier string
	Kind      Kind
	// Start and End are the symbol's first and last lines (1-indexed):
	// those of its chunks.
	Start, End int

	// scope qualifies the names of the symbol's members: a class's name,
	// the type of a Rust impl block (which declares no name of its own,
	// so that "Store" finds the struct, not its impl).
	scope string
	// goDecl says Label is a go/parser name, so the declaration's doc
	// comment can be told from a comment above it (Lines).
	goDecl bool
}

// Qualified is the symbol's first name under its qualifier ("Index.Search"),
// or its first name, or "".
func (s *Symbol) Qualified() string {
	if len(s.Names) == 0 {
		return ""
	}
	if s.Qualifier == "" {
		return s.Names[0]
	}
	return s.Qualifier + "." + s.Names[0]
}

// Symbols returns the symbols of a code file in language (docparse's
// language names), from its chunks, in file order, a container before its
// members. Consecutive chunks with the same heading path are one
// declaration the chunker split.
func Symbols(chunks []events.Chunk, language string) []Symbol {
	var syms []Symbol
	var open []int // the symbols of the previous chunk's heading path
	var prev []string
	for _, c := range chunks {
		p := c.HeadingPath
		common := 0
		for common < len(p) && common < len(prev) && common < len(open) && p[common] == prev[common] {
			common++
		}
		open = open[:common]
		for _, i := range open {
			syms[i].End = max(syms[i].End, c.EndLine)
		}
		for k := common; k < len(p); k++ {
			s := newSymbol(p[k], language)
			s.Start, s.End = c.StartLine, c.EndLine
			if k > 0 && len(open) > 0 {
				if s.Qualifier == "" {
					s.Qualifier = syms[open[len(open)-1]].scope
				}
				if s.Kind == KindFunc {
					s.Kind = KindMethod
				}
			}
			syms = append(syms, s)
			open = append(open, len(syms)-1)
		}
		prev = p
	}
	return syms
}

// newSymbol reads a symbol's names from its label.
func newSymbol(label, lang string) Symbol {
	s := Symbol{Label: label, Kind: KindOther}
	if lang == "go" && goLabel(&s) {
		return s
	}
	declLine(&s, lang)
	return s
}

// goLabel reads the names docparse gives Go declarations: "func Name",
// "func (*T).Name", "type Config", "var (a, b, c)", "package name". Go that
// did not parse is labelled by its lines; goLabel reports false for those.
func goLabel(s *Symbol) bool {
	kw, rest, ok := strings.Cut(s.Label, " ")
	if !ok {
		return false
	}
	switch kw {
	case "package":
		if isIdent(rest) {
			s.Kind = KindPackage
			return true
		}
	case "func":
		if isIdent(rest) {
			s.Names, s.Kind, s.goDecl = []string{rest}, KindFunc, true
			return true
		}
		if recv, name, ok := strings.Cut(rest, ")."); ok && strings.HasPrefix(recv, "(") && isIdent(name) {
			if t := strings.TrimPrefix(recv[1:], "*"); isIdent(t) {
				s.Names, s.Qualifier, s.Kind, s.goDecl = []string{name}, t, KindMethod, true
				return true
			}
		}
	case "type", "var", "const":
		if kw == "type" {
			s.Kind = KindType
		}
		if isIdent(rest) || rest == "_" {
			if rest != "_" {
				s.Names = []string{rest}
			}
			s.goDecl = true
			return true
		}
		if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
			for _, n := range strings.Split(rest[1:len(rest)-1], ", ") {
				if isIdent(n) {
					s.Names = append(s.Names, n)
				}
			}
			s.goDecl = true
			return true
		}
	}
	return false
}

// isIdent reports whether s is an identifier that names something (not
// Go's blank identifier).
func isIdent(s string) bool {
	if s == "" || s == "_" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r >= 0x80 || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

var (
	// declModifiers are the words before a declaration's keyword or type.
	declModifiers = regexp.MustCompile(`^(?:(?:export|default|declare|public|private|protected|internal|static|final|abstract|sealed|non-sealed|strictfp|async|unsafe|extern(?:\s+"[^"]*")?|pub(?:\([^)]*\))?|readonly|override|virtual|inline|synchronized|native|get|set|template\s*<[^>]*>)\s+)+`)
	// declKeyword is a declaration keyword and the name after it.
	declKeyword = regexp.MustCompile(`^(def|class|function|fn|struct|enum|union|trait|mod|module|interface|type|namespace|record|const|let|var|static|typedef(?:\s+(?:struct|union|enum))?|@interface|macro_rules!)(?:\b|\s)\s*\*?\s*(?:self\.)?([\p{L}_$][\p{L}\p{N}_$]*)`)
	// implDecl is a Rust impl block: its type is the scope of its members.
	implDecl = regexp.MustCompile(`^impl(?:\s*<[^>]*>)?\s+(?:[\w:]+(?:<[^>]*>)?\s+for\s+)?(?:\w+::)*(\w+)`)
	// goFuncLine is a Go func line that go/parser did not read.
	goFuncLine = regexp.MustCompile(`^func\b\s*(?:\(\s*(?:\w+\s+)?\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*)?(\w+)`)
	// callName is a function or method name before its parameters, with
	// a C++ qualifier ("Store::load").
	callName = regexp.MustCompile(`([\p{L}_$~][\p{L}\p{N}_$~]*(?:::[\p{L}_$~][\p{L}\p{N}_$~]*)*)\s*(?:<[^()]*>)?\s*\(`)
)

// notNames are words callName may find before '(' that name nothing.
var notNames = map[string]bool{"function": true, "if": true, "for": true, "while": true, "switch": true, "return": true, "catch": true, "sizeof": true}

// declLine reads the name from a declaration line that docparse's
// declaration heuristics found, in any of their languages.
func declLine(s *Symbol, lang string) {
	line := strings.TrimSuffix(s.Label, "…")
	if m := goFuncLine.FindStringSubmatch(line); m != nil && lang == "go" {
		s.Names, s.Qualifier, s.Kind = []string{m[2]}, m[1], KindFunc
		if m[1] != "" {
			s.Kind = KindMethod
		}
		return
	}
	line = declModifiers.ReplaceAllString(line, "")
	if m := implDecl.FindStringSubmatch(line); m != nil {
		s.scope, s.Kind = m[1], KindType
		return
	}
	if m := declKeyword.FindStringSubmatch(line); m != nil {
		s.Names, s.scope = []string{m[2]}, m[2]
		switch kw, _, _ := strings.Cut(m[1], " "); kw {
		case "def", "function", "fn":
			s.Kind = KindFunc
		case "const", "let", "var", "static":
			s.Kind = KindOther
		default:
			s.Kind = KindType
		}
		return
	}
	if m := callName.FindStringSubmatch(line); m != nil && !notNames[m[1]] {
		name := m[1]
		if i := strings.LastIndex(name, "::"); i >= 0 {
			s.Qualifier, name = name[:i], name[i+2:]
		}
		s.Names, s.Kind = []string{name}, KindFunc
	}
}

// anchorKeyword is a declaration keyword an anchor may start with
// ("func Search", "class Store").
var anchorKeyword = regexp.MustCompile(`^(?:func|function|def|fn|type|class|struct|interface|enum|trait|impl|method|var|const|let|module|mod)\s+`)

// goMethodAnchor is a Go method written with its receiver: "(*Index).Search",
// "(Index).Search", "(ix *Index) Search", "*Index.Search".
var goMethodAnchor = regexp.MustCompile(`^(?:\(\s*(?:\w+\s+)?\*?\s*(\w+)\s*\)\s*\.?\s*|\*(\w+)\.)(\w+)$`)

// symbolName turns an anchor into the "Name" or "Qualifier.Name" it names:
// a leading keyword, a receiver's parentheses and '*', parameters and a
// trailing ':' or '{' go; "::" and Ruby's "#" become ".".
func symbolName(anchor string) string {
	a := strings.TrimSpace(anchor)
	a = anchorKeyword.ReplaceAllString(a, "")
	a = strings.TrimSpace(strings.TrimRight(a, ":{ "))
	if m := goMethodAnchor.FindStringSubmatch(a); m != nil {
		return m[1] + m[2] + "." + m[3]
	}
	if i := strings.IndexByte(a, '('); i > 0 {
		a = strings.TrimSpace(a[:i])
	}
	a = strings.ReplaceAll(a, "::", ".")
	return strings.ReplaceAll(a, "#", ".")
}

// Find returns the symbols anchor names: the first whose label is the
// anchor, else the one whose qualified name it is, else those with that
// name. So "func (*Index).Search", "(*Index).Search", "Index.Search",
// "func (ix *Index) Search" and, when no other symbol has the name,
// "Search" all find the method; "type Config" and "Config" the type;
// "class Store" and "Store::get" work for other languages. An
// anchor naming several symbols returns them all, none returns nil.
func Find(syms []Symbol, anchor string) []*Symbol {
	anchor = strings.TrimSpace(anchor)
	for i := range syms {
		if syms[i].Label == anchor {
			return []*Symbol{&syms[i]}
		}
	}
	name := symbolName(anchor)
	if strings.Contains(name, ".") {
		return findQualified(syms, name)
	}
	return findName(syms, name)
}

// findQualified returns the symbol whose qualified name is q, or nil.
func findQualified(syms []Symbol, q string) []*Symbol {
	for i := range syms {
		s := &syms[i]
		if s.Qualifier != "" && strings.HasPrefix(q, s.Qualifier+".") && slices.Contains(s.Names, q[len(s.Qualifier)+1:]) {
			return []*Symbol{s}
		}
	}
	return nil
}

// findName returns the symbols named name.
func findName(syms []Symbol, name string) []*Symbol {
	if name == "" {
		return nil
	}
	var found []*Symbol
	for i := range syms {
		if slices.Contains(syms[i].Names, name) {
			found = append(found, &syms[i])
		}
	}
	return found
}

// Short is the shortest anchor that finds s alone among syms: its name,
// else its qualified name, else its label.
func Short(syms []Symbol, s *Symbol) string {
	if len(s.Names) > 0 {
		if found := findName(syms, s.Names[0]); len(found) == 1 && !labelled(syms, s.Names[0]) {
			return s.Names[0]
		}
		if q := s.Qualified(); s.Qualifier != "" && !labelled(syms, q) {
			if found := findQualified(syms, q); len(found) == 1 && found[0] == s {
				return q
			}
		}
	}
	return s.Label
}

// labelled reports whether a symbol's label is a, which Find would take
// for that symbol.
func labelled(syms []Symbol, a string) bool {
	return slices.ContainsFunc(syms, func(s Symbol) bool { return s.Label == a })
}

// Top is what read_context lists as a code file's anchors: the Short
// anchors of its n most prominent symbols, types first, then functions,
// methods and the rest, each in file order.
func Top(syms []Symbol, n int) []string {
	order := make([]*Symbol, 0, len(syms))
	for i := range syms {
		if syms[i].Kind != KindPackage && len(syms[i].Names) > 0 {
			order = append(order, &syms[i])
		}
	}
	slices.SortStableFunc(order, func(a, b *Symbol) int { return int(a.Kind) - int(b.Kind) })
	var out []string
	for _, s := range order[:min(n, len(order))] {
		out = append(out, Short(syms, s))
	}
	return out
}

// Lines is the range of lines s's text holds in a file of lines (Split of
// its content): its chunks', except that a Go declaration starts at its
// doc comment (the // lines, or the /* */ block, right above its keyword
// line), leaving out a comment that a blank line separates from it.
func (s *Symbol) Lines(lines []string) (start, end int) {
	if !s.goDecl {
		return s.Start, s.End
	}
	kw, _, _ := strings.Cut(s.Label, " ")
	for l := max(s.Start, 1); l <= min(s.End, len(lines)); l++ {
		if line := lines[l-1]; !strings.HasPrefix(line, kw+" ") && !strings.HasPrefix(line, kw+"(") {
			continue
		}
		start := l
		if start > s.Start && strings.HasSuffix(strings.TrimSpace(lines[start-2]), "*/") {
			for start--; start > s.Start && !strings.Contains(lines[start-1], "/*"); start-- {
			}
			return start, s.End
		}
		for start > s.Start && strings.HasPrefix(strings.TrimSpace(lines[start-2]), "//") {
			start--
		}
		return start, s.End
	}
	return s.Start, s.End
}
