// Command cue is CueDeck's laptop CLI, as a thin front: `cue hook` and
// `cue version` run here, on the standard library alone, so that Claude
// Code's hooks answer in a few milliseconds; every other command replaces
// this process with cue-engine (same pid, stdin, stdout and signals),
// which links NATS, Badger, the MCP SDK and the roles.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cuedeck/cuedeck/internal/hook"
	"github.com/cuedeck/cuedeck/internal/version"
)

// engineName is the binary every command but hook and version runs in.
const engineName = "cue-engine"

func main() {
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "hook":
			os.Exit(hook.Main(args[1:], hook.Env{
				Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
				Front: front(), Engine: findEngine,
			}))
		case "version", "--version":
			fmt.Println("cue", version.Version)
			return
		}
	}
	engine, err := findEngine()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cue:", err)
		os.Exit(1)
	}
	env := append(os.Environ(), hook.FrontEnv+"="+front())
	err = syscall.Exec(engine, append([]string{engine}, args...), env)
	fmt.Fprintf(os.Stderr, "cue: run %s: %v\n", engine, err)
	os.Exit(1)
}

// front is this binary's absolute path, symlinks resolved.
func front() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		return p
	}
	return self
}

// findEngine looks for cue-engine next to this binary (a release or `make
// build` puts them side by side), then on PATH.
func findEngine() (string, error) {
	if self := front(); self != "" {
		p := filepath.Join(filepath.Dir(self), engineName)
		if executable(p) {
			return p, nil
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, engineName)
		if executable(p) {
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
			return p, nil
		}
	}
	here := "next to " + front()
	if strings.TrimSpace(front()) == "" {
		here = "next to cue"
	}
	return "", errors.New(engineName + " not found " + here + " or on PATH; build both binaries with `make build` (into bin/) or install them with `go install github.com/cuedeck/cuedeck/cmd/...`")
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode().Perm()&0o111 != 0
}
