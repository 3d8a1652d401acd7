package docparse

import (
	"go/scanner"
	"go/token"
	"regexp"
	"strconv"
	"strings"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// LinkImport is the Link kind of an import of code: Target is what the
// file imports as written (a Go import path, a Python module, a JS
// specifier), Line where the import is.
const LinkImport = "import"

// imports returns a code file's imports as links: Go's from go/parser
// (imports only, so a file broken further down still yields them), other
// languages' from lines that look like imports. A file that has none, or a
// language without a rule, returns nil.
func imports(content, lang string) []events.Link {
	if lang == "go" {
		return goImports(content)
	}
	res, ok := importLines[lang]
	if !ok {
		return nil
	}
	var links []events.Link
	for i, line := range strings.Split(content, "\n") {
		for _, re := range res {
			if m := re.FindStringSubmatch(line); m != nil {
				links = append(links, events.Link{Target: m[1], Line: i + 1, Kind: LinkImport})
				break
			}
		}
	}
	return links
}

func goImports(content string) []events.Link {
	// The scanner alone, up to the first declaration that is not an
	// import: go/parser copied the whole file to read its head. A file
	// broken after its imports keeps them.
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(content))
	var s scanner.Scanner
	s.Init(file, unsafeBytes(content), nil, 0)
	var links []events.Link
	pos, tok, lit := s.Scan()
	for tok == token.SEMICOLON {
		pos, tok, lit = s.Scan()
	}
	if tok != token.PACKAGE {
		return nil
	}
	if _, tok, _ = s.Scan(); tok != token.IDENT {
		return nil
	}
	for pos, tok, lit = s.Scan(); tok == token.SEMICOLON || tok == token.IMPORT; pos, tok, lit = s.Scan() {
		if tok == token.SEMICOLON {
			continue
		}
		// One spec, or a group: "(" specs ")", each spec [name] "path".
		group := false
		specStart := token.NoPos
		for pos, tok, lit = s.Scan(); tok != token.EOF; pos, tok, lit = s.Scan() {
			switch {
			case tok == token.LPAREN && !group && specStart == token.NoPos:
				group = true
				continue
			case tok == token.SEMICOLON:
				specStart = token.NoPos
				if group {
					continue
				}
			case tok == token.RPAREN && group:
				group = false
				continue
			case tok == token.IDENT || tok == token.PERIOD:
				if specStart == token.NoPos {
					specStart = pos
				}
				continue
			case tok == token.STRING:
				if specStart == token.NoPos {
					specStart = pos
				}
				if p, err := strconv.Unquote(lit); err == nil && p != "" {
					links = append(links, events.Link{Target: p, Line: file.PositionFor(specStart, false).Line, Kind: LinkImport})
				}
				continue
			default:
				return links // not an import spec: broken
			}
			break // the end of a single spec
		}
		if tok == token.EOF {
			break
		}
	}
	return links
}

// importLines are the import statements of other languages, matched on
// single lines: the first group is the target. Multi-line forms are
// missed; the rules are a cheap heuristic, not parsers.
var importLines = map[string][]*regexp.Regexp{
	"python": {
		regexp.MustCompile(`^\s*from\s+([\w.]+)\s+import\b`),
		regexp.MustCompile(`^\s*import\s+([\w.]+)`),
	},
	"typescript": jsImports,
	"javascript": jsImports,
	"rust":       {regexp.MustCompile(`^\s*(?:pub\s+)?use\s+([\w:]+)`)},
	"java":       {regexp.MustCompile(`^\s*import\s+(?:static\s+)?([\w.]+)`)},
	"c":          cIncludes,
	"cpp":        cIncludes,
	"ruby":       {regexp.MustCompile(`^\s*require(?:_relative)?\s*\(?\s*['"]([^'"]+)['"]`)},
}

var (
	jsImports = []*regexp.Regexp{
		regexp.MustCompile(`^\s*import\b[^'"]*['"]([^'"]+)['"]`),
		regexp.MustCompile(`^\s*export\b[^'"]*\bfrom\s*['"]([^'"]+)['"]`),
		regexp.MustCompile(`\brequire\(\s*['"]([^'"]+)['"]\s*\)`),
	}
	cIncludes = []*regexp.Regexp{regexp.MustCompile(`^\s*#\s*include\s*["<]([^">]+)[">]`)}
)
