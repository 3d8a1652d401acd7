package search

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func collect(s string) []string {
	var out []string
	var buf []byte
	eachToken(s, &buf, func(t string, scratch []byte, joined bool) {
		if scratch != nil {
			t = string(scratch)
		}
		if joined || !stopwords[t] {
			out = append(out, t)
		}
	})
	return out
}

// The ASCII fast path of eachToken yields exactly Tokenize's tokens.
func TestEachTokenIsTokenize(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "b", "Z", "Q", "x", "1", "9", "_", "-", " ", ".", "/", "é", "Ω", "\u0301", "ß", "\xff", "HTTP", "Server", "readContext", "IDs", "the", "of", "to", "XMLHttp", "base64Encode", "__init__"}
	for i := range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		if got, want := collect(s), Tokenize(s); !slices.Equal(got, want) {
			t.Fatalf("text %d %q: eachToken %q, Tokenize %q", i, s, got, want)
		}
	}
	long := strings.Repeat("aB", 40) + "-x_y" // more parts than the fast path holds
	if got, want := collect(long), Tokenize(long); !slices.Equal(got, want) {
		t.Fatalf("%q: eachToken %q, Tokenize %q", long, got, want)
	}
}

func TestEachTokenIsTokenizeOnSource(t *testing.T) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("no Go source tree at %s: %v", root, err)
	}
	files := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || files >= 100 || len(p)%41 != 0 {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files++
		if got, want := collect(string(data)), Tokenize(string(data)); !slices.Equal(got, want) {
			t.Fatalf("%s: eachToken and Tokenize differ", p)
		}
		return nil
	})
	if files < 20 {
		t.Fatalf("only %d files compared", files)
	}
}

func FuzzEachTokenIsTokenize(f *testing.F) {
	for _, s := range []string{"readContext", "HTTPServer", "a_b-C", "IDs URLs", "é-x", "the_of"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := collect(s), Tokenize(s); !slices.Equal(got, want) {
			t.Fatalf("%q: eachToken %q, Tokenize %q", s, got, want)
		}
	})
}

// analyzeFields counts, per field, exactly the words of Tokenize's
// tokens (compared here by their stems, as Upsert gathers them): stopwords out once per word, a compound's joined parts in even
// when they spell one ("i-t" is "it"), whatever came first.
func TestAnalyzeFieldsCountsTokenize(t *testing.T) {
	for _, body := range []string{
		"it i-t it I_T the of-the running runs",
		"i-t then it",
		"it then i-t",
		strings.Repeat("readContext of HTTPServer the_of é-x ", 3),
	} {
		a := analyzeFields(Fields{Path: "docs/i-t.md", Body: body})
		got := map[string][numFields]uint16{}
		for k, w := range a.wordList {
			tf := got[stem(w)]
			for f, n := range a.wordTF[k] {
				tf[f] += n
			}
			got[stem(w)] = tf
		}
		a.release()
		want := map[string][numFields]uint16{}
		for f, text := range map[int]string{fieldPath: "docs/i-t.md", fieldBody: body} {
			for _, tok := range Tokenize(text) {
				tf := want[stem(tok)]
				tf[f]++
				want[stem(tok)] = tf
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: analyzed %v, Tokenize gives %v", body, got, want)
		}
	}
}
