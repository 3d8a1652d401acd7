package bench

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/card"
)

// tree hashes every file under root by its slash path.
func tree(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateIsDeterministicFromTheSeed(t *testing.T) {
	a, b, other := t.TempDir(), t.TempDir(), t.TempDir()
	ca, err := Generate(a, 300, 42)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := Generate(b, 300, 42)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(other, 300, 43); err != nil {
		t.Fatal(err)
	}
	ta, tb, to := tree(t, a), tree(t, b), tree(t, other)
	if len(ta) != 300 {
		t.Fatalf("%d files on disk, want 300", len(ta))
	}
	for p, h := range ta {
		if tb[p] != h {
			t.Fatalf("%s differs between two runs with seed 42", p)
		}
	}
	if !slices.Equal(ca.Queries, cb.Queries) || ca.Active != cb.Active || ca.Bytes != cb.Bytes {
		t.Fatalf("corpus descriptions differ: %+v / %+v", ca.Queries, cb.Queries)
	}
	same := 0
	for p, h := range to {
		if ta[p] == h {
			same++
		}
	}
	if same > 1 { // rules.md is the same whatever the seed
		t.Fatalf("%d files alike with seeds 42 and 43", same)
	}
}

var markerRE = regexp.MustCompile(`zq[a-z]+x\b`)

func TestGeneratedCorpusIsRealistic(t *testing.T) {
	root := t.TempDir()
	c, err := Generate(root, 400, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 400 {
		t.Fatalf("%d files described, want 400", len(c.Files))
	}
	for _, kind := range []string{KindMarkdown, KindGo, KindPython, KindTypeScript, KindCard} {
		if c.CountKind(kind) == 0 {
			t.Errorf("no %s files", kind)
		}
	}
	// Each marker is in its own file and no other: a keyword search for
	// it must find exactly that file.
	owner := map[string]string{}
	for _, f := range c.Files {
		if f.Marker != "" {
			owner[f.Marker] = f.Path
		}
	}
	links, refs, actives := 0, 0, 0
	linkRE := regexp.MustCompile(`\]\(([^)#]+)#`)
	refRE := regexp.MustCompile(`@(docs/[^#\s]+)#`)
	for _, f := range c.Files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != f.Bytes {
			t.Errorf("%s: %d bytes on disk, %d described", f.Path, len(b), f.Bytes)
		}
		for _, m := range markerRE.FindAllString(string(b), -1) {
			if owner[m] != f.Path {
				t.Errorf("marker %s of %q appears in %s", m, owner[m], f.Path)
			}
		}
		if f.Marker != "" && !strings.Contains(string(b), f.Marker) {
			t.Errorf("%s lacks its marker %s", f.Path, f.Marker)
		}
		if f.Heading != "" && !strings.Contains(string(b), "\n## "+f.Heading+"\n") {
			t.Errorf("%s lacks its heading %q", f.Path, f.Heading)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(b), -1) {
			links++
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path.Join(path.Dir(f.Path), m[1])))); err != nil {
				t.Errorf("%s links to a missing %s", f.Path, m[1])
			}
		}
		if f.Kind != KindCard {
			continue
		}
		cd, err := card.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if card.Path(cd.Task.ID) != f.Path {
			t.Errorf("card %s stored at %s", cd.Task.ID, f.Path)
		}
		if cd.Task.Status == "active" {
			actives++
			if cd.Task.ID != c.Active {
				t.Errorf("active card %s, corpus says %s", cd.Task.ID, c.Active)
			}
		}
		for _, d := range cd.Task.DependsOn {
			if !slices.Contains(c.Cards, d) {
				t.Errorf("card %s depends on unknown %s", cd.Task.ID, d)
			}
		}
		for _, m := range refRE.FindAllStringSubmatch(cd.Body, -1) {
			refs++
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m[1]))); err != nil {
				t.Errorf("card %s references a missing %s", cd.Task.ID, m[1])
			}
		}
	}
	if actives != 1 || links == 0 || refs == 0 {
		t.Errorf("%d active cards, %d links between docs, %d card references", actives, links, refs)
	}
	if len(c.Queries) == 0 {
		t.Error("no queries")
	}
}

func TestGenerateRefusesATinyCorpus(t *testing.T) {
	if _, err := Generate(t.TempDir(), 10, 1); err == nil || !strings.Contains(err.Error(), "at least 50") {
		t.Fatalf("Generate 10 files: %v", err)
	}
}
