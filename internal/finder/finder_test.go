package finder

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"
)

func fixture() fstest.MapFS {
	return fstest.MapFS{
		"docs/auth.md":             {Data: []byte("# Auth\n\n## Login Flow\n\ntext\n\n## Tokens\n")},
		"README.md":                {Data: []byte("# Readme\n")},
		"node_modules/x/README.md": {Data: []byte("# vendored\n")},
		".git/HEAD.md":             {Data: []byte("# hidden\n")},
		".cuedeck/cards/moor01.md": {Data: []byte("---\nid: moor01\ntitle: Moor the zeppelin\nstatus: active\n---\nbody\n")},
		".cuedeck/.cache/x.md":     {Data: []byte("# cache\n")},
	}
}

func TestEntriesAndFilter(t *testing.T) {
	es, err := Entries(fixture())
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]Entry{}
	for _, e := range es {
		labels[e.Label] = e
	}
	for _, want := range []string{"docs/auth.md", "docs/auth.md#Login Flow", "README.md", "moor01 Moor the zeppelin [active]"} {
		if _, ok := labels[want]; !ok {
			t.Errorf("missing %q in %v", want, es)
		}
	}
	for l := range labels {
		if strings.Contains(l, "vendored") || strings.Contains(l, "hidden") || strings.Contains(l, "cache") || l == ".cuedeck/cards/moor01.md" {
			t.Errorf("should be left out: %q", l)
		}
	}
	if e := labels["docs/auth.md#Login Flow"]; e.Line != 3 || e.Kind != KindHeading {
		t.Errorf("heading entry %+v", e)
	}
	got := Filter(es, "login", 3)
	if len(got) == 0 || got[0].Label != "docs/auth.md#Login Flow" {
		t.Fatalf("filter login: %+v", got)
	}
	var b bytes.Buffer
	if n := List(&b, es, "zeppelin", 5); n != 1 || !strings.HasPrefix(b.String(), ".cuedeck/cards/moor01.md:1\t") {
		t.Fatalf("list: %d %q", n, b.String())
	}
}

func TestInteractiveTypeMoveChoose(t *testing.T) {
	es, _ := Entries(fixture())
	var out bytes.Buffer
	// Type "tok", backspace, "k" again, Down (no-op past the end), Enter.
	in := strings.NewReader("tok\x7fk\x1b[B\r")
	e, ok, err := Interactive(in, &out, es, "", 10)
	if err != nil || !ok || e.Label != "docs/auth.md#Tokens" || e.Line != 7 {
		t.Fatalf("chose %+v %v %v", e, ok, err)
	}
	// Esc alone cancels.
	if _, ok, _ := Interactive(strings.NewReader("\x1b"), &out, es, "auth", 10); ok {
		t.Fatal("Esc chose something")
	}
}
