package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/version"
)

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"v0.2.0", "v0.1.0", 1},
		{"v0.1.0", "v0.2.0", -1},
		{"v1.0.0", "1.0.0", 0},
		{"v0.10.0", "v0.9.9", 1},
		{"v1.0.0-rc.1", "v1.0.0", -1},
		{"v1.0.0-rc.2", "v1.0.0-rc.10", -1},
		{"v1.0.0-alpha", "v1.0.0-alpha.1", -1},
		{"v1.0.0-1", "v1.0.0-alpha", -1},
		{"v1.0.0+build.5", "v1.0.0", 0},
	} {
		got, err := CompareVersions(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("CompareVersions(%s, %s) = %d, %v; want %d", c.a, c.b, got, err, c.want)
		}
	}
	for _, bad := range []string{"dev", "8040349-dirty", "v1.2", "v01.2.3", "v1.2.3-"} {
		if _, err := CompareVersions(bad, "v1.0.0"); err == nil {
			t.Errorf("%q compared as a version", bad)
		}
	}
}

func TestFileNames(t *testing.T) {
	for _, c := range [][4]string{
		{"cue-engine", "v1.2.3", "linux", "amd64"},
		{"cue", "v1.2.3-rc.1", "windows", "amd64"},
		{"mcp-edge", "8040349-dirty", "darwin", "arm64"},
	} {
		name := FileName(c[0], c[1], c[2], c[3])
		command, v, goos, goarch, ok := ParseFileName(name)
		if !ok || [4]string{command, v, goos, goarch} != c {
			t.Errorf("ParseFileName(%s) = %s %s %s %s %v", name, command, v, goos, goarch, ok)
		}
	}
	for _, bad := range []string{"cue", "README.md", "cue_v1_linux", "cue_v1_windows_amd64", "cue_v1_linux_amd64.exe"} {
		if _, _, _, _, ok := ParseFileName(bad); ok {
			t.Errorf("%q parsed as a release file", bad)
		}
	}
}

func TestGenerateAndWrite(t *testing.T) {
	dir := t.TempDir()
	contents := map[string]string{
		FileName("cue", "v1.0.0", "linux", "amd64"):         "front",
		FileName("cue", "v1.0.0", "windows", "amd64"):       "front.exe",
		FileName("cue-engine", "v1.0.0", "darwin", "arm64"): "engine",
	}
	for name, c := range contents {
		os.WriteFile(filepath.Join(dir, name), []byte(c), 0o755)
	}
	m, err := Generate(dir, "v1.0.0", "abc", "2026-11-25T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, m); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	got, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got.DataFormat != version.DataFormat || got.MinDataFormat != MinDataFormat || len(got.Files) != 3 {
		t.Errorf("manifest %+v", got)
	}
	f, ok := got.Find("cue-engine", "darwin", "arm64")
	sum := sha256.Sum256([]byte("engine"))
	if !ok || f.Size != 6 || f.SHA256 != hex.EncodeToString(sum[:]) || f.Name != "cue-engine_v1.0.0_darwin_arm64" {
		t.Errorf("cue-engine darwin/arm64: %+v %v", f, ok)
	}
	// SHA256SUMS in sha256sum's format, one line per file.
	sums, _ := os.ReadFile(filepath.Join(dir, SumsFile))
	lines := 0
	for sc := bufio.NewScanner(bytes.NewReader(sums)); sc.Scan(); lines++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		want := sha256.Sum256([]byte(contents[name]))
		if !ok || sum != hex.EncodeToString(want[:]) {
			t.Errorf("SHA256SUMS line %q", sc.Text())
		}
	}
	if lines != 3 {
		t.Errorf("SHA256SUMS has %d lines", lines)
	}
	// A regenerated manifest skips its own files; a stray file or another
	// version's binary is refused.
	if _, err := Generate(dir, "v1.0.0", "abc", "x"); err != nil {
		t.Errorf("regenerate: %v", err)
	}
	os.WriteFile(filepath.Join(dir, FileName("cue", "v0.9.0", "linux", "arm64")), nil, 0o755)
	if _, err := Generate(dir, "v1.0.0", "abc", "x"); err == nil || !strings.Contains(err.Error(), "built for version v0.9.0") {
		t.Errorf("another version's binary: %v", err)
	}
}

func TestDecodeRefusesIncompleteManifests(t *testing.T) {
	for _, m := range []Manifest{
		{DataFormat: 1, MinDataFormat: 1},
		{Version: "v1.0.0"},
		{Version: "v1.0.0", DataFormat: 1, MinDataFormat: 2},
		{Version: "v1.0.0", DataFormat: 1, MinDataFormat: 1, Files: []File{{Name: "../cue", SHA256: strings.Repeat("0", 64)}}},
		{Version: "v1.0.0", DataFormat: 1, MinDataFormat: 1, Files: []File{{Name: "cue", SHA256: "beef"}}},
	} {
		b, _ := json.Marshal(m)
		if _, err := Decode(bytes.NewReader(b)); err == nil {
			t.Errorf("accepted %s", b)
		}
	}
}
