package ingest

import (
	"strings"
	"testing"
)

func TestIgnoreRules(t *testing.T) {
	ir := newIgnoreRules(DefaultExclude)
	ir.setInfoExclude([]byte("local-only.md\n"))
	ir.setDir("", []byte("# comment\n*.log\n!keep.log\n/rooted.txt\nbuild/\ndocs/**/draft-*.md\nnode_modules\n"))
	ir.setDir("sub", []byte("secret.txt\n!local-only.md\r\n"))
	cases := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.md", false, false},
		{"x.log", false, true},
		{"deep/down/x.log", false, true},
		{"keep.log", false, false},
		{"rooted.txt", false, true},
		{"sub/rooted.txt", false, false},
		{"build", true, true},
		{"build", false, false}, // a file named build is not the directory pattern
		{"build/out.txt", false, true},
		{"src/build/out.txt", false, true},
		{"docs/a/b/draft-1.md", false, true},
		{"docs/final.md", false, false},
		{"sub/secret.txt", false, true},
		{"secret.txt", false, false}, // sub's rules stay in sub
		{"local-only.md", false, true},
		{"sub/local-only.md", false, false}, // re-included by the deeper .gitignore
		{".git", true, true},
		{".git", false, true}, // a worktree's .git file
		{".git/config", false, true},
		{"node_modules/a/b.js", false, true},
		{"vendor/x.go", false, true},
		{".cuedeck/.cache/db", false, true},
		{".cuedeck/cards/c.md", false, false},
	}
	for _, c := range cases {
		if got := ir.ignored(c.path, c.isDir); got != c.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", c.path, c.isDir, got, c.want)
		}
	}

	// Configured excludes win over a .gitignore re-inclusion.
	ir.setDir("", []byte("!vendor/\n"))
	if !ir.ignored("vendor/x.go", false) {
		t.Error("a .gitignore re-included a configured exclude")
	}
	// Forgetting a directory's rules.
	ir.retainDirs(map[string]bool{"": true})
	if ir.ignored("sub/secret.txt", false) {
		t.Error("rules of a directory no longer walked still apply")
	}
}

// The workspace config and the rendered scene are never published, even
// when the configured excludes are emptied or try to re-include them.
func TestWorkspaceConfigNeverPublished(t *testing.T) {
	for _, exclude := range [][]string{nil, {}, {"!.cuedeck/config.toml", "!.cuedeck/SCENE.md"}} {
		c := Config{Exclude: exclude}
		c.setDefaults()
		ir := newIgnoreRules(c.Exclude)
		ir.setDir("", []byte("!.cuedeck/config.toml\n!.cuedeck/SCENE.md\n"))
		for _, p := range []string{".cuedeck/config.toml", ".cuedeck/SCENE.md"} {
			if !ir.ignored(p, false) {
				t.Errorf("exclude %q: %s would be published", exclude, p)
			}
		}
		if ir.ignored(".cuedeck/docs/SCENE.md", false) || ir.ignored("SCENE.md", false) {
			t.Errorf("exclude %q: a SCENE.md elsewhere would not be published", exclude)
		}
		if ir.ignored(".cuedeck/cards/c.md", false) {
			t.Errorf("exclude %q: a task card would not be published", exclude)
		}
	}
}

func TestLooksBinary(t *testing.T) {
	cases := []struct {
		name   string
		data   string
		binary bool
	}{
		{"empty", "", false},
		{"text", "hello\n\tworld\r\n", false},
		{"utf8", "naïve — ü 日本語", false},
		{"ansi colours", "\x1b[31mred\x1b[0m\n", false},
		{"latin1", "caf\xe9 cr\xe8me br\xfbl\xe9e, a Latin-1 menu\n", false},
		{"nul", "abc\x00def", true},
		{"control soup", strings.Repeat("\x01\x02\x03a", 50), true},
		{"random high bytes", strings.Repeat("\xfe\x81\xc3\x28", 50), true},
		{"nul after sniff window", strings.Repeat("a", sniffLen) + "\x00", false},
		{"rune cut at sniff window", strings.Repeat("a", sniffLen-1) + "é" + strings.Repeat("b", 10), false},
	}
	for _, c := range cases {
		detail, binary := looksBinary([]byte(c.data))
		if binary != c.binary {
			t.Errorf("%s: binary = %v (%s), want %v", c.name, binary, detail, c.binary)
		}
		if binary && detail == "" {
			t.Errorf("%s: no detail", c.name)
		}
	}
}

func TestFitsInline(t *testing.T) {
	const max = 1 << 20
	if !fitsInline([]byte(strings.Repeat("a", 256<<10)), max) {
		t.Error("256 KiB of plain text should fit in 1 MiB")
	}
	if fitsInline([]byte(strings.Repeat("<", 256<<10)), max) {
		t.Error("256 KiB of '<' escapes to 1.5 MiB and should not fit")
	}
}
