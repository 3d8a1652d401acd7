package docparse

import (
	"go/scanner"
	"go/token"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// codeChunks cuts source code at its top-level declarations: Go with
// go/parser, the languages in declStarts by the look of their lines, and
// anything else (or Go that does not parse) as paragraphs under the budget.
func codeChunks(c *chunker, lang string) []events.Chunk {
	if lang == "go" {
		if chunks, ok := goChunks(c); ok {
			return chunks
		}
	}
	if d, ok := declStarts[lang]; ok {
		return heuristicChunks(c, d)
	}
	return c.region(1, c.lines.count(), nil)
}

// goChunks makes one region of the package clause and imports (with the
// comments above them), labelled "package name", and one of each other
// top-level declaration, labelled by its name. A declaration's region runs
// from the line after the previous one's end, so it holds its doc comment
// and any comment between the two; the last runs to the end of the file.
// ok is false if the file is not Go: no package clause, a lexical error,
// brackets that do not match, or anything but a declaration at the top
// level.
//
// The declarations are found with go/scanner alone: go/parser built a
// syntax tree of every body only to throw it away, and that was a fifth
// of the indexer's time and a sixth of its garbage on the Go standard
// library.
func goChunks(c *chunker) ([]events.Chunk, bool) {
	decls, pkg, ok := scanGoDecls(c.content)
	if !ok {
		return nil, false
	}
	line := func(off int) int { return sort.SearchInts(c.lines.starts, off+1) }
	end := line(pkg.end)
	for len(decls) > 0 && decls[0].tok == token.IMPORT {
		end = line(decls[0].end)
		decls = decls[1:]
	}
	last := c.lines.count()
	if len(decls) == 0 {
		end = last
	}
	chunks := c.region(1, end, []string{"package " + pkg.name})
	for i, d := range decls {
		start := end + 1
		end = line(d.end)
		if i == len(decls)-1 {
			end = last
		}
		if end < start {
			continue // on the line where the previous declaration ends
		}
		chunks = append(chunks, c.region(start, end, []string{d.label()})...)
	}
	return chunks, true
}

// goDecl is a top-level declaration: its keyword, its names (a function's
// receiver type apart), and the offset just past its last token.
type goDecl struct {
	tok   token.Token
	recv  string // "*T" or "T" for a method
	name  string // a function's
	names []string
	end   int
}

// label names a declaration as search results show it: "func Name",
// "func (*T).Name", "type Config", "var (a, b, c)".
func (d goDecl) label() string {
	if d.tok == token.FUNC {
		if d.recv == "" {
			return "func " + d.name
		}
		return "func (" + d.recv + ")." + d.name
	}
	names := d.names
	switch {
	case len(names) == 1:
		return d.tok.String() + " " + names[0]
	case len(names) > 3:
		names = append(names[:3:3], "…")
	}
	return d.tok.String() + " (" + strings.Join(names, ", ") + ")"
}

// goPackage is the package clause: the name and where the clause ends.
type goPackage struct {
	name string
	end  int
}

// scanGoDecls scans src for its package clause and top-level declarations.
func scanGoDecls(src string) (decls []goDecl, pkg goPackage, ok bool) {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	lexErr := false
	s.Init(file, unsafeBytes(src), func(token.Position, string) { lexErr = true }, 0)
	var (
		pos token.Pos
		tok token.Token
		lit string
	)
	next := func() {
		pos, tok, lit = s.Scan()
		if lexErr {
			tok = token.ILLEGAL
		}
	}
	// end is the offset just past the current token in src.
	end := func() int {
		off := file.Offset(pos)
		switch {
		case tok == token.STRING && strings.HasPrefix(lit, "`"):
			// The scanner drops carriage returns from a raw string's text.
			if i := strings.IndexByte(src[off+1:], '`'); i >= 0 {
				return off + i + 2
			}
			return len(src)
		case lit != "":
			return off + len(lit)
		}
		return off + len(tok.String())
	}
	next()
	for tok == token.SEMICOLON {
		next()
	}
	if tok != token.PACKAGE {
		return nil, pkg, false
	}
	if next(); tok != token.IDENT {
		return nil, pkg, false
	}
	pkg = goPackage{name: lit, end: end()}
	var open []token.Token // the brackets open in the declaration
	for next(); tok != token.EOF; {
		switch tok {
		case token.SEMICOLON:
			next()
			continue
		case token.IMPORT, token.CONST, token.TYPE, token.VAR, token.FUNC:
		default:
			return nil, pkg, false // not Go, or not at the top level
		}
		d := goDecl{tok: tok, end: end()}
		// A spec's names are read at its start: after the keyword, or
		// after "(" or ";" in a group, at the group's depth.
		specDepth, naming := 0, d.tok != token.FUNC && d.tok != token.IMPORT
		afterName := false // the token before was a name of the spec
		// A method's receiver: its "(" is the declaration's first token;
		// its type is the last name before "[" or the closing ")".
		inRecv, recvStar, recvIdent, recvTypeArgs := false, false, "", false // recvTypeArgs: the type's name is read
		first := true
		for next(); tok != token.EOF && !(tok == token.SEMICOLON && len(open) == 0); next() {
			if tok == token.ILLEGAL {
				return nil, pkg, false
			}
			if tok != token.SEMICOLON || lit != "\n" {
				d.end = end()
			}
			depth := len(open)
			switch tok {
			case token.LPAREN, token.LBRACK, token.LBRACE:
				switch {
				case first && tok == token.LPAREN && d.tok == token.FUNC:
					inRecv = true
				case first && tok == token.LPAREN:
					specDepth = 1
				case inRecv && tok == token.LBRACK:
					recvTypeArgs = true
				default:
					naming = false
				}
				open = append(open, tok)
			case token.RPAREN, token.RBRACK, token.RBRACE:
				if depth == 0 || open[depth-1] != opening[tok] {
					return nil, pkg, false
				}
				open = open[:depth-1]
				if inRecv && len(open) == 0 {
					inRecv, d.recv = false, recvIdent
					if recvStar {
						d.recv = "*" + recvIdent
					}
				}
				naming = false
			case token.IDENT:
				switch {
				case inRecv:
					if !recvTypeArgs {
						recvIdent = lit
					}
				case d.tok == token.FUNC:
					if d.name == "" && depth == 0 {
						d.name = lit
					}
				case naming && depth == specDepth:
					d.names = append(d.names, lit)
					afterName = d.tok != token.TYPE
				}
				naming = false
			case token.MUL:
				recvStar = recvStar || inRecv && !recvTypeArgs
				naming = false
			case token.COMMA:
				naming = afterName && depth == specDepth
				// A second receiver (invalid Go) is not read.
				recvTypeArgs = recvTypeArgs || inRecv && depth == 1
			case token.SEMICOLON:
				naming = depth == specDepth && specDepth == 1 && d.tok != token.IMPORT
			default:
				naming = false
			}
			first = false
			if tok != token.IDENT {
				afterName = false
			}
		}
		if tok == token.EOF && len(open) > 0 {
			return nil, pkg, false
		}
		decls = append(decls, d)
	}
	return decls, pkg, !lexErr
}

// opening is the bracket each closing one closes.
var opening = map[token.Token]token.Token{token.RPAREN: token.LPAREN, token.RBRACK: token.LBRACK, token.RBRACE: token.LBRACE}

// declSyntax tells where a language's declarations start. A line matching
// top, unindented, starts a top-level declaration. A line matching member
// starts a declaration nested one level in a top-level declaration whose
// line matches container (a method in a class). Lines right above a
// declaration that match attached (comments, decorators, attributes) go
// with it.
type declSyntax struct {
	top, member, container, attached *regexp.Regexp
	// reject, if set, drops a top match that only looks like a
	// declaration (a C prototype or call ends in ";").
	reject *regexp.Regexp
}

// notMember drops a member match that is a statement in a body indented
// as deep as members are.
var notMember = regexp.MustCompile(`^\s*(if|for|while|switch|catch|return|else|do|try|with|elif|except|match|loop|unless|until|case|await|throw|new|super|this)\b`)

var (
	hashComment  = regexp.MustCompile(`^\s*#`)
	slashComment = regexp.MustCompile(`^\s*(//|/\*|\*)`)
)

var (
	pythonDecls = &declSyntax{
		top:       regexp.MustCompile(`^(async\s+def|def|class)\s`),
		member:    regexp.MustCompile(`^(    |\t)(async\s+def|def|class)\s`),
		container: regexp.MustCompile(`^class\s`),
		attached:  regexp.MustCompile(`^\s*(#|@)`),
	}
	jsDecls = &declSyntax{
		top:       regexp.MustCompile(`^(export\s+)?(default\s+)?(declare\s+)?((async\s+)?function[\s*]|(abstract\s+)?class\s|(const|let|var)\s+[\w$]+\s*[:=]|interface\s|type\s+\w|enum\s|namespace\s|module\s)`),
		container: regexp.MustCompile(`^(export\s+)?(default\s+)?(abstract\s+)?class\s`),
		member:    regexp.MustCompile(`^(  |    |\t)(public\s+|private\s+|protected\s+|static\s+|async\s+|readonly\s+|override\s+|get\s+|set\s+)*(constructor|[\w$]+)\s*(<[^>]*>)?\(`),
		attached:  regexp.MustCompile(`^\s*(//|/\*|\*|@)`),
	}
	rustDecls = &declSyntax{
		top:       regexp.MustCompile(`^(pub(\([\w:]+\))?\s+)?((const|async|unsafe|extern\s+"[^"]*")\s+)*(fn|struct|enum|impl|trait|mod|type|union|static|const|macro_rules!)[\s<]`),
		member:    regexp.MustCompile(`^(    |\t)(pub(\([\w:]+\))?\s+)?((const|async|unsafe|extern\s+"[^"]*")\s+)*fn\s`),
		container: regexp.MustCompile(`^(pub(\([\w:]+\))?\s+)?(unsafe\s+)?(impl|trait|mod)[\s<]`),
		attached:  regexp.MustCompile(`^\s*(//|/\*|\*|#\[|#!\[)`),
	}
	javaDecls = &declSyntax{
		top:       regexp.MustCompile(`^((public|private|protected|abstract|final|static|sealed|non-sealed|strictfp)\s+)*(class|interface|enum|record|@interface)\s`),
		member:    regexp.MustCompile(`^(    |\t)((public|private|protected|static|final|abstract|synchronized|default|native)\s+)+[^;=(]*\(`),
		container: regexp.MustCompile(`^((public|private|protected|abstract|final|static|sealed|non-sealed|strictfp)\s+)*(class|interface|enum|record)\s`),
		attached:  regexp.MustCompile(`^\s*(//|/\*|\*|@)`),
	}
	cDecls = &declSyntax{
		top:      regexp.MustCompile(`^((typedef|struct|union|enum|class|namespace)\b|template\s*<|[A-Za-z_][\w\s*&:<>,~]*\()`),
		reject:   regexp.MustCompile(`^[A-Za-z_][\w\s*&:<>,~]*\([^{]*;\s*(//.*)?$|^(if|for|while|switch|return|else|do)\b`),
		attached: slashComment,
	}
	rubyDecls = &declSyntax{
		top:       regexp.MustCompile(`^(def|class|module)\s`),
		member:    regexp.MustCompile(`^(  |\t)(def|class|module)\s`),
		container: regexp.MustCompile(`^(class|module)\s`),
		attached:  hashComment,
	}
	shellDecls = &declSyntax{
		top:      regexp.MustCompile(`^(function\s+[\w:.-]+|[\w:.-]+\s*\(\s*\))`),
		attached: hashComment,
	}
	goDecls = &declSyntax{
		top:      regexp.MustCompile(`^(func|type|var|const)[\s(]`),
		attached: regexp.MustCompile(`^\s*//`),
	}
)

// declStarts holds the languages whose declarations heuristicChunks finds.
var declStarts = map[string]*declSyntax{
	"go":         goDecls,
	"python":     pythonDecls,
	"typescript": jsDecls,
	"javascript": jsDecls,
	"rust":       rustDecls,
	"java":       javaDecls,
	"c":          cDecls,
	"cpp":        cDecls,
	"ruby":       rubyDecls,
	"shell":      shellDecls,
}

// maxLabel bounds the bytes of a declaration line used as a heading path
// entry: a minified line would otherwise go into ChunkText twice.
const maxLabel = 120

// declLabel is a declaration's line trimmed, and cut to maxLabel bytes.
func declLabel(line string) string {
	line = strings.TrimSpace(line)
	if len(line) <= maxLabel {
		return line
	}
	n := maxLabel
	for n > 0 && !utf8.RuneStart(line[n]) {
		n--
	}
	return line[:n] + "…"
}

// heuristicChunks makes a region of what comes before the first
// declaration (imports, file comments) and one of each declaration, from
// its attached lines to the line before the next declaration's. A
// declaration's heading path is its trimmed line, under that of its
// container for a member.
func heuristicChunks(c *chunker, d *declSyntax) []events.Chunk {
	type decl struct {
		start int
		path  []string
	}
	var decls []decl
	var container string // the open top-level container's line, if any
	last := c.lines.count()
	for l := 1; l <= last; l++ {
		text := c.lines.text(c.content, l, l)
		var path []string
		switch {
		case d.top.MatchString(text) && (d.reject == nil || !d.reject.MatchString(text)):
			path = []string{declLabel(text)}
			container = ""
			if d.container != nil && d.container.MatchString(text) {
				container = path[0]
			}
		case d.member != nil && container != "" && d.member.MatchString(text) && !notMember.MatchString(text):
			path = []string{container, declLabel(text)}
		case text != "" && text[0] != ' ' && text[0] != '\t' && !d.attached.MatchString(text):
			// Other unindented code ends the container.
			container = ""
			continue
		default:
			continue
		}
		start := l
		floor := 1
		if len(decls) > 0 {
			floor = decls[len(decls)-1].start + 1
		}
		for start > floor && !c.lines.blank(c.content, start-1) && d.attached.MatchString(c.lines.text(c.content, start-1, start-1)) {
			start--
		}
		decls = append(decls, decl{start, path})
	}
	var chunks []events.Chunk
	prev := 1
	var path []string
	for _, dc := range decls {
		chunks = append(chunks, c.region(prev, dc.start-1, path)...)
		prev, path = dc.start, dc.path
	}
	return append(chunks, c.region(prev, last, path)...)
}

// unsafeBytes is s's bytes without a copy, for go/scanner, which reads its
// source and never writes it: a copy of every Go file indexed was a tenth
// of the chunker's garbage.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
