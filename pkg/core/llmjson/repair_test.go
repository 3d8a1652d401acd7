package llmjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// repairCase is a case of seed 003 §12; want "" stands for the seed's null.
type repairCase struct {
	id, input, want string
}

// corpus is seed 003 §12's repair corpus and edge cases, verbatim.
var corpus = []repairCase{
	{"trailing-comma-1", `{"key": "value",}`, `{"key": "value"}`},
	{"unclosed-string-1", `{"key": "value`, `{"key": "value"}`},
	{"unclosed-brace-1", `{"key": "value"`, `{"key": "value"}`},
	{"single-quotes-1", `{'key': 'value'}`, `{"key": "value"}`},
	{"mixed-issues-1", `{'key': 'value',`, `{"key": "value"}`},
	{"unrepairable-1", `not even close to JSON`, ""},
	{"nested-quotes", `{"key": "value with \"quotes\"",}`, `{"key": "value with \"quotes\""}`},
	{"deep-nesting", `{"a":{"b":{"c":{"d":"e"`, `{"a":{"b":{"c":{"d":"e"}}}}`},
	{"array-trailing", `["a","b","c",]`, `["a","b","c"]`},
}

func TestRepairSeedCorpus(t *testing.T) {
	checkRepairs(t, corpus)
}

func TestRepairMore(t *testing.T) {
	checkRepairs(t, []repairCase{
		// Nesting order: the seed would write }] as ]} or }}].
		{"array-of-object", `[{"a":1`, `[{"a":1}]`},
		{"object-array-object", `{"memories":[{"content":"test"`, `{"memories":[{"content":"test"}]}`},
		{"closer-skips-one", `[{"a":1]`, `[{"a":1}]`},
		{"stray-closer", `{"a":[1,2]]}`, `{"a":[1,2]}`},
		// Literals and whitespace survive repair.
		{"literals", `{"t": true, "f": false, "n": null,}`, `{"t": true, "f": false, "n": null}`},
		{"literals-array", "[true,\n  false,\n  null,\n]", "[true,\n  false,\n  null]"},
		{"python-literals", `{"a": True, "b": None}`, `{"a": true, "b": null}`},
		{"cut-literal", `{"done": tr`, `{"done": true}`},
		// Apostrophes and quotes.
		{"apostrophe", `{"text": "it's here",}`, `{"text": "it's here"}`},
		{"single-with-apostrophe", `{'text': 'it's here'}`, `{"text": "it's here"}`},
		{"single-with-double", `{'text': 'say "hi"'}`, `{"text": "say \"hi\""}`},
		{"escaped-apostrophe", `{'text': 'it\'s'}`, `{"text": "it's"}`},
		{"unescaped-inner-quotes", `{"content": "User said "use tabs" here"}`, `{"content": "User said \"use tabs\" here"}`},
		// Numbers.
		{"exponent", `{"n": -1.5e3,}`, `{"n": -1.5e3}`},
		{"cut-exponent", `{"n": -1.5e`, `{"n": -1.5}`},
		{"cut-fraction", `[1, 2.`, `[1, 2]`},
		{"cut-minus", `{"a": 1, "b": -`, `{"a": 1}`},
		// Strings and escapes.
		{"unicode-escape", `{"s": "caf\u00e9 \ud83d\ude00",}`, `{"s": "caf\u00e9 \ud83d\ude00"}`},
		{"raw-utf8", `{"s": "café 😀"`, `{"s": "café 😀"}`},
		{"cut-unicode-escape", `{"s": "caf\u00`, `{"s": "caf"}`},
		{"cut-escape", `{"s": "a\`, `{"s": "a"}`},
		{"invalid-escape", `{"s": "C:\dir"}`, `{"s": "C:\\dir"}`},
		{"raw-newline", "{\"s\": \"line one\nline two\"}", `{"s": "line one\nline two"}`},
		// Cut-off members.
		{"dangling-key", `{"a": 1, "b"`, `{"a": 1}`},
		{"dangling-colon", `{"a": 1, "b": `, `{"a": 1}`},
		{"only-opener", `{`, `{}`},
		{"only-key", `{"a`, `{}`},
		{"empty-array", `[`, `[]`},
		// Missing punctuation.
		{"missing-comma-newline", "{\"a\": 1\n\"b\": 2}", "{\"a\": 1\n,\"b\": 2}"},
		{"missing-colon", "{\"a\"\n\"b\"}", "{\"a\"\n:\"b\"}"},
		// A quote followed by anything else is text, so a key with a stray
		// quote swallows what follows and, never given a value, is dropped.
		{"quote-then-value", `{"a" "b"}`, `{}`},
		{"bare-key", `{key: "value"}`, `{"key": "value"}`},
		{"double-comma", `[1,,2]`, `[1,2]`},
		// What cannot be repaired.
		{"bare-word-value", `{"a": maybe}`, ""},
		{"empty", ``, ""},
		{"leading-zero", `{"a": 007}`, ""},
	})
}

// TestRepairBoundaries names the choice that replaces the seed's "first
// '{' or '[' to last '}' or ']'": the value runs from the first opener to
// where it closes, or to the end of input when it never closes.
func TestRepairBoundaries(t *testing.T) {
	checkRepairs(t, []repairCase{
		{"no-closer-keeps-to-end", `{"key": "value`, `{"key": "value"}`},
		{"closer-in-cut-string", `{"a": "x } y`, `{"a": "x } y"}`},
		{"prose-after-with-braces", `{"a":1} and use {b} next`, `{"a":1}`},
		{"prose-before", `Sure! Here it is: {"a": [1, 2]} Hope that helps.`, `{"a": [1, 2]}`},
		{"second-value-dropped", `{"a":1}{"b":2}`, `{"a":1}`},
		{"bracketed-prose-first", `Found [two] items: {"n": 2}`, `{"n": 2}`},
		{"braced-prose-first", `I think {this} is it: {"a":1}`, `{"a":1}`},
		{"fence", "Here is the JSON:\n```json\n{\"memories\": []}\n```\nDone.", `{"memories": []}`},
		{"fence-over-prose-brackets", "Results [see below]:\n```\n[1, 2,]\n```", `[1, 2]`},
		{"open-fence", "```json\n{\"a\": [1", `{"a": [1]}`},
		{"fence-without-json", "```\nnone\n```\n{\"a\":1}x", `{"a":1}`},
	})
}

func TestRepairValidJSONUnchanged(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `{"a":1}`, ` {"a" : [1, -1.5e3, true, false, null, "it's \"q\" \u00e9"]} `,
		`"just a string"`, `42`, `null`, "[\n  {\"a\": {}}\n]\n",
	} {
		got, err := Repair(in)
		if err != nil || got != in {
			t.Errorf("Repair(%q) = %q, %v; want it unchanged", in, got, err)
		}
	}
}

func TestRepairErrors(t *testing.T) {
	long := `{"a": "` + strings.Repeat("x", MaxLength) + `"}`
	for _, tc := range []struct {
		in   string
		want error
	}{
		{long, ErrTooLarge},
		{`no json here`, ErrNoJSON},
		{`{"a": maybe}`, ErrUnrepairable},
	} {
		got, err := Repair(tc.in)
		if !errors.Is(err, tc.want) || got != "" {
			t.Errorf("Repair(%.40q) = %q, %v; want \"\", %v", tc.in, got, err, tc.want)
		}
	}
	// Exactly MaxLength bytes is allowed.
	atLimit := `["` + strings.Repeat("x", MaxLength-4) + `",`
	if got, err := Repair(atLimit); err != nil || got != atLimit[:MaxLength-1]+"]" {
		t.Errorf("Repair at MaxLength: %d bytes, %v", len(got), err)
	}
}

func TestRepairIsIdempotent(t *testing.T) {
	for _, tc := range corpus {
		once, err := Repair(tc.input)
		if err != nil {
			continue
		}
		if twice, err := Repair(once); err != nil || twice != once {
			t.Errorf("%s: Repair(%q) = %q, %v", tc.id, once, twice, err)
		}
	}
}

func checkRepairs(t *testing.T, cases []repairCase) {
	t.Helper()
	for _, tc := range cases {
		got, err := Repair(tc.input)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: Repair(%q) = %q, want an error (null)", tc.id, tc.input, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: Repair(%q)\n got %q, %v\nwant %q", tc.id, tc.input, got, err, tc.want)
		}
		if err == nil && !json.Valid([]byte(got)) {
			t.Errorf("%s: %q is not valid JSON", tc.id, got)
		}
	}
}

// sameJSON reports whether a and b decode to equal values.
func sameJSON(a, b string) bool {
	va, erra := decode(a)
	vb, errb := decode(b)
	return erra == nil && errb == nil && reflect.DeepEqual(va, vb)
}

func decode(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}
