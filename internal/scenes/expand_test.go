package scenes

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cuedeck/cuedeck/pkg/core/scene"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

func TestExpandDirectoryThenFile(t *testing.T) {
	fsys := fstest.MapFS{
		"docs/ops/mast.md":    {Data: []byte("# Mast\n\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")},
		"docs/intro.md":       {Data: []byte("# Intro\n")},
		"docs/.hidden/x.md":   {Data: []byte("hidden")},
		"node_modules/a/b.js": {Data: []byte("x")},
	}
	out, err := Expand(fsys, scene.NodeID("docs/"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"docs/ops/ [expand: " + scene.NodeID("docs/ops") + "]", "docs/intro.md [expand: "} {
		if !strings.Contains(out, want) {
			t.Fatalf("expansion lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ".hidden") {
		t.Fatalf("hidden entry listed:\n%s", out)
	}
	out, err = Expand(fsys, scene.NodeID("docs/ops/mast.md"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "# Mast") || strings.Contains(out, "wJalrXUtnFEMI") {
		t.Fatalf("file expansion (content, secret redacted):\n%s", out)
	}
	if _, err := Expand(fsys, scene.NodeID("node_modules/a"), 0); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("vendored directory: %v", err)
	}
}

// A file longer than the budget expands to its outline when that fits,
// and is cut only when it has none.
func TestExpandLongFileGivesItsOutline(t *testing.T) {
	big := bigGo(60)
	fsys := fstest.MapFS{
		"src/store.go": {Data: []byte(big)},
		"data/big.txt": {Data: []byte(strings.Repeat("plain words\n", 3000))},
	}
	out, err := Expand(fsys, scene.NodeID("src/store.go"), 2500)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "# src/store.go\n\noutline of src/store.go (go, ") || !strings.Contains(out, "func Lookup59(") ||
		strings.Contains(out, "strings.TrimSpace(key)") || tokens.Count(out) > 2500 {
		t.Fatalf("expansion of a long Go file (%d tokens):\n%s", tokens.Count(out), out)
	}
	t.Logf("src/store.go: %d tokens whole, expansion as outline %d tokens", tokens.Count(big), tokens.Count(out))
	out, err = Expand(fsys, scene.NodeID("data/big.txt"), 500)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[truncated: the file exceeds the token limit") {
		t.Fatalf("expansion of a long text file:\n%.300s", out)
	}
}
