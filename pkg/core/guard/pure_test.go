package guard

import (
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPackageIsPure keeps the guard free of I/O: edges and the extractor
// hand it text on hot paths, and it must stay testable and fuzzable alone.
func TestPackageIsPure(t *testing.T) {
	// Exact standard-library paths (net/url is parsing, not networking),
	// then module prefixes.
	forbidden := []string{"os", "os/exec", "io/fs", "io/ioutil", "path/filepath", "net", "net/http", "syscall"}
	forbiddenPrefixes := []string{"github.com/nats-io/", "github.com/dgraph-io/", "github.com/modelcontextprotocol/", "github.com/mark3labs/"}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			bad := slices.Contains(forbidden, path)
			for _, p := range forbiddenPrefixes {
				bad = bad || strings.HasPrefix(path, p)
			}
			if bad {
				t.Errorf("%s imports %s; keep package guard free of I/O and infrastructure", name, path)
			}
		}
	}
}
