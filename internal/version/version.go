// Package version says which build this is: the release version, commit
// and build date (set at link time by the Makefile with -X
// github.com/cuedeck/cuedeck/internal/version.Version=... and .Commit,
// .Date), the built-in embedding model, and the data format it stores.
// It stays on the standard library: the thin `cue` front answers
// `cue version` with it.
package version

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is "dev" in builds that did not set it.
var Version = "dev"

// Commit is the git commit the binary was built from and Date its build
// time (RFC 3339, UTC; the commit's time in reproducible builds). Both
// are set at link time; builds that did not set them report what the Go
// toolchain recorded, else "unknown".
var (
	Commit = ""
	Date   = ""
)

// EmbeddingModel is the id of the embedding model built into the binary,
// under which its vectors are cached (internal/embed/builtin.ModelID).
const EmbeddingModel = "builtin:use-lite"

// DataFormat is the version of what this binary stores: the workspace's
// cache (.cuedeck/.cache: Badger state, the daemon's NATS store) and the
// JetStream streams and buckets it provisions. A change that an older
// binary cannot read raises it; `cue upgrade` refuses to cross a change
// without --force, and a binary that finds an older format migrates or
// rebuilds, and refuses a newer one.
const DataFormat = 1

// Info describes this build; `cue version --json` prints it.
type Info struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	Date           string `json:"date"`
	GoVersion      string `json:"go_version"`
	Platform       string `json:"platform"`
	EmbeddingModel string `json:"embedding_model"`
	DataFormat     int    `json:"data_format"`
}

// Get returns this build's Info. What the link did not set comes from the
// module and VCS stamps the Go toolchain records (`go install
// ...@v1.2.3` records the version, a build in a git checkout the commit
// and its time), else "dev" and "unknown".
func Get() Info {
	i := Info{
		Version: Version, Commit: Commit, Date: Date,
		GoVersion:      runtime.Version(),
		Platform:       runtime.GOOS + "/" + runtime.GOARCH,
		EmbeddingModel: EmbeddingModel,
		DataFormat:     DataFormat,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if (i.Version == "" || i.Version == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if i.Commit == "" && settings["vcs.revision"] != "" {
			i.Commit = settings["vcs.revision"]
			if settings["vcs.modified"] == "true" {
				i.Commit += "-dirty"
			}
		}
		if i.Date == "" {
			i.Date = settings["vcs.time"]
		}
	}
	if i.Version == "" {
		i.Version = "dev"
	}
	if i.Commit == "" {
		i.Commit = "unknown"
	}
	if i.Date == "" {
		i.Date = "unknown"
	}
	return i
}

// Label is the version a program tells its peers (the MCP serverInfo):
// the release version, or for a dev build "dev+" and the commit's first
// 12 hex digits when it is known ("dev+0123456789ab-dirty" for an edited
// checkout), so that two dev builds can be told apart; "dev" otherwise.
func (i Info) Label() string {
	if i.Version != "dev" || i.Commit == "unknown" {
		return i.Version
	}
	rev, dirty := strings.CutSuffix(i.Commit, "-dirty")
	label := "dev+" + rev[:min(12, len(rev))]
	if dirty {
		label += "-dirty"
	}
	return label
}

// Label is this build's Info.Label.
func Label() string { return Get().Label() }

// Text is the human form of `NAME version`: the name and version on the
// first line, then one "key: value" line per detail.
func (i Info) Text(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", name, i.Version)
	fmt.Fprintf(&b, "  commit:          %s\n", i.Commit)
	fmt.Fprintf(&b, "  built:           %s\n", i.Date)
	fmt.Fprintf(&b, "  go:              %s %s\n", i.GoVersion, i.Platform)
	fmt.Fprintf(&b, "  embedding model: %s\n", i.EmbeddingModel)
	fmt.Fprintf(&b, "  data format:     %d\n", i.DataFormat)
	return b.String()
}

// Print writes `NAME version [--json]` for args (what follows "version")
// and returns an error for anything else.
func Print(w io.Writer, name string, args []string) error {
	i := Get()
	switch {
	case len(args) == 0:
		_, err := fmt.Fprint(w, i.Text(name))
		return err
	case len(args) == 1 && (args[0] == "--json" || args[0] == "-json"):
		b, err := json.MarshalIndent(i, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	return fmt.Errorf("version: unexpected %q; use `%s version` or `%s version --json`", strings.Join(args, " "), name, name)
}
