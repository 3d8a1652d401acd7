// Package version holds the release version, set at link time by the
// Makefile (-X github.com/cuedeck/cuedeck/internal/version.Version=...).
package version

// Version is "dev" in builds that did not set it.
var Version = "dev"

// DataFormat is the version of what this binary stores: the workspace's
// cache (.cuedeck/.cache: Badger state, the daemon's NATS store) and the
// JetStream streams and buckets it provisions. A change that an older
// binary cannot read raises it; `cue upgrade` refuses to cross a change
// without --force, and a binary that finds an older format migrates or
// rebuilds, and refuses a newer one.
const DataFormat = 1
