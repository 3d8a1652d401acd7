package doctor

import (
	"context"
	"fmt"
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
	rep.Print(&out, PrintOptions{})
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
		rep.Print(&out, PrintOptions{})
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

// hugoSite is a Hugo site under content/en whose pages link the way
// Hugo's do: site-absolute URLs, page-relative URLs, a section's
// _index.md, a leaf bundle's index.md with an image, an ugly .html URL;
// one link leads nowhere and one anchor is missing.
func hugoSite(t *testing.T, config string) *workspace.Workspace {
	dir := t.TempDir()
	files := map[string]string{
		"content/en/_index.md": "# Home\n\n" +
			"[docs](/docs/) [install](/docs/install/#requirements) [guide](/docs/guide)\n" +
			"[bundle](/docs/bundle/) [diagram](/docs/bundle/diagram.png) [ugly](/docs/install.html)\n" +
			"[gone](/docs/missing/) [no such heading](/docs/install/#nope)\n",
		"content/en/docs/_index.md":          "# Docs\n\nStart with [the guide](guide/) or [install](install/#requirements).\n",
		"content/en/docs/install.md":         "# Install\n\n## Requirements\n\nGo.\n",
		"content/en/docs/guide.md":           "# Guide\n\nBack to [install](../install/#requirements); see [the diagram](../bundle/diagram.png).\n",
		"content/en/docs/bundle/index.md":    "# Bundle\n\n[diagram](diagram.png)\n",
		"content/en/docs/bundle/diagram.png": "PNG",
	}
	if config != "" {
		files[".cuedeck/config.toml"] = config
	}
	writeFiles(t, dir, files)
	return &workspace.Workspace{Root: dir}
}

func TestSiteRootResolvesHugoLinks(t *testing.T) {
	rep, err := Run(context.Background(), hugoSite(t, "[docs]\nsite_root = \"content/en\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		if f.Severity != Note {
			got = append(got, f.Check+" "+f.File+":"+itoa(f.Line)+" "+f.Msg)
		}
	}
	want := []string{
		`link content/en/_index.md:5 dead link: /docs/missing/ is no page under content/en (nor a workspace path)`,
		`anchor content/en/_index.md:5 dead anchor: content/en/docs/install.md has no heading "nope"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rep.Errors() != 2 {
		t.Errorf("Errors() = %d, want 2", rep.Errors())
	}
}

func TestSiteAbsoluteLinksWithoutSiteRootAreCountedApart(t *testing.T) {
	rep, err := Run(context.Background(), hugoSite(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, f := range rep.Findings {
		kinds[f.Check+" "+f.Severity.String()]++
	}
	// The eight site-absolute links of the home page are not checked; the
	// guide's page-relative ones are dead as files.
	if kinds["site-absolute warning"] != 8 || kinds["link error"] != 2 || rep.Errors() != 2 {
		t.Errorf("kinds = %v, errors %d", kinds, rep.Errors())
	}
	var out strings.Builder
	rep.Print(&out, PrintOptions{})
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"warning[site-absolute]: site-absolute link /docs/ not checked: set [docs] site_root in .cuedeck/config.toml",
		"... and 5 more site-absolute links not checked (cue doctor --all shows every one)",
		"site-absolute links not checked 8 warnings set [docs] site_root in .cuedeck/config.toml to check them",
		"dead links 2 errors",
		"5 markdown files checked: 2 errors, 8 warnings",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSiteRootThatIsNoDirectory(t *testing.T) {
	rep, err := Run(context.Background(), hugoSite(t, "[docs]\nsite_root = \"content/fr\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 || rep.Findings[0].Check != CheckConfig || rep.Findings[0].Line != 2 ||
		!strings.Contains(rep.Findings[0].Msg, `site_root "content/fr" is not a directory`) {
		t.Errorf("first finding %+v, want the config error on line 2", rep.Findings[0])
	}
}

// TestSummaryByKind: many findings of a kind show the first few and a
// count of the rest, --all shows them all, and the summary counts every
// kind; the exit status (Errors) counts errors only.
func TestSummaryByKind(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"docs/target.md": "# Target\n"}
	for i := range 10 {
		files[fmt.Sprintf("docs/p%02d.md", i)] = fmt.Sprintf("# P%d\n\n[gone](missing%d.md) [bad](target.md#nope%d) [site](/blog/post-%d/)\n", i, i, i, i)
	}
	writeFiles(t, dir, files)
	rep, err := Run(context.Background(), &workspace.Workspace{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors() != 20 {
		t.Errorf("Errors() = %d, want 20 (the site-absolute links are warnings)", rep.Errors())
	}
	var out strings.Builder
	rep.Print(&out, PrintOptions{})
	text := out.String()
	if n := strings.Count(text, "error[link]"); n != 3 {
		t.Errorf("%d dead links printed, want the first 3:\n%s", n, text)
	}
	norm := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{
		"... and 7 more dead links (cue doctor --all shows every one)",
		"... and 7 more dead anchors",
		"summary dead links 10 errors dead anchors 10 errors site-absolute links not checked 10 warnings",
		"11 markdown files checked: 20 errors, 10 warnings",
	} {
		if !strings.Contains(norm, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	// Errors come first, the dead links of the first files first.
	if i, j := strings.Index(text, "error[link]: dead link: missing0.md"), strings.Index(text, "warning[site-absolute]"); i < 0 || j < i {
		t.Errorf("order:\n%s", text)
	}

	out.Reset()
	rep.Print(&out, PrintOptions{All: true})
	if n := strings.Count(out.String(), "error[link]"); n != 10 || strings.Contains(out.String(), "more dead links") {
		t.Errorf("--all printed %d dead links:\n%s", n, out.String())
	}
}
