package docparse

import (
	"go/parser"
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
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", content, parser.ImportsOnly|parser.SkipObjectResolution)
	if f == nil || err != nil && len(f.Imports) == 0 {
		return nil
	}
	links := make([]events.Link, 0, len(f.Imports))
	for _, is := range f.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil || p == "" {
			continue
		}
		links = append(links, events.Link{Target: p, Line: fset.PositionFor(is.Pos(), false).Line, Kind: LinkImport})
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
