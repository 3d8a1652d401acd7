package scenes

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/cuedeck/cuedeck/pkg/core/scene"
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
