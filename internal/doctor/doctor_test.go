package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/workspace"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Seeded is a workspace with one broken frontmatter, one dead link, one
// dead anchor and one cycle among cards.
func seeded(t *testing.T) *workspace.Workspace {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".cuedeck/cards/a.md":   "---\nid: a\ntitle: A\nstatus: active\ndepends_on: [b]\n---\n\nSee [the guide](../../docs/guide.md) and @docs/api.md#Login.\n",
		".cuedeck/cards/b.md":   "---\nid: b\ntitle: B\nstatus: todo\ndepends_on: [a]\n---\n\nB.\n",
		".cuedeck/cards/bad.md": "---\nid: bad\ntitle: oops: colon\nstatus: todo\n---\n\nBroken.\n",
		"docs/api.md":           "# API\n\n## Logout\n\nbye\n",
		"docs/ok.md":            "# OK\n\nSee [api](api.md#logout) and [self](#ok).\n",
	})
	return &workspace.Workspace{Root: dir}
}

func TestRunFindsEveryProblemWithItsLocation(t *testing.T) {
	rep, err := Run(context.Background(), seeded(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"frontmatter": ".cuedeck/cards/bad.md:3",
		"link":        ".cuedeck/cards/a.md:8",
		"anchor":      ".cuedeck/cards/a.md:8",
		"cycle":       ".cuedeck/cards/a.md:5",
	}
	got := map[string]Finding{}
	for _, f := range rep.Findings {
		if f.Severity == Error {
			if _, dup := got[f.Check]; dup {
				t.Errorf("second %s finding: %+v", f.Check, f)
			}
			got[f.Check] = f
		}
	}
	for check, loc := range want {
		f, ok := got[check]
		if !ok {
			t.Errorf("no %s finding", check)
			continue
		}
		if l := f.File + ":" + itoa(f.Line); l != loc {
			t.Errorf("%s at %s, want %s (%s)", check, l, loc, f.Msg)
		}
		if f.Col == 0 || f.Source == "" {
			t.Errorf("%s has no column or source line: %+v", check, f)
		}
	}
	if len(got) != len(want) {
		t.Errorf("errors = %v, want exactly %v", got, want)
	}
	if rep.Errors() != 4 {
		t.Errorf("Errors() = %d, want 4", rep.Errors())
	}
	if !strings.Contains(got["cycle"].Msg, "a -> b -> a") {
		t.Errorf("cycle message %q lacks the path", got["cycle"].Msg)
	}
	// The frontmatter caret sits under the second colon.
	if f := got["frontmatter"]; f.Col != strings.LastIndex(f.Source, ":")+1 {
		t.Errorf("frontmatter column %d in %q", f.Col, f.Source)
	}

	var out strings.Builder
	rep.Print(&out, false)
	text := out.String()
	for _, s := range []string{"--> .cuedeck/cards/bad.md:3:", "title: oops: colon", "^", "4 errors", "no daemon runs"} {
		if !strings.Contains(text, s) {
			t.Errorf("report lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "\x1b[") {
		t.Errorf("uncoloured report has escape codes")
	}
}

func TestRunCleanWorkspace(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".cuedeck/cards/a.md": "---\nid: a\ntitle: A\nstatus: active\n---\n\nSee @docs/api.md#Login.\n",
		"docs/api.md":         "# API\n\n## Login\n\nhi\n",
	})
	rep, err := Run(context.Background(), &workspace.Workspace{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors() != 0 {
		var out strings.Builder
		rep.Print(&out, false)
		t.Errorf("clean workspace has errors:\n%s", out.String())
	}
}

func TestConfigSyntax(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".cuedeck/config.toml": "[workspace]\nname = \"x\n"})
	rep, err := Run(context.Background(), &workspace.Workspace{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 || rep.Findings[0].Check != "config" || rep.Findings[0].Line != 2 {
		t.Errorf("findings = %+v, want a config error on line 2", rep.Findings)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
