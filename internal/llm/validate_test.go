package llm

import (
	"encoding/json"
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRelativePath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a.go", "a.go"},
		{"./pkg/core/x.go", "pkg/core/x.go"},
		{`docs\design.md`, "docs/design.md"},
		{"pkg/../cmd/cue/main.go", "cmd/cue/main.go"},
		{" internal/llm/ollama.go ", "internal/llm/ollama.go"},
		{"", ""},
		{"/etc/passwd", ""},
		{"~/notes.md", ""},
		{`C:\src\x.go`, ""},
		{"../x.go", ""},
		{"a/../../x.go", ""},
		{"https://example.com/x.go", ""},
		{"a\nb", ""},
		{strings.Repeat("a", maxPathBytes+1), ""},
	} {
		got, err := relativePath(tc.in)
		if tc.want == "" && err == nil || tc.want != "" && (err != nil || got != tc.want) {
			t.Errorf("relativePath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestDecodeAnswerBounds(t *testing.T) {
	long := strings.Repeat("é", MaxContentRunes+1)
	files := make([]string, MaxFilesTouched+1)
	for i := range files {
		files[i] = "f.go"
	}
	fs, _ := json.Marshal(files)
	answer := `{"memories":[` +
		`{"content":"` + long + `","kind":"fact","confidence":0.5},` +
		`{"content":"ok","kind":"fact","rationale":"` + long + `","confidence":0.5},` +
		`{"content":"ok","kind":"fact","files_touched":` + string(fs) + `,"confidence":0.5},` +
		`{"content":"ok","kind":"fact","files_touched":[1],"confidence":0.5},` +
		`{"content":"edge","kind":" fact ","files_touched":null,"confidence":0}` +
		`]}`
	var res Result
	if err := decodeAnswer(answer, &res); err != nil {
		t.Fatal(err)
	}
	if res.Invalid != 4 || len(res.Memories) != 1 || res.Memories[0].Confidence != 0 || res.Memories[0].Kind != "fact" {
		t.Fatalf("result %+v", res)
	}
	var null Result
	if err := decodeAnswer(`{"memories":null}`, &null); err != nil || len(null.Memories) != 0 || null.Invalid != 0 {
		t.Errorf("null memories: %+v, %v", null, err)
	}
}

// FuzzDecodeAnswer checks that no answer panics the validator and that
// whatever it keeps is a valid memory and whatever it drops is counted.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(`{"memories":[{"content":"a","kind":"fact","confidence":0.5,"files_touched":["x.go"]}]}`)
	f.Add(`{"memories":[{"content":"","kind":"todo","confidence":2},"x",null,1]}`)
	f.Add(`{"memories":null}`)
	f.Add(`[]`)
	f.Add(`{"memories":[{"content":"a","kind":"decision","files_touched":["../x","/y"]}]}`)
	f.Fuzz(func(t *testing.T, answer string) {
		var res Result
		err := decodeAnswer(answer, &res)
		if err != nil {
			if !errors.Is(err, ErrInvalidOutput) || len(res.Memories) != 0 || res.Invalid != 0 {
				t.Fatalf("err %v with result %+v", err, res)
			}
			return
		}
		var top map[string]json.RawMessage
		var list []json.RawMessage
		if json.Unmarshal([]byte(answer), &top) != nil || json.Unmarshal(top["memories"], &list) != nil {
			t.Fatalf("accepted %q", answer)
		}
		if len(list) != len(res.Memories)+res.Invalid {
			t.Fatalf("%d candidates, %d kept, %d invalid", len(list), len(res.Memories), res.Invalid)
		}
		if len(res.InvalidReasons) != min(res.Invalid, maxReasons) {
			t.Fatalf("%d reasons for %d invalid", len(res.InvalidReasons), res.Invalid)
		}
		for _, m := range res.Memories {
			if !extractable(m.Kind) || strings.TrimSpace(m.Content) == "" || utf8.RuneCountInString(m.Content) > MaxContentRunes ||
				m.Confidence < 0 || m.Confidence > 1 || len(m.FilesTouched) > MaxFilesTouched {
				t.Fatalf("kept invalid memory %+v", m)
			}
			for _, p := range m.FilesTouched {
				if p == "" || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
					t.Fatalf("kept path %q", p)
				}
			}
		}
	})
}
