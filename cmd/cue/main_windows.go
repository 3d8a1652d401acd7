package main

import (
	"fmt"
	"os"

	"github.com/cuedeck/cuedeck/internal/version"
)

// main on Windows answers `cue version` only: the daemon, the hooks and
// cue-engine rely on Unix file locks, sessions and signals, so a Windows
// user runs CueDeck under WSL.
func main() {
	args := os.Args[1:]
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		if err := version.Print(os.Stdout, "cue", args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "cue:", err)
			os.Exit(2)
		}
		return
	}
	fmt.Fprintln(os.Stderr, "cue: not supported on windows yet: only `cue version` runs here, and there is no cue-engine for windows; run the linux release of cue and cue-engine under WSL")
	os.Exit(1)
}
