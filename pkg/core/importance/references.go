package importance

import (
	"path"
	"strings"
)

// File is one file of a repo as References sees it.
type File struct {
	// Path is repo-relative, slash-separated.
	Path string
	// Links are a document's links (markdown links, @doc references),
	// each as the repo paths it may name; the first that is a file of the
	// repo is the one it names.
	Links [][]string
	// Imports are a code file's imports as written.
	Imports []string
}

// References counts, for each file of one repo, the distinct other files
// that link to or import it: a file linking to another ten times counts
// once. module is the repo's Go module path ("" when unknown).
//
// Imports resolve to files of the repo as follows. A Go import of module's
// packages names every non-test .go file of the package's directory; an
// import from the package's own directory (an external test) does not
// count. Without a module, a Go import whose first element has a dot (not
// the standard library) names the directory that is the longest suffix of
// its path. A relative import ("./x", "../x", JavaScript and the like)
// names the file it resolves to, with any extension, or that directory's
// index file. A dotted Python module (a.b) names a/b.py or a/b/__init__.py.
// Anything else, such as third-party packages, names nothing.
func References(files []File, module string) map[string]int {
	byPath := make(map[string]bool, len(files))
	byDir := make(map[string][]string)
	for _, f := range files {
		byPath[f.Path] = true
		byDir[path.Dir(f.Path)] = append(byDir[path.Dir(f.Path)], f.Path)
	}
	refs := make(map[string]int)
	// A Go import names a whole package: count importers per directory
	// and credit its files once at the end, rather than each file of it
	// on every import. (A referrer is either code with imports or a
	// document with links, never both, so the two counts do not overlap.)
	pkgRefs := make(map[string]int)
	named := make(map[string]bool)
	pkgs := make(map[string]bool)
	for _, f := range files {
		clear(named)
		clear(pkgs)
		for _, cands := range f.Links {
			for _, c := range cands {
				if c = path.Clean(strings.TrimPrefix(c, "/")); byPath[c] {
					named[c] = true
					break
				}
			}
		}
		for _, imp := range f.Imports {
			if file, pkg := resolveImport(f.Path, imp, module, byPath, byDir); file != "" {
				named[file] = true
			} else if pkg != "" {
				pkgs[pkg] = true
			}
		}
		delete(named, f.Path)
		for t := range named {
			refs[t]++
		}
		for p := range pkgs {
			pkgRefs[p]++
		}
	}
	for dir, n := range pkgRefs {
		for _, p := range byDir[dir] {
			if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				refs[p] += n
			}
		}
	}
	return refs
}

// resolveImport is the file of the repo that from's import imp names, or
// for Go the directory of the package it names; both are "" when it names
// nothing of the repo.
func resolveImport(from, imp, module string, byPath map[string]bool, byDir map[string][]string) (file, pkgDir string) {
	dir := path.Dir(from)
	switch {
	case strings.HasSuffix(from, ".go"):
		pkg, ok := "", false
		switch {
		case module != "" && imp == module:
			pkg, ok = ".", true
		case module != "" && strings.HasPrefix(imp, module+"/"):
			pkg, ok = imp[len(module)+1:], true
		case module == "" && strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
			pkg, ok = longestDirSuffix(imp, byDir)
		}
		if !ok || pkg == dir {
			return "", ""
		}
		return "", pkg
	case strings.HasPrefix(imp, "./") || strings.HasPrefix(imp, "../"):
		p := path.Join(dir, imp)
		if byPath[p] {
			return p, ""
		}
		if f := byStem(byDir[path.Dir(p)], path.Base(p)); f != "" {
			return f, ""
		}
		if f := byStem(byDir[p], "index"); f != "" {
			return f, ""
		}
	case strings.HasSuffix(from, ".py"):
		p := strings.ReplaceAll(imp, ".", "/")
		for _, c := range []string{p + ".py", p + "/__init__.py"} {
			if byPath[c] {
				return c, ""
			}
		}
	}
	return "", ""
}

// longestDirSuffix is the directory of the repo that is the longest
// suffix of the import path.
func longestDirSuffix(imp string, byDir map[string][]string) (string, bool) {
	for s := imp; s != ""; {
		if len(byDir[s]) > 0 {
			return s, true
		}
		_, rest, ok := strings.Cut(s, "/")
		if !ok {
			break
		}
		s = rest
	}
	return "", false
}

// byStem is the first of paths whose file name without its extension is
// stem.
func byStem(paths []string, stem string) string {
	for _, p := range paths {
		base := path.Base(p)
		if ext := path.Ext(base); ext != "" && strings.TrimSuffix(base, ext) == stem {
			return p
		}
	}
	return ""
}
