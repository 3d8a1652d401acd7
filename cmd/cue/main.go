//go:build !windows

// Command cue is CueDeck's laptop CLI, as a thin front: `cue hook` and
// `cue version` run here, on the standard library alone, so that Claude
// Code's hooks answer in a few milliseconds; every other command replaces
// this process with cue-engine (same pid, stdin, stdout and signals),
// which links NATS, Badger, the MCP SDK and the roles.
package main

import (
	"errors"
	"fmt"
	"io"
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
				Stdin: stdin{}, Stdout: os.Stdout, Stderr: os.Stderr,
				Front: front(), Engine: findEngine,
			}))
		case "version", "--version":
			if err := version.Print(os.Stdout, "cue", args[1:]); err != nil {
				fmt.Fprintln(os.Stderr, "cue:", err)
				os.Exit(2)
			}
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

// stdin reads file descriptor 0 with plain read(2). os.Stdin would hand a
// pipe to the runtime's poller, whose set-up (epoll, eventfd, a thread
// woken for it) is a measurable part of a hook's few milliseconds.
type stdin struct{}

func (stdin) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(0, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			// A non-blocking pipe: let the poller wait for it.
			return os.Stdin.Read(p)
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
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
	return "", errors.New(engineName + " not found " + here + " or on PATH; build both binaries with `make build` (into bin/) or install them from a checkout with `go install ./cmd/cue ./cmd/cue-engine`")
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode().Perm()&0o111 != 0
}
