package delta

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// roundTrip checks Apply(old, Diff(old, new)) == new and that the delta is
// well formed: hunks cover the old lines in order, unchanged runs are not
// adjacent, and replacements really change something.
func roundTrip(t *testing.T, old, new string) Delta {
	t.Helper()
	d := Diff(old, new)
	got, err := Apply(old, d)
	if err != nil {
		t.Fatalf("Apply(%q, Diff(…, %q)): %v\nhunks %+v", old, new, err, d.Hunks)
	}
	if got != new {
		t.Fatalf("Apply(%q, Diff) = %q, want %q\nhunks %+v", old, got, new, d.Hunks)
	}
	for i, h := range d.Hunks {
		if i > 0 && h.Unchanged > 0 && d.Hunks[i-1].Unchanged > 0 {
			t.Fatalf("adjacent unchanged runs at %d: %+v", i, d.Hunks)
		}
		if i > 0 && h.Unchanged == 0 && d.Hunks[i-1].Unchanged == 0 {
			t.Fatalf("adjacent replacements at %d: %+v", i, d.Hunks)
		}
		if h.Unchanged == 0 && h.End-h.Start+1 == len(h.Lines) {
			same := true
			for k, l := range h.Lines {
				if Lines(old)[h.Start-1+k] != l {
					same = false
				}
			}
			if same {
				t.Fatalf("hunk %d replaces lines with themselves: %+v", i, h)
			}
		}
	}
	if (old != new) != d.Changed() {
		t.Fatalf("Changed() = %v for old %q new %q", d.Changed(), old, new)
	}
	return d
}

func TestDiffExamples(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           []Hunk
	}{
		{"equal", "a\nb\n", "a\nb\n", []Hunk{{Unchanged: 3}}},
		{"both empty", "", "", []Hunk{{Unchanged: 1}}},
		{"replace one", "a\nb\nc", "a\nB\nc", []Hunk{{Unchanged: 1}, {Start: 2, End: 2, Lines: []string{"B"}}, {Unchanged: 1}}},
		{"insert at start", "b\nc", "a\nb\nc", []Hunk{{Start: 1, End: 0, Lines: []string{"a"}}, {Unchanged: 2}}},
		{"append after newline", "a\n", "a\nb\n", []Hunk{{Unchanged: 1}, {Start: 2, End: 1, Lines: []string{"b"}}, {Unchanged: 1}}},
		{"delete middle", "a\nb\nc\nd", "a\nd", []Hunk{{Unchanged: 1}, {Start: 2, End: 3}, {Unchanged: 1}}},
		{"drop trailing newline", "a\nb\n", "a\nb", []Hunk{{Unchanged: 2}, {Start: 3, End: 3}}},
		{"crlf to lf", "a\r\nb\r\n", "a\nb\r\n", []Hunk{{Start: 1, End: 1, Lines: []string{"a"}}, {Unchanged: 2}}},
		{"from empty", "", "x\ny", []Hunk{{Start: 1, End: 1, Lines: []string{"x", "y"}}}},
		{"to empty", "x\ny", "", []Hunk{{Start: 1, End: 2, Lines: []string{""}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := roundTrip(t, c.old, c.new)
			if !reflect.DeepEqual(d.Hunks, c.want) {
				t.Fatalf("hunks %+v, want %+v", d.Hunks, c.want)
			}
		})
	}
}

// TestDiffKeepsMovedBlockAnchoredOnUniqueLines: patience aligns on the
// lines unique to both sides, so a function moved below another is one
// deletion and one insertion, and the unique lines between stay matched.
func TestDiffKeepsUniqueLinesAligned(t *testing.T) {
	old := "func a() {\n}\n\nfunc b() {\n}\n\nfunc c() {\n}\n"
	new := "func a() {\n}\n\nfunc c() {\n}\n\nfunc b() {\n}\n"
	d := roundTrip(t, old, new)
	kept := 0
	for _, h := range d.Hunks {
		kept += h.Unchanged
	}
	if kept < 7 {
		t.Fatalf("only %d of 10 lines kept: %s", kept, d.Text())
	}
}

func TestHunkJSON(t *testing.T) {
	d := Diff("a\nb\nc", "x\na\nc")
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hunks":[{"start":1,"end":0,"lines":["x"]},{"unchanged":1},{"start":2,"end":2,"lines":[]},{"unchanged":1}]}`
	if string(b) != want {
		t.Fatalf("JSON %s\nwant %s", b, want)
	}
}

func TestText(t *testing.T) {
	old := strings.Join([]string{"l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10"}, "\n")
	new := strings.Join([]string{"NEW", "l1", "l2", "X3", "l4", "l5", "Y6", "Y6b", "l8", "l10"}, "\n")
	got := Diff(old, new).Text()
	want := "at start:\n  NEW\n[2 lines unchanged]\nL3: X3\n[2 lines unchanged]\nL6-7:\n  Y6\n  Y6b\n[1 line unchanged]\nL9: (deleted)\n[1 line unchanged]\n"
	if got != want {
		t.Fatalf("Text:\n%s\nwant:\n%s", got, want)
	}
}

func TestApplyRejectsDeltaOfAnotherText(t *testing.T) {
	d := Diff("a\nb\nc\nd", "a\nB\nc\nd")
	for _, other := range []string{"a\nb", "a\nb\nc\nd\ne", ""} {
		_, err := Apply(other, d)
		var mm *ErrMismatch
		if !errors.As(err, &mm) {
			t.Errorf("Apply to %q: err %v, want *ErrMismatch", other, err)
		}
	}
	bad := []Delta{
		{Hunks: []Hunk{{Start: 2, End: 2}}},
		{Hunks: []Hunk{{Unchanged: 2, Lines: []string{"x"}}}},
		{Hunks: []Hunk{{Start: 1, End: 9}}},
		{Hunks: []Hunk{{Start: 1, End: -1}}},
	}
	for _, d := range bad {
		if _, err := Apply("a\nb", d); err == nil {
			t.Errorf("Apply(%+v) succeeded", d)
		}
	}
}

// alphabet is small so that random texts repeat lines, which is where
// alignment goes wrong.
var alphabet = []string{"", "a", "b", "c", "}", "\tif err != nil {", "\r", "x\r", "é", "\xff\xfe", "return nil", "  "}

func randomLines(r *rand.Rand, n int) []string {
	ls := make([]string, n)
	for i := range ls {
		if r.IntN(8) == 0 {
			ls[i] = fmt.Sprintf("unique %d %d", r.IntN(1000), i)
		} else {
			ls[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return ls
}

// edit applies a few random inserts, deletes and replacements to ls, at
// random places including both ends.
func edit(r *rand.Rand, ls []string) []string {
	out := append([]string(nil), ls...)
	for range r.IntN(6) {
		pos := 0
		switch r.IntN(4) {
		case 0:
			pos = 0
		case 1:
			pos = len(out)
		default:
			pos = r.IntN(len(out) + 1)
		}
		n := r.IntN(4)
		switch r.IntN(3) {
		case 0: // insert
			out = append(out[:pos], append(randomLines(r, n+1), out[pos:]...)...)
		case 1: // delete
			end := min(len(out), pos+n+1)
			out = append(out[:pos], out[end:]...)
		default: // replace
			end := min(len(out), pos+n)
			out = append(out[:pos], append(randomLines(r, r.IntN(3)), out[end:]...)...)
		}
	}
	return out
}

func join(r *rand.Rand, ls []string) string {
	sep := "\n"
	if r.IntN(4) == 0 {
		sep = "\r\n"
	}
	s := strings.Join(ls, sep)
	if r.IntN(2) == 0 && len(ls) > 0 {
		s += sep
	}
	return s
}

// TestApplyDiffRoundTripsRandomEdits is the property issue 10 requires:
// over randomised edits, applying the delta to the old text reproduces
// the new text exactly.
func TestApplyDiffRoundTripsRandomEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := range n {
		ls := randomLines(r, r.IntN(40))
		old := join(r, ls)
		var new string
		switch i % 10 {
		case 0: // unrelated texts
			new = join(r, randomLines(r, r.IntN(40)))
		case 1: // line endings changed throughout
			new = strings.ReplaceAll(old, "\n", "\r\n")
		case 2: // trailing newline toggled
			if strings.HasSuffix(old, "\n") {
				new = strings.TrimSuffix(old, "\n")
			} else {
				new = old + "\n"
			}
		default:
			new = join(r, edit(r, ls))
		}
		roundTrip(t, old, new)
		roundTrip(t, new, old)
	}
}

// TestDeltaSurvivesJSON: read_doc sends the hunks as JSON; for valid UTF-8
// texts (an edge's contents always are) the decoded delta applies exactly.
func TestDeltaSurvivesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		ls := randomLines(r, r.IntN(30))
		old := strings.ToValidUTF8(join(r, ls), "?")
		new := strings.ToValidUTF8(join(r, edit(r, ls)), "?")
		b, err := json.Marshal(Diff(old, new))
		if err != nil {
			t.Fatal(err)
		}
		var d Delta
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		got, err := Apply(old, d)
		if err != nil || got != new {
			t.Fatalf("after JSON: %q, %v; want %q (json %s)", got, err, new, b)
		}
	}
}

// TestDiffOfLargeRewriteIsExact: a region beyond Myers' edit bound is
// replaced whole, still exactly.
func TestDiffOfLargeRewriteIsExact(t *testing.T) {
	a := make([]string, 3000)
	b := make([]string, 3000)
	for i := range a {
		a[i] = []string{"x", "y"}[i%2]
		b[i] = []string{"y", "z", "x"}[i%3]
	}
	roundTrip(t, strings.Join(a, "\n"), strings.Join(b, "\n"))
}

func FuzzDiffApply(f *testing.F) {
	f.Add("", "")
	f.Add("a\nb\nc\n", "a\nB\nc")
	f.Add("a\r\nb\r\n", "b\r\na\r\n")
	f.Add("\xff\n\xfe", "\xfe\n\xff\n")
	f.Add("}\n}\n}\n", "}\n\n}\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		d := Diff(old, new)
		got, err := Apply(old, d)
		if err != nil || got != new {
			t.Fatalf("Apply(%q, Diff(…, %q)) = %q, %v", old, new, got, err)
		}
		if old == new && d.Changed() {
			t.Fatalf("equal texts changed: %+v", d.Hunks)
		}
		_ = utf8.ValidString(d.Text())
	})
}
