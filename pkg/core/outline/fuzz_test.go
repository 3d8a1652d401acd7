package outline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRender runs every kind's outline over arbitrary bytes: it must not
// panic, must give valid UTF-8, and must stay bounded.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"", "package a\nfunc F() {}\n", "func (", "type T struct {\n", "/* unclosed\nfunc F() {}",
		"export async function f(a: string): Promise<T> {\n  return g(`/x/${a}`)\n}\n",
		"class A {\n  m(x) { return x }\n}\n", "def f(:\n  \"\"\"doc", "class C:\n\tdef m(self):\n\t\tpass\n",
		"impl<'a> X<'a> {\n    fn f(&self) -> &'a str { \"}\" }\n}\n", "/** doc */\n@A\npublic class B {\n  public B() {}\n}\n",
		"---\ntitle: x\n---\n# H\n\ntext. more\n## I\n```\ncode\n", "}}}}{{{{", "\xff\xfe\x00", "// a\n// b\n",
	} {
		f.Add("a.go", []byte(s))
		f.Add("a.ts", []byte(s))
	}
	kinds := []string{"a.go", "a.md", "a.py", "a.ts", "a.rs", "A.java"}
	f.Fuzz(func(t *testing.T, name string, src []byte) {
		for _, k := range kinds {
			got, ok := Render(k, src)
			if !ok {
				t.Fatalf("%s not outlined", k)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("%s: invalid UTF-8 in %q", k, got)
			}
			if n := strings.Count(got, "\n"); n > MaxEntries+2 {
				t.Fatalf("%s: %d lines", k, n)
			}
		}
		_, _ = Render(name, src)
	})
}
