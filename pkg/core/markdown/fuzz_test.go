package markdown

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"# A\n## B\ntext\n# C\n",
		"---\ntitle: x\ntags: [a, b]\n---\n# A\n",
		"---\na: [1\n---\nSetext\n===\n",
		"---\nnever closed\n",
		"```\n# code\n```\n## real\n[l](a.md#b) @doc/api#Login <https://x.y>\n",
		"\uFEFF---\r\na: !!timestamp 2024-01-01\r\n---\r\n# \xff\xfe\r\n",
		"> # quoted\n- # listed\n    # indented\n",
		"[r]\n\n[r]: x.md#y\n",
		"## Receivers {#receivers}\n## B {: #b .c}\nSetext {#s}\n---\n## R\n## {#}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		doc := Parse(src)
		lines := doc.Lines
		for i, h := range doc.Headings {
			if h.Level < 1 || h.Level > 6 {
				t.Fatalf("heading %d: level %d", i, h.Level)
			}
			if h.Line < 1 || h.Line > lines || h.EndLine < h.Line || h.EndLine > lines {
				t.Fatalf("heading %d: lines %d-%d outside 1-%d", i, h.Line, h.EndLine, lines)
			}
			if h.Parent >= i || h.Parent < -1 || h.Parent >= 0 && doc.Headings[h.Parent].Level >= h.Level {
				t.Fatalf("heading %d (level %d): bad parent %d", i, h.Level, h.Parent)
			}
			if i > 0 && h.Line <= doc.Headings[i-1].Line {
				t.Fatalf("heading %d at line %d is not after heading %d at %d", i, h.Line, i-1, doc.Headings[i-1].Line)
			}
			if h.Line < doc.BodyStart {
				t.Fatalf("heading %d at line %d is inside the frontmatter (body starts at %d)", i, h.Line, doc.BodyStart)
			}
			idx := FindHeading(doc, h.Slug)
			if h.Slug != "" && idx < 0 {
				t.Fatalf("heading %d: its slug %q finds nothing", i, h.Slug)
			}
			if _, start, end, ok := Section(src, doc, h.Text); ok && (start < 1 || end > lines || end < start-1) {
				t.Fatalf("Section(%q) = lines %d-%d of %d", h.Text, start, end, lines)
			}
		}
		for i, l := range doc.Links {
			if l.Line < 1 || l.Line > max(lines, 1) {
				t.Fatalf("link %d at line %d outside 1-%d", i, l.Line, lines)
			}
			if l.Kind != KindLink && l.Kind != KindExternal && l.Kind != KindRef {
				t.Fatalf("link %d: kind %q", i, l.Kind)
			}
		}
		if doc.BodyStart < 1 || doc.BodyStart > lines+1 {
			t.Fatalf("BodyStart %d outside 1-%d", doc.BodyStart, lines+1)
		}
		if e := doc.FrontmatterErr; e != nil {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("frontmatter error line %d outside 1-%d: %v", e.Line, lines, e)
			}
			if doc.Frontmatter != nil {
				t.Fatalf("frontmatter %v alongside error %v", doc.Frontmatter, e)
			}
		}
		if _, err := json.Marshal(doc.Frontmatter); err != nil {
			t.Fatalf("frontmatter %#v does not encode: %v", doc.Frontmatter, err)
		}
	})
}

func FuzzHeadingAttributes(f *testing.F) {
	for _, s := range []string{"A {#a}", "B {: #b .c k=v}", `C {t="x y"}`, "D {a, b}", "{}", "\\{#x}", "{#a#b}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, id, ok := HeadingAttributes(s)
		if !ok {
			if text != s || id != "" {
				t.Fatalf("HeadingAttributes(%q) = %q, %q, false; want s unchanged", s, text, id)
			}
			return
		}
		if !strings.HasPrefix(s, text) || len(text) >= len(s) {
			t.Fatalf("HeadingAttributes(%q): text %q is not a shorter prefix", s, text)
		}
		if strings.ContainsAny(id, " \t{}#\"'") {
			t.Fatalf("HeadingAttributes(%q): id %q holds a separator", s, id)
		}
	})
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Hello World", "API v2.0 (beta)!", "Ünïcödé", "\xff", "a  -_b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slug := Slug(s)
		if again := Slug(slug); again != slug {
			t.Fatalf("Slug(%q) = %q, but Slug(%q) = %q", s, slug, slug, again)
		}
	})
}
