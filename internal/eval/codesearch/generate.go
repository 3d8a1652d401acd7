// Package codesearch builds a code-search evaluation set from Go source
// on this machine (the standard library under GOROOT and the module
// cache): for each exported function or method with a doc comment, the
// query is the comment's first sentence with the identifier's own name
// taken out, and the one relevant document is the function's source
// without its comment. It is written in BEIR's layout, so `cue eval beir`
// scores it like any other set. The data is not committed: the generator
// and its seed are, and the same roots and seed give the same set.
package codesearch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefaultSeed picks the queries; change it only with a note of why.
const DefaultSeed = 21

// Options say where to read functions and how many queries to draw.
type Options struct {
	// Roots are directories walked for .go files, in order; files under
	// testdata, vendor or a directory starting with "." or "_", and
	// _test.go files, are left out.
	Roots []string
	// Queries is how many queries to draw (default 2,000).
	Queries int
	// Seed drives the draw (default DefaultSeed).
	Seed uint64
	// MaxFunctions stops the walk once this many functions were found
	// (0: no bound).
	MaxFunctions int
}

// Function is one exported function or method with a doc comment.
type Function struct {
	ID      string // path relative to its root, '#', the identifier
	Name    string // Name, or Type.Name for a method
	Package string // its package's name
	Query   string // the doc's first sentence without the name
	Code    string // the declaration without its doc comment
}

// Set is a generated evaluation set.
type Set struct {
	Functions []Function
	// Queries index Functions: the drawn ones.
	Queries []int
}

// Generate walks the roots and draws the queries.
func Generate(o Options) (*Set, error) {
	if o.Queries <= 0 {
		o.Queries = 2000
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	var fns []Function
	for _, root := range o.Roots {
		found, err := walk(root, o.MaxFunctions-len(fns))
		if err != nil {
			return nil, err
		}
		fns = append(fns, found...)
		if o.MaxFunctions > 0 && len(fns) >= o.MaxFunctions {
			break
		}
	}
	if len(fns) == 0 {
		return nil, fmt.Errorf("codesearch: no documented exported Go function under %s", strings.Join(o.Roots, ", "))
	}
	// A query several functions share ("returns the string form") has no
	// one right answer: only queries said once are drawn.
	count := map[string]int{}
	for _, f := range fns {
		count[strings.ToLower(f.Query)]++
	}
	var candidates []int
	for i, f := range fns {
		if f.Query != "" && count[strings.ToLower(f.Query)] == 1 {
			candidates = append(candidates, i)
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	picked := candidates[:min(o.Queries, len(candidates))]
	slices.Sort(picked)
	return &Set{Functions: fns, Queries: picked}, nil
}

// walk parses the .go files under root in name order.
func walk(root string, limit int) ([]Function, error) {
	var out []Function
	stop := errors.New("enough")
	notTest := func(rel string) bool { return !strings.HasSuffix(rel, "_test.go") }
	err := goFiles(root, notTest, func(rel string, fset *token.FileSet, src []byte, f *ast.File) error {
		out = append(out, functions(fset, rel, src, f)...)
		if limit > 0 && len(out) >= limit {
			return stop
		}
		return nil
	})
	if errors.Is(err, stop) {
		err = nil
	}
	return out, err
}

// goFiles calls visit with each Go file under root, in name order,
// parsed with its comments, as a reader of the tree would
// take them: testdata, vendor, dot and underscore directories, unreadable
// directories and files, and files that do not parse (a generator's
// template) are passed over. rel is the file's slash path from root's
// parent (root's own name first). want, when not nil, is asked first, and
// a file it refuses is not read. An error visit returns ends the walk
// and is returned.
func goFiles(root string, want func(rel string) bool, visit func(rel string, fset *token.FileSet, src []byte, f *ast.File) error) error {
	fset := token.NewFileSet()
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return fs.SkipDir
			}
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		r, _ := filepath.Rel(root, p)
		rel := filepath.ToSlash(filepath.Join(filepath.Base(root), r))
		if want != nil && !want(rel) {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		return visit(rel, fset, src, f)
	})
}

// functions are f's documented exported functions and methods.
func functions(fset *token.FileSet, rel string, src []byte, f *ast.File) []Function {
	var out []Function
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Doc == nil || fd.Body == nil || !fd.Name.IsExported() {
			continue
		}
		name := fd.Name.Name
		display := name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			recv := receiverType(fd.Recv.List[0].Type)
			if recv == "" || !ast.IsExported(recv) {
				continue
			}
			display = recv + "." + name
		}
		start, end := fset.Position(fd.Pos()).Offset, fset.Position(fd.End()).Offset
		if start < 0 || end > len(src) || start >= end {
			continue
		}
		out = append(out, Function{
			ID:      rel + "#" + display,
			Name:    display,
			Package: f.Name.Name,
			Query:   Query(fd.Doc.Text(), name),
			Code:    string(src[start:end]),
		})
	}
	return out
}

func receiverType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverType(t.X)
	case *ast.IndexExpr:
		return receiverType(t.X)
	case *ast.IndexListExpr:
		return receiverType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// MaxQuery is read_context's longest query, in characters: a longer
// sentence is no query an agent could send.
const MaxQuery = 200

// Query is the first sentence of a doc comment with name taken out (as a
// whole word) and the spaces tidied; "" when fewer than three words are
// left, it is longer than MaxQuery, or the comment only says it is
// deprecated.
func Query(doc, name string) string {
	var p comment.Parser
	var pr comment.Printer
	text := string(pr.Text(p.Parse(doc)))
	first := firstSentence(strings.Join(strings.Fields(text), " "))
	if strings.HasPrefix(first, "Deprecated:") {
		return ""
	}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
	q := strings.Join(strings.Fields(re.ReplaceAllString(first, " ")), " ")
	if len(strings.Fields(q)) < 3 || utf8.RuneCountInString(q) > MaxQuery {
		return ""
	}
	return q
}

// firstSentence is text up to the first period, question or exclamation
// mark followed by a space, or all of it.
func firstSentence(text string) string {
	for i := 0; i+1 < len(text); i++ {
		if (text[i] == '.' || text[i] == '!' || text[i] == '?') && text[i+1] == ' ' {
			return text[:i+1]
		}
	}
	return text
}

// Write writes s into dir in BEIR's layout: corpus.jsonl (every function,
// no title), queries.jsonl (the drawn ones) and qrels/test.tsv (each
// query's function, relevance 1).
func (s *Set) Write(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		return err
	}
	write := func(name string, fill func(w *bufio.Writer) error) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		if err := fill(w); err != nil {
			f.Close()
			return err
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	line := func(w *bufio.Writer, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		w.Write(b)
		return w.WriteByte('\n')
	}
	if err := write("corpus.jsonl", func(w *bufio.Writer) error {
		for _, f := range s.Functions {
			if err := line(w, map[string]string{"_id": f.ID, "title": "", "text": f.Code}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := write("queries.jsonl", func(w *bufio.Writer) error {
		for _, i := range s.Queries {
			if err := line(w, map[string]string{"_id": fmt.Sprintf("q%d", i), "text": s.Functions[i].Query}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return write(filepath.Join("qrels", "test.tsv"), func(w *bufio.Writer) error {
		fmt.Fprintln(w, "query-id\tcorpus-id\tscore")
		for _, i := range s.Queries {
			fmt.Fprintf(w, "q%d\t%s\t1\n", i, s.Functions[i].ID)
		}
		return nil
	})
}
