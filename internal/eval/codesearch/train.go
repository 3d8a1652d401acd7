package codesearch

import (
	"go/ast"
	"go/token"
	"path"
	"strings"

	"github.com/cuedeck/cuedeck/internal/embed/static"
)

// TrainingPairs are what a model may learn from without having seen the
// drawn queries: every documented function of the set (its query, its
// code) and, walking roots (the set's), what else Go source says of its
// code in English (commentPairs), all outside the packages a query was
// drawn from, in any version of them (the module cache holds several),
// and none whose description says what a drawn query says.
//
// The documented exported functions alone are too few on a machine whose
// module cache holds little more than one project's dependencies (52,668
// functions, 29,728 pairs: the code model scored 0.232 nDCG@10 alone);
// with the rest (105,834 pairs) it scored 0.311, and hybrid rose from
// 0.007 to 0.010 above keyword.
func (s *Set) TrainingPairs(roots ...string) ([]static.Pair, error) {
	held, asked := s.heldOut()
	var pairs []static.Pair
	for _, f := range s.Functions {
		if f.Query == "" || held[packageOf(f.ID)] || asked[strings.ToLower(f.Query)] {
			continue
		}
		pairs = append(pairs, static.Pair{Query: f.Query, Doc: f.Code})
	}
	for _, root := range roots {
		more, err := commentPairs(root, held, asked)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, more...)
	}
	return pairs, nil
}

// heldOut are the packages the drawn queries come from and the drawn
// queries, lower-cased.
func (s *Set) heldOut() (held, asked map[string]bool) {
	held, asked = map[string]bool{}, map[string]bool{}
	for _, qi := range s.Queries {
		held[packageOf(s.Functions[qi].ID)] = true
		asked[strings.ToLower(s.Functions[qi].Query)] = true
	}
	return held, asked
}

// packageOf is the directory of a function id without module versions:
// "mod/github.com/x/y@v1.2.0/z/f.go#F" is "mod/github.com/x/y/z".
func packageOf(id string) string {
	file, _, _ := strings.Cut(id, "#")
	parts := strings.Split(path.Dir(file), "/")
	for i, e := range parts {
		parts[i], _, _ = strings.Cut(e, "@")
	}
	return strings.Join(parts, "/")
}

// commentPairs walks root as Generate does, tests included, for what else
// Go source says of its code in English, outside the held packages and
// asked queries: the doc comments of functions the set does not hold
// (unexported ones, tests) with their code, types', fields',
// constants' and variables' doc comments with their declarations, and
// other comments (inside function bodies, mostly) with the lines they
// stand above, up to a blank line, a comment or eight lines. Each
// description is a comment's first sentence, the declared name taken out
// as Query takes it out.
func commentPairs(root string, held, asked map[string]bool) ([]static.Pair, error) {
	var pairs []static.Pair
	add := func(query, doc string) {
		query = strings.Join(strings.Fields(query), " ")
		if len(strings.Fields(query)) < 3 || len(query) > MaxQuery || strings.TrimSpace(doc) == "" || asked[strings.ToLower(query)] {
			return
		}
		pairs = append(pairs, static.Pair{Query: query, Doc: doc})
	}
	err := goFiles(root, func(rel string) bool { return !held[packageOf(rel+"#")] }, func(rel string, fset *token.FileSet, src []byte, f *ast.File) error {
		// The set's functions are its exported documented ones outside
		// tests; the rest of the documented functions are pairs here.
		inSet := func(fd *ast.FuncDecl) bool { return fd.Name.IsExported() && !strings.HasSuffix(rel, "_test.go") }
		text := func(n ast.Node) string {
			a, b := fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset
			if a < 0 || b > len(src) || a >= b {
				return ""
			}
			return string(src[a:b])
		}
		inDecl := map[*ast.CommentGroup]bool{}
		for _, decl := range f.Decls {
			switch dd := decl.(type) {
			case *ast.FuncDecl:
				if dd.Doc != nil {
					inDecl[dd.Doc] = true
					if !inSet(dd) && dd.Body != nil {
						add(Query(dd.Doc.Text(), dd.Name.Name), text(dd))
					}
				}
			case *ast.GenDecl:
				if dd.Doc != nil {
					inDecl[dd.Doc] = true
				}
				for _, spec := range dd.Specs {
					switch sp := spec.(type) {
					case *ast.TypeSpec:
						doc := sp.Doc
						if doc == nil && len(dd.Specs) == 1 {
							doc = dd.Doc
						}
						if doc != nil {
							inDecl[doc] = true
							add(Query(doc.Text(), sp.Name.Name), text(sp))
						}
						if st, ok := sp.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								if fl.Doc != nil && len(fl.Names) > 0 {
									inDecl[fl.Doc] = true
									add(Query(fl.Doc.Text(), fl.Names[0].Name), text(fl))
								}
							}
						}
					case *ast.ValueSpec:
						doc := sp.Doc
						if doc == nil && len(dd.Specs) == 1 {
							doc = dd.Doc
						}
						if doc != nil && len(sp.Names) > 0 {
							inDecl[doc] = true
							add(Query(doc.Text(), sp.Names[0].Name), text(sp))
						}
					}
				}
			}
		}
		lines := strings.Split(string(src), "\n")
		for _, cg := range f.Comments {
			if inDecl[cg] || cg == f.Doc {
				continue
			}
			end := fset.Position(cg.End()).Line // 1-based: lines[end] is the next line
			var below []string
			for i := end; i < len(lines) && i < end+8; i++ {
				l := strings.TrimSpace(lines[i])
				if l == "" || strings.HasPrefix(l, "//") {
					break
				}
				below = append(below, l)
			}
			if len(below) > 0 {
				add(firstSentence(strings.Join(strings.Fields(cg.Text()), " ")), strings.Join(below, "\n"))
			}
		}
		return nil
	})
	return pairs, err
}
