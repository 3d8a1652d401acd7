package outline

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

var update = flag.Bool("update", false, "rewrite testdata/*.outline from the fixtures")

// TestGolden outlines each hand-written fixture in testdata and compares
// with its .outline file; -update rewrites them (read the diff).
func TestGolden(t *testing.T) {
	fixtures := []string{"fetch.ts", "store.go", "broken.go.txt", "tasks.py", "lib.rs", "Service.java", "guide.md"}
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			// A fixture that gofmt must not read keeps a .txt suffix.
			got, ok := Render(strings.TrimSuffix(name, ".txt"), src)
			if !ok {
				t.Fatalf("Render(%s) not ok", name)
			}
			golden := filepath.Join("testdata", name+".outline")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("outline of %s differs from %s; got:\n%s", name, golden, got)
			}
		})
	}
}

// contains checks that the outline holds each of wants, in order.
func containsInOrder(t *testing.T, got string, wants ...string) {
	t.Helper()
	rest := got
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("outline lacks %q (after the previous expectations); got:\n%s", w, got)
			return
		}
		rest = rest[i+len(w):]
	}
}

func render(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	out, ok := Render(strings.TrimSuffix(name, ".txt"), src)
	if !ok {
		t.Fatalf("%s: not outlined", name)
	}
	return out
}

// The expectations below were written from the fixtures before the
// goldens: they pin what matters independently of layout details.

func TestGoDeclarations(t *testing.T) {
	got := render(t, "store.go")
	containsInOrder(t, got,
		"(go, 75 lines; bodies elided:",
		"package store — Package store keeps sessions in memory. … L2\n",
		"import errors, sync, time\n",
		"var ErrNotFound = errors.New(\"store: session not found\") — ErrNotFound is returned for an unknown session. … L11\n",
		"const (DefaultTTL, MaxEntries) — Default limits. … L14-17\n",
		"const version = 3 … L19\n",
		"type Store struct {mu, sessions, Clock} — Store maps session ids to sessions. … L22-26\n",
		"type Getter interface {Get, fmt.Stringer}",
		"type key[T comparable] struct {v} … L40\n",
		"func New() *Store — New returns an empty store. … L43-45\n",
		"func (s *Store) Get(id string) (Session, error) — Get returns the session with id, or ErrNotFound. … L48-56\n",
		// No doc comment: what the body shows.
		"func (s *Store) put(id string, sess Session) — calls s.mu.Lock, s.mu.Unlock … L58-62\n",
		"func (s *Store) len() int — len(s.sessions) (returns) … L64\n",
		"func prune(s *Store, now time.Time) — calls sess.Expires.Before; may panic … L66-75\n",
	)
}

func TestGoThatDoesNotParseFallsBack(t *testing.T) {
	got := render(t, "broken.go.txt")
	containsInOrder(t, got,
		"(go, 16 lines; did not parse, outlined by pattern; bodies elided:",
		"package broken — Package broken does not compile. … L2\n",
		"func Parse(s string) (int, error) — Parse reads a value. … L5-10\n",
		"type Thing struct … L12-14\n",
		"func (t Thing) Name() string — \"thing\" (returns) … L16\n",
	)
}

func TestSeedFetchUserData(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "fetch.ts"))
	if err != nil {
		t.Fatal(err)
	}
	got := render(t, "fetch.ts")
	containsInOrder(t, got,
		"export async function fetchUserData(userId: string): Promise<User> — calls fetch, response.json, console.error; uses \"/api/users/${userId}\"; throws Error, error … L1-13\n",
	)
	before, after := tokens.Count(string(src)), tokens.Count(got)
	// Seed 000 §5 calls the function 850 tokens and its compression 180;
	// by cl100k_base the function is far smaller than 850.
	t.Logf("seed fetchUserData: %d tokens whole, %d as outline (%.0f%%); seed 000 §5 says 850 → 180", before, after, 100*float64(after)/float64(before))
	if after >= before {
		t.Errorf("outline (%d tokens) is not smaller than the source (%d)", after, before)
	}
}

func TestHeuristicLanguages(t *testing.T) {
	containsInOrder(t, render(t, "tasks.py"),
		"class Task — Task is one unit of work. … L8-23\n",
		"  def __init__(self, name, payload) … L11-13\n",
		"  def key(self) — f\"task:{self.name}\" (returns) … L16-17\n",
		"  async def run(self, client) — calls client.post, json.loads; uses \"/api/tasks\"; throws RuntimeError … L19-23\n",
		"def load(path) — calls inner, open, Task, json.load … L26-31\n",
	)
	py := render(t, "tasks.py")
	if strings.Contains(py, "def inner") {
		t.Errorf("a function nested in a function is listed:\n%s", py)
	}
	containsInOrder(t, render(t, "lib.rs"),
		"pub struct Cache<'a> — Cache maps keys to values with a capacity. … L5-8\n",
		"pub const DEFAULT_CAP: usize = 128; … L10\n",
		"impl<'a> Cache<'a> … L12-22\n",
		"  pub fn new(cap: usize) -> Self — Creates an empty cache. … L14-16\n",
		"  pub fn get(&self, k: &str) -> Option<&String> — calls self.map.get … L19-21\n",
		"pub enum Mode { Fast, Safe } … L24\n",
		"fn helper(x: u32) -> u32 — calls x.wrapping_mul … L26-29\n",
	)
	containsInOrder(t, render(t, "Service.java"),
		"public class Service — Service answers user queries. … L9-26\n",
		"  public Service(Repo repo) … L12-14\n",
		"  public List<User> find(String name) — Finds users by name. … L18-23\n",
		"  private static int count(List<User> us) — us.size() (returns) … L25\n",
		"interface Repo … L28-30\n",
		"  List<User> query(String q); … L29\n",
	)
}

func TestMarkdownOutline(t *testing.T) {
	containsInOrder(t, render(t, "guide.md"),
		"(markdown, 30 lines)\n",
		"frontmatter: status: draft, tags, title: Auth guide … L1-5\n",
		"(preamble) — A short guide to signing in. … L6\n",
		"# Authentication — How users sign in. … L8-30\n",
		"## Login Flow — The client posts credentials to /login, e.g. with curl. … L12-18\n",
		"## OAuth Configuration — Configure the provider's client id and secret. … L20-28\n",
		"### Scopes … L25-28\n",
		"## Empty … L30\n",
	)
}

func TestUnknownKindIsNotOutlined(t *testing.T) {
	for _, p := range []string{"Makefile", "data.json", "a.txt", "image.png", ""} {
		if s, ok := Render(p, []byte("x")); ok || s != "" {
			t.Errorf("Render(%q) = %q, %v; want not outlined", p, s, ok)
		}
	}
}

func TestEmptyFiles(t *testing.T) {
	for _, p := range []string{"a.go", "a.md", "a.py", "a.ts", "a.rs", "A.java"} {
		got, ok := Render(p, nil)
		if !ok || strings.Count(got, "\n") != 1 || !strings.Contains(got, ", 0 lines") {
			t.Errorf("Render(%q, empty) = %q, %v; want a header line alone", p, got, ok)
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	bad := "\xff\xfe"
	cases := map[string]string{
		"a.go": "package a\n\n// F does " + bad + " things.\nfunc F() {}\n",
		"a.ts": "// Reads " + bad + ".\nexport function f" + bad + "() {\n  return 1\n}\n",
		"a.md": "# Title " + bad + "\n\nText " + bad + " here.\n",
		"a.py": "def f():\n    \"\"\"Doc " + bad + ".\"\"\"\n",
	}
	for p, src := range cases {
		got, _ := Render(p, []byte(src))
		if !utf8.ValidString(got) {
			t.Errorf("%s: outline is not valid UTF-8: %q", p, got)
		}
		if strings.Count(got, "\n") < 2 {
			t.Errorf("%s: no declaration found: %q", p, got)
		}
	}
	// Go with invalid UTF-8 does not parse; the patterns still find F.
	got, _ := Render("a.go", []byte(cases["a.go"]))
	if !strings.Contains(got, "did not parse") || !strings.Contains(got, "func F() — F does \uFFFD things. … L4") {
		t.Errorf("invalid UTF-8 Go: got %q", got)
	}
}

// hugeGo is a generated Go file of n functions.
func hugeGo(n int) []byte {
	var b bytes.Buffer
	b.WriteString("package huge\n")
	for i := range n {
		b.WriteString("\n// F does one thing.\nfunc F")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("(a int) int {\n\treturn a + 1\n}\n")
	}
	return b.Bytes()
}

func TestHugeFilesAreBounded(t *testing.T) {
	for _, c := range []struct {
		name string
		src  []byte
	}{
		{"huge.go", hugeGo(20_000)},
		{"huge.ts", bytes.Repeat([]byte("export function f(a: number): number {\n  return g(a)\n}\n"), 20_000)},
		{"huge.py", bytes.Repeat([]byte("def f(a):\n    return g(a)\n"), 20_000)},
		{"huge.md", bytes.Repeat([]byte("## Part\n\nSome text. More.\n\n"), 20_000)},
		{"long.ts", []byte("export function f(" + strings.Repeat("a, ", 100_000) + ") {}\n")},
		{"deep.ts", []byte(strings.Repeat("{", 100_000) + strings.Repeat("}", 100_000))},
	} {
		got, _ := Render(c.name, c.src)
		lines := strings.Count(got, "\n")
		if lines > MaxEntries+2 {
			t.Errorf("%s: %d lines of outline, want at most %d", c.name, lines, MaxEntries+2)
		}
		if len(got) > (MaxEntries+2)*(maxSignature+maxSummary+40)*4 {
			t.Errorf("%s: outline is %d bytes", c.name, len(got))
		}
		if strings.Count(c.name, "huge") > 0 && !strings.Contains(got, "more not shown") {
			t.Errorf("%s: no count of the entries left out:\n%.300s", c.name, got)
		}
	}
}

func TestFirstSentence(t *testing.T) {
	for in, want := range map[string]string{
		"Get returns a value. It may fail.": "Get returns a value.",
		"Use e.g. a map. Or not.":           "Use e.g. a map.",
		"Version 1.2 is out. Really.":       "Version 1.2 is out.",
		"Signed by J. Smith today. Then.":   "Signed by J. Smith today.",
		"No end":                            "No end",
		"What? Yes.":                        "What?",
		"  spaced\n  over\tlines. Second":   "spaced over lines.",
	} {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// A section outlines with the file's line numbers.
func TestRenderFromShiftsLines(t *testing.T) {
	section := "## Login Flow\n\nThe client posts credentials.\n\n### Tokens\n\nThey expire.\n"
	got, ok := RenderFrom("docs/auth.md", []byte(section), 5)
	if !ok {
		t.Fatal("not outlined")
	}
	want := "outline of docs/auth.md L5-11 (markdown, 7 lines)\n" +
		"## Login Flow — The client posts credentials. … L5-11\n" +
		"### Tokens — They expire. … L9-11\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
