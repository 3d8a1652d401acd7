package docparse

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"unicode/utf8"

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
// ok is false if the file does not parse.
func goChunks(c *chunker) ([]events.Chunk, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", c.content, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	line := func(p token.Pos) int { return fset.PositionFor(p, false).Line }
	end := line(f.Name.End())
	decls := f.Decls
	for len(decls) > 0 {
		if g, ok := decls[0].(*ast.GenDecl); !ok || g.Tok != token.IMPORT {
			break
		}
		end = line(decls[0].End())
		decls = decls[1:]
	}
	last := c.lines.count()
	if len(decls) == 0 {
		end = last
	}
	chunks := c.region(1, end, []string{"package " + f.Name.Name})
	for i, d := range decls {
		start := end + 1
		end = line(d.End())
		if i == len(decls)-1 {
			end = last
		}
		if end < start {
			continue // on the line where the previous declaration ends
		}
		chunks = append(chunks, c.region(start, end, []string{goDeclName(d)})...)
	}
	return chunks, true
}

// goDeclName names a declaration as search results show it: "func Name",
// "func (*T).Name", "type Config", "var (a, b, c)".
func goDeclName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return "func " + d.Name.Name
		}
		return "func (" + recvName(d.Recv.List[0].Type) + ")." + d.Name.Name
	case *ast.GenDecl:
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
		kw := d.Tok.String()
		switch {
		case len(names) == 1:
			return kw + " " + names[0]
		case len(names) > 3:
			names = append(names[:3], "…")
		}
		return kw + " (" + strings.Join(names, ", ") + ")"
	}
	return "declaration"
}

// recvName is a receiver's type without its type parameters: "*T", "T".
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return "*" + recvName(e.X)
	case *ast.ParenExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

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
