package outline

import (
	"bytes"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"strconv"
	"strings"
)

// synopsis cuts a doc comment to its first sentence the way godoc does.
var synopsis = new(doc.Package).Synopsis

// goOutline outlines Go source in declaration order; false when it does
// not parse, so the caller can fall back to the patterns.
func goOutline(o *out, src []byte) bool {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return false
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	o.add(entry{sig: "package " + f.Name.Name, summary: synopsis(f.Doc.Text()), start: line(f.Package)})
	var imports []string
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		if is.Name != nil {
			p = is.Name.Name + " " + p
		}
		imports = append(imports, p)
	}
	if len(imports) > 0 {
		o.add(entry{sig: "import " + names(imports)})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			fd := *d
			fd.Doc, fd.Body = nil, nil
			sum := synopsis(d.Doc.Text())
			if sum == "" && d.Body != nil {
				sum = goBodySummary(fset, d.Body)
			}
			o.add(entry{sig: printed(fset, &fd), summary: sum, start: line(d.Pos()), end: line(d.End())})
		case *ast.GenDecl:
			goGenDecl(o, fset, d, line)
		}
	}
	return true
}

func goGenDecl(o *out, fset *token.FileSet, d *ast.GenDecl, line func(token.Pos) int) {
	switch d.Tok {
	case token.IMPORT:
		return
	case token.TYPE:
		for _, s := range d.Specs {
			ts := s.(*ast.TypeSpec)
			doc := ts.Doc
			if doc == nil && len(d.Specs) == 1 {
				doc = d.Doc
			}
			o.add(entry{sig: "type " + goTypeSpec(fset, ts), summary: synopsis(doc.Text()), start: line(ts.Pos()), end: line(ts.End())})
		}
		return
	}
	// const and var: one entry for the declaration, its names grouped.
	kw := d.Tok.String()
	doc := d.Doc
	var all []string
	for _, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		if doc == nil {
			doc = vs.Doc
		}
		for _, n := range vs.Names {
			all = append(all, n.Name)
		}
	}
	sig := kw + " (" + names(all) + ")"
	if len(d.Specs) == 1 && !d.Lparen.IsValid() {
		vs := d.Specs[0].(*ast.ValueSpec)
		sig = kw + " " + names(all)
		if vs.Type != nil {
			sig += " " + printed(fset, vs.Type)
		}
		if len(vs.Values) == 1 {
			if v := printed(fset, vs.Values[0]); len(v) <= 60 && !strings.Contains(v, "\n") {
				sig += " = " + v
			} else {
				sig += " = …"
			}
		}
	}
	o.add(entry{sig: sig, summary: synopsis(doc.Text()), start: line(d.Pos()), end: line(d.End())})
}

// goTypeSpec renders a type's name, parameters and kind: a struct or an
// interface with its field or method names, anything else as written.
func goTypeSpec(fset *token.FileSet, ts *ast.TypeSpec) string {
	s := ts.Name.Name
	if ts.TypeParams != nil {
		var ps []string
		for _, f := range ts.TypeParams.List {
			var ns []string
			for _, n := range f.Names {
				ns = append(ns, n.Name)
			}
			ps = append(ps, strings.Join(ns, ", ")+" "+printed(fset, f.Type))
		}
		s += "[" + strings.Join(ps, ", ") + "]"
	}
	if ts.Assign.IsValid() {
		s += " ="
	}
	switch t := ts.Type.(type) {
	case *ast.StructType:
		return s + " struct {" + fieldNames(fset, t.Fields) + "}"
	case *ast.InterfaceType:
		return s + " interface {" + fieldNames(fset, t.Methods) + "}"
	}
	return s + " " + printed(fset, ts.Type)
}

// fieldNames lists a struct's fields or an interface's methods by name;
// embedded ones and type-set terms by their type.
func fieldNames(fset *token.FileSet, fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var ns []string
	for _, f := range fl.List {
		if len(f.Names) == 0 {
			ns = append(ns, printed(fset, f.Type))
			continue
		}
		for _, n := range f.Names {
			ns = append(ns, n.Name)
		}
	}
	return names(ns)
}

// goBodySummary describes a body without a doc comment by what it does
// plainly: the one value it returns, or the functions it calls.
func goBodySummary(fset *token.FileSet, body *ast.BlockStmt) string {
	if len(body.List) == 0 {
		return "empty"
	}
	if len(body.List) == 1 {
		if r, ok := body.List[0].(*ast.ReturnStmt); ok && len(r.Results) > 0 {
			if v := printed(fset, &ast.ReturnStmt{Results: r.Results}); len(v) <= 80 {
				return strings.TrimPrefix(v, "return ") + " (returns)"
			}
		}
	}
	var calls []string
	seen := map[string]bool{}
	panics := false
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := ""
		switch fn := c.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			name = printed(fset, fn)
		}
		if name == "panic" {
			panics = true
		}
		if name == "" || goBuiltins[name] || seen[name] || len(name) > 40 {
			return true
		}
		seen[name] = true
		calls = append(calls, name)
		return true
	})
	var parts []string
	if len(calls) > 0 {
		parts = append(parts, "calls "+names(calls[:min(len(calls), 5)]))
	}
	if panics {
		parts = append(parts, "may panic")
	}
	return strings.Join(parts, "; ")
}

var goBuiltins = map[string]bool{
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true, "delete": true,
	"imag": true, "len": true, "make": true, "max": true, "min": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true,
	"string": true, "int": true, "int64": true, "uint64": true, "byte": true, "rune": true, "float64": true,
}

// printed is n as gofmt would print it, on one line.
func printed(fset *token.FileSet, n any) string {
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, n); err != nil {
		return ""
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// names joins up to maxNames names with commas and counts the rest.
func names(ns []string) string {
	if len(ns) <= maxNames {
		return strings.Join(ns, ", ")
	}
	return strings.Join(ns[:maxNames], ", ") + ", … (" + strconv.Itoa(len(ns)-maxNames) + " more)"
}
