package events

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// Unmarshal reads what Encode writes exactly as encoding/json does, and
// what json v2 refuses (names in another case, invalid UTF-8, a name
// twice) still as encoding/json does, with nothing left over from v2's
// attempt.
func TestUnmarshalReadsAsEncodingJSON(t *testing.T) {
	rec := DocRecord{
		Repo: "r", Path: "docs/a.md", SHA256: "ab", Size: 12, ModTime: time.Date(2026, 11, 29, 1, 2, 3, 456789, time.UTC),
		SourceSeq: 7, Kind: "markdown", Language: "markdown", Tokens: 40, Lines: 3, Title: "A \u2028 title",
		Headings:    []Heading{{Level: 2, Text: "Intro", Slug: "intro", Line: 1}},
		Frontmatter: map[string]any{"tags": []any{"x", 1.5}, "draft": true, "n": nil},
		Chunks:      []Chunk{{HeadingPath: []string{"Intro"}, StartLine: 1, EndLine: 3, Tokens: 40}},
		Content:     "line \"one\"\n\ttwo \\ <three> & \u00e9\U0001F600",
		Changed:     []time.Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))},
	}
	encoded, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{
		"as written":        string(encoded),
		"names in capitals": `{"Repo":"r","PATH":"p.md","content":"x"}`,
		"invalid UTF-8":     "{\"repo\":\"r\",\"path\":\"p.md\",\"content\":\"a\xffb\"}",
		"a name twice":      `{"repo":"r","path":"a.md","path":"b.md"}`,
		"v2 fails late":     "{\"repo\":\"r\",\"headings\":[{\"text\":\"h\"}],\"title\":\"t\xff\"}",
	}
	for name, in := range inputs {
		var want, got DocRecord
		werr := json.Unmarshal([]byte(in), &want)
		gerr := Unmarshal([]byte(in), &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: encoding/json err %v, Unmarshal err %v", name, werr, gerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Unmarshal\n%+v\nencoding/json\n%+v", name, got, want)
		}
	}
}
