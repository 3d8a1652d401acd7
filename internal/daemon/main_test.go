package daemon

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the tests a home of their own: a daemon tails the Claude
// Code transcripts under $HOME, and the developer's sessions are not
// fixtures.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "cue-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
