package edge

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestSymlinksOutOfTheRepoNeverReachAnAgent runs the real ingest and
// indexer over a repository whose symlinks lead out of it (to a file, to a
// directory, to /etc/passwd) and asks the edge for what is behind them:
// every answer is 1001 without the content, search never finds it, and
// traversal paths are refused before any lookup.
func TestSymlinksOutOfTheRepoNeverReachAnAgent(t *testing.T) {
	const secret = "TOPSECRET-behind-the-link"
	outside := t.TempDir()
	root := t.TempDir()
	for p, content := range map[string]string{
		filepath.Join(outside, "secret.md"):           "# Secret\n\n" + secret + "\n",
		filepath.Join(outside, "private", "notes.md"): "# Notes\n\n" + secret + "\n",
		filepath.Join(root, "docs", "guide.md"):       "# Guide\n\nHow to moor a zeppelin.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"docs/escape.md":   filepath.Join(outside, "secret.md"),
		"docs/relative.md": "../../" + filepath.Base(outside) + "/secret.md",
		"docs/private":     filepath.Join(outside, "private"),
		"docs/passwd.md":   "/etc/passwd",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}

	conn, _ := bustest.Start(t, bus.Settings{})
	ing, err := ingest.New(conn, ingest.Config{Repos: []ingest.RepoConfig{{Name: "app", Root: root}}, StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bustest.Run(t, "ingest", ing.Run)
	bustest.Run(t, "indexer", indexer.New(conn, indexer.Config{}, nil).Run)
	r := harnessOn(t, conn).start("")

	bustest.Eventually(t, 30*time.Second, "the repo indexed and the escaping links seen", func() bool {
		st := r.m.Status()
		return st.Skipped >= 3 && len(r.search(map[string]any{"query": "zeppelin", "mode": "keyword"})) == 1
	})

	for _, p := range []string{"docs/escape.md", "docs/relative.md", "docs/passwd.md", "docs/private/notes.md", "app/docs/private/notes.md"} {
		out, err := r.call(tools.ReadDoc, map[string]any{"path": p})
		var te *tools.Error
		if !errors.As(err, &te) || te.Code != tools.CodeFileNotFound {
			t.Errorf("read_doc %s: %s, %v; want 1001", p, out, err)
			continue
		}
		if strings.Contains(te.Error(), secret) || strings.Contains(te.Error(), "root:") || strings.Contains(te.Error(), outside) {
			t.Errorf("read_doc %s revealed content or where the link leads: %v", p, te)
		}
		t.Logf("%s: %v", p, te)
	}
	for _, p := range []string{"docs/../../etc/passwd.md", "docs/private/../../../" + filepath.Base(outside) + "/secret.md", "/etc/passwd.md"} {
		te := r.readErr(map[string]any{"path": p})
		if te.Code != tools.CodeInvalidParams || strings.Contains(te.Error(), secret) {
			t.Errorf("read_doc %s: %v; want -32602", p, te)
		}
	}
	for _, mode := range []string{"keyword", "hybrid"} {
		if hits := r.search(map[string]any{"query": secret, "mode": mode}); len(hits) != 0 {
			t.Errorf("%s search found what is behind a link: %v", mode, paths(hits))
		}
	}
}

// TestEveryPathReadContextReturnsOpens runs the real ingest and indexer
// over a repository of docs, Go code, YAML under .github, a task card and
// a binary file, and checks that every path read_context returns opens
// with read_doc, and so do its anchors and its best section's heading;
// the binary file answers 1001 File Not Indexed.
func TestEveryPathReadContextReturnsOpens(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"docs/guide.md": "# Guide\n\n## Receivers {#receivers}\n\nReceivers accept zeppelin telemetry.\n\n## Exporters\n\nExporters ship zeppelin telemetry out.\n",
		"cmd/daemon/main.go": "package main\n\nimport \"os\"\n\n// Config holds the zeppelin daemon's settings.\ntype Config struct{ Dir string }\n\n" +
			"// makeShutdownCh closes on the zeppelin's interrupt.\nfunc makeShutdownCh() chan os.Signal { return make(chan os.Signal) }\n\n" +
			"// Search finds zeppelin moorings.\nfunc (c *Config) Search(q string) string { return q }\n\nfunc main() {}\n",
		".github/workflows/ci.yml": "name: zeppelin ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n",
		".github/CONTRIBUTING.md":  "# Contributing\n\nMoor the zeppelin before you push.\n",
		".cuedeck/cards/zep123.md": "---\nid: zep123\ntitle: Moor the zeppelin\nstatus: todo\n---\n# Moor the zeppelin\n\n## Acceptance\n\nThe zeppelin stays moored.\n",
		"assets/zeppelin.png":      "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR zeppelin",
	}
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conn, _ := bustest.Start(t, bus.Settings{})
	ing, err := ingest.New(conn, ingest.Config{Repos: []ingest.RepoConfig{{Name: "app", Root: root}}, StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bustest.Run(t, "ingest", ing.Run)
	bustest.Run(t, "indexer", indexer.New(conn, indexer.Config{}, nil).Run)
	r := harnessOn(t, conn).start("")

	text := []string{"docs/guide.md", "cmd/daemon/main.go", ".github/workflows/ci.yml", ".github/CONTRIBUTING.md", ".cuedeck/cards/zep123.md"}
	var hits []tools.ContextHit
	bustest.Eventually(t, 30*time.Second, "every text file found by read_context and the binary one seen", func() bool {
		hits = r.search(map[string]any{"query": "zeppelin", "mode": "keyword", "limit": 50})
		found := paths(hits)
		slices.Sort(found)
		want := slices.Sorted(slices.Values(text))
		return slices.Equal(found, want) && r.m.Status().Skipped == 1
	})
	for _, hit := range hits {
		res := r.read(map[string]any{"path": hit.Path})
		if res.Content != strings.TrimSpace(files[hit.Path]) || res.Hash != events.SHA256Hex([]byte(res.Content)) {
			t.Errorf("read_doc %s: %+v", hit.Path, res)
		}
		anchors := slices.Clone(hit.Anchors)
		if hit.Section != nil && hit.Section.Heading != "" {
			anchors = append(anchors, hit.Section.Heading)
		}
		for _, a := range anchors {
			out, err := r.call(tools.ReadDoc, map[string]any{"path": hit.Path, "anchor": a})
			if err != nil {
				t.Errorf("read_doc %s anchor %q (from read_context): %v", hit.Path, a, err)
				continue
			}
			if strings.Contains(a, "{#") {
				t.Errorf("%s: anchor %q shows the attribute block", hit.Path, a)
			}
			t.Logf("%s #%s: %.60q", hit.Path, a, out)
		}
	}
	if want := []string{"Config", "makeShutdownCh", "main"}; !slices.Equal(hitOf(hits, "cmd/daemon/main.go").Anchors, want) {
		t.Errorf("Go anchors %q, want %q", hitOf(hits, "cmd/daemon/main.go").Anchors, want)
	}
	if want := []string{"Guide", "Receivers", "Exporters"}; !slices.Equal(hitOf(hits, "docs/guide.md").Anchors, want) {
		t.Errorf("markdown anchors %q, want %q", hitOf(hits, "docs/guide.md").Anchors, want)
	}
	te := r.readErr(map[string]any{"path": "assets/zeppelin.png"})
	if te.Code != tools.CodeFileNotFound || te.Message != "File Not Indexed" || te.Data["reason"] != string(events.SkipBinary) {
		t.Errorf("binary file: %v", te)
	}
}

func hitOf(hits []tools.ContextHit, path string) tools.ContextHit {
	for _, h := range hits {
		if h.Path == path {
			return h
		}
	}
	return tools.ContextHit{}
}
