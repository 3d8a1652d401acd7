// Package release describes a CueDeck release and installs one. `make
// release` writes a Manifest beside the binaries (through
// scripts/release-manifest); `cue upgrade` (cmd/cue-engine) fetches a
// manifest, picks this platform's binaries, verifies them against it and
// swaps them in, keeping the previous ones for a rollback.
package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cuedeck/cuedeck/internal/version"
)

// MinDataFormat is the oldest data format this build reads. It equals
// version.DataFormat until a build learns to read an older format.
const MinDataFormat = version.DataFormat

// Files a release directory holds beside its binaries.
const (
	ManifestFile = "manifest.json"
	SumsFile     = "SHA256SUMS"
)

// Manifest is a release: its version, what data it stores and reads, and
// its binaries. File names resolve against the manifest's URL.
type Manifest struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
	// DataFormat is the format the release's binaries store;
	// MinDataFormat the oldest they read (see version.DataFormat).
	DataFormat    int    `json:"data_format"`
	MinDataFormat int    `json:"min_data_format"`
	Files         []File `json:"files"`
}

// File is one binary of a release.
type File struct {
	Name    string `json:"name"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	Command string `json:"command"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
}

// Find returns the file of command for goos/goarch.
func (m *Manifest) Find(command, goos, goarch string) (File, bool) {
	for _, f := range m.Files {
		if f.Command == command && f.OS == goos && f.Arch == goarch {
			return f, true
		}
	}
	return File{}, false
}

// FileName is the name of command's binary in a release:
// COMMAND_VERSION_OS_ARCH, with .exe on windows.
func FileName(command, version, goos, goarch string) string {
	n := command + "_" + version + "_" + goos + "_" + goarch
	if goos == "windows" {
		n += ".exe"
	}
	return n
}

// ParseFileName splits a FileName; ok is false for any other name.
func ParseFileName(name string) (command, version, goos, goarch string, ok bool) {
	base := strings.TrimSuffix(name, ".exe")
	parts := strings.Split(base, "_")
	if len(parts) < 4 {
		return "", "", "", "", false
	}
	n := len(parts)
	command, goos, goarch = parts[0], parts[n-2], parts[n-1]
	version = strings.Join(parts[1:n-2], "_")
	if command == "" || version == "" || goos == "" || goarch == "" || (goos == "windows") != strings.HasSuffix(name, ".exe") {
		return "", "", "", "", false
	}
	return command, version, goos, goarch, true
}

// Generate describes the release in dir: every binary named by FileName
// for v. Any other file but the manifest and the checksums is an error,
// so that a stray file is not published unnoticed.
func Generate(dir, v, commit, date string) (*Manifest, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Version: v, Commit: commit, Date: date, DataFormat: version.DataFormat, MinDataFormat: MinDataFormat}
	for _, e := range entries {
		name := e.Name()
		if name == ManifestFile || name == SumsFile {
			continue
		}
		command, fv, goos, goarch, ok := ParseFileName(name)
		if !ok || e.IsDir() {
			return nil, fmt.Errorf("%s: not a release binary (COMMAND_VERSION_OS_ARCH): remove it or rebuild with `make release`", filepath.Join(dir, name))
		}
		if fv != v {
			return nil, fmt.Errorf("%s: built for version %s, not %s: rebuild with `make release`", filepath.Join(dir, name), fv, v)
		}
		sum, size, err := hashFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		m.Files = append(m.Files, File{Name: name, OS: goos, Arch: goarch, Command: command, Size: size, SHA256: sum})
	}
	if len(m.Files) == 0 {
		return nil, fmt.Errorf("%s: no binaries", dir)
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Name < m.Files[j].Name })
	return m, nil
}

// Write writes m as dir/manifest.json and its checksums as dir/SHA256SUMS,
// in the format `sha256sum -c` reads.
func Write(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var sums strings.Builder
	for _, f := range m.Files {
		fmt.Fprintf(&sums, "%s  %s\n", f.SHA256, f.Name)
	}
	return os.WriteFile(filepath.Join(dir, SumsFile), []byte(sums.String()), 0o644)
}

// Decode reads a manifest and checks that it says what a client needs.
func Decode(r io.Reader) (*Manifest, error) {
	var m Manifest
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return nil, fmt.Errorf("not a release manifest: %w", err)
	}
	switch {
	case m.Version == "":
		return nil, errors.New("release manifest without a version")
	case m.DataFormat <= 0 || m.MinDataFormat <= 0 || m.MinDataFormat > m.DataFormat:
		return nil, fmt.Errorf("release manifest %s: data_format %d, min_data_format %d: want 1 <= min_data_format <= data_format", m.Version, m.DataFormat, m.MinDataFormat)
	}
	for _, f := range m.Files {
		if f.Name == "" || strings.ContainsAny(f.Name, "/\\") || len(f.SHA256) != sha256.Size*2 {
			return nil, fmt.Errorf("release manifest %s: file %q: want a plain name and a sha256", m.Version, f.Name)
		}
	}
	return &m, nil
}

func hashFile(path string) (sum string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	size, err = io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}
