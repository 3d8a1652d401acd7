package edge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/internal/tools"
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
