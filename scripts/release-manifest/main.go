// Command release-manifest finishes `make release`: it describes the
// binaries in a release directory in manifest.json and SHA256SUMS
// (internal/release), then runs `version --json` on each binary built for
// this machine and checks that it reports the release's version.
//
//	go run ./scripts/release-manifest -dir dist/v1.2.3 -version v1.2.3 -commit SHA -date RFC3339
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/cuedeck/cuedeck/internal/release"
	"github.com/cuedeck/cuedeck/internal/version"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "release-manifest:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "release directory holding the binaries")
	v := flag.String("version", "", "release version")
	commit := flag.String("commit", "unknown", "commit the binaries were built from")
	date := flag.String("date", "unknown", "build date (RFC 3339)")
	flag.Parse()
	if *dir == "" || *v == "" {
		return fmt.Errorf("give -dir and -version, e.g. -dir dist/v1.2.3 -version v1.2.3")
	}
	m, err := release.Generate(*dir, *v, *commit, *date)
	if err != nil {
		return err
	}
	if err := release.Write(*dir, m); err != nil {
		return err
	}
	ran := 0
	for _, f := range m.Files {
		if f.OS != runtime.GOOS || f.Arch != runtime.GOARCH {
			continue
		}
		path := filepath.Join(*dir, f.Name)
		out, err := exec.Command(path, "version", "--json").Output()
		if err != nil {
			return fmt.Errorf("%s version --json: %v", path, err)
		}
		var got version.Info
		if err := json.Unmarshal(out, &got); err != nil || got.Version != m.Version || got.Commit != m.Commit || got.Date != m.Date {
			return fmt.Errorf("%s version --json answered %s (%v), want version %s, commit %s, date %s", path, out, err, m.Version, m.Commit, m.Date)
		}
		ran++
	}
	fmt.Printf("%s: %d files, %s, %s; %d %s/%s binaries ran `version` and reported %s\n",
		*dir, len(m.Files), release.ManifestFile, release.SumsFile, ran, runtime.GOOS, runtime.GOARCH, m.Version)
	return nil
}
