package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A daemon that exits while starting has said why in the log: cue up shows
// the last thing it said this time, not an error of an earlier start.
func TestLastCueErrorReadsOnlyThisStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	earlier := "cue: an earlier start failed\n"
	now := "time=… level=INFO msg=\"starting\"\ncue: not enough free disk space: free some\ncue: the last word\n"
	if err := os.WriteFile(path, []byte(earlier+now), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := lastCueError(path, int64(len(earlier))); got != "the last word" {
		t.Fatalf("lastCueError = %q", got)
	}
	if got := lastCueError(path, int64(len(earlier+now))); got != "" {
		t.Fatalf("nothing written since: %q", got)
	}
}
