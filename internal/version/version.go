// Package version holds the release version, set at link time by the
// Makefile (-X github.com/cuedeck/cuedeck/internal/version.Version=...).
package version

// Version is "dev" in builds that did not set it.
var Version = "dev"
