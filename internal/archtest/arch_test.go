package archtest

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath string
	Dir        string
	Deps       []string
	Imports    []string
	GoFiles    []string
}

func list(t *testing.T, patterns ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,Deps,Imports,GoFiles"}, patterns...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestPureCoreAndContracts: pkg/core and pkg/events must not reach NATS,
// Badger, the MCP SDK, Ollama or the network, directly or indirectly.
func TestPureCoreAndContracts(t *testing.T) {
	forbidden := []string{
		"github.com/nats-io/", "github.com/dgraph-io/", "github.com/modelcontextprotocol/",
		"github.com/ollama/", "github.com/mark3labs/", "net", "net/http", "os/exec",
	}
	for _, p := range list(t, "./pkg/...") {
		for _, dep := range p.Deps {
			for _, f := range forbidden {
				if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
					t.Errorf("%s imports %s; pkg/ must stay free of infrastructure (put adapters in internal/)", p.ImportPath, dep)
				}
			}
		}
	}
}

// TestPkgDoesNoIO: pkg/ is handed values and returns values; files, the
// process and the OS are the adapters' business. (Dependencies may use os
// internally, so only direct imports are checked.)
func TestPkgDoesNoIO(t *testing.T) {
	io := []string{"os", "os/exec", "io/fs", "io/ioutil", "path/filepath", "syscall", "net", "net/http"}
	for _, p := range list(t, "./pkg/...") {
		for _, imp := range p.Imports {
			for _, f := range io {
				if imp == f {
					t.Errorf("%s imports %s; keep pkg/ free of I/O (adapters go in internal/)", p.ImportPath, imp)
				}
			}
		}
	}
}

// TestEveryPackageHasADocComment keeps `go doc` useful.
func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range list(t, "./...") {
		if len(p.GoFiles) == 0 {
			continue
		}
		documented := false
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if file.Doc != nil && strings.TrimSpace(file.Doc.Text()) != "" {
				documented = true
				break
			}
		}
		if !documented {
			t.Errorf("package %s has no doc comment: say what it is for and who uses it", p.ImportPath)
		}
	}
}

// TestHookFrontIsStdlibOnly: Claude Code waits for every hook, and the
// `cue` front answers them; each linked package's init runs on every hook
// call (NATS, Badger and the MCP SDK cost ~5 ms). So cmd/cue and
// internal/hook reach only the standard library and internal/version.
func TestHookFrontIsStdlibOnly(t *testing.T) {
	allowed := map[string]bool{
		"github.com/cuedeck/cuedeck/internal/hook":    true,
		"github.com/cuedeck/cuedeck/internal/version": true,
	}
	for _, p := range list(t, "./cmd/cue", "./internal/hook") {
		for _, dep := range p.Deps {
			first, _, _ := strings.Cut(dep, "/")
			if !strings.Contains(first, ".") {
				continue // the standard library
			}
			if !allowed[dep] {
				t.Errorf("%s imports %s; the cue front must stay on the standard library (put it in cmd/cue-engine)", p.ImportPath, dep)
			}
		}
	}
}
