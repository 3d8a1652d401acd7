package llmjson

import (
	"encoding/json"
	"testing"
)

func FuzzRepair(f *testing.F) {
	for _, tc := range corpus {
		f.Add(tc.input)
	}
	for _, s := range []string{
		`[{"a":1`, `{'t': 'it\'s "x"'}`, "{\"s\": \"a\nb\\q\\u00", `{"n": -1.5e`, `{"a": tr`,
		"Here:\n```json\n{\"a\": [1, 2,]}\n```", `{"a":1} {b}`, `[1,,2]`, `{key: None}`,
		`{"a": "x" "b": 2}`, `{"a":[1,2}, "b": 3}`, `[{]`, `{"\ud83d\ude00": "\u00e9"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Repair(in)
		if err == nil && !json.Valid([]byte(got)) {
			t.Fatalf("Repair(%q) = %q, which is not valid JSON", in, got)
		}
		if err != nil && got != "" {
			t.Fatalf("Repair(%q) = %q with error %v", in, got, err)
		}
		if len(in) <= MaxLength && json.Valid([]byte(in)) && (err != nil || !sameJSON(got, in)) {
			t.Fatalf("valid Repair(%q) = %q, %v", in, got, err)
		}
		if err == nil {
			if again, err := Repair(got); err != nil || again != got {
				t.Fatalf("Repair is not idempotent on %q: %q, %v", got, again, err)
			}
		}
	})
}

// FuzzAssemble streams doc in chunks whose lengths come from cuts. Any doc
// must not panic and must end in valid JSON or an error; a valid doc must
// assemble to an equal value however it is cut.
func FuzzAssemble(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":"v1","memories":[{"content":"test"}]}`), []byte{8, 14, 12, 18, 2})
	f.Add([]byte(`{"a":"x\"}{[","b":[1,-2.5e3,true,null]}`+"\n\n"), []byte{7, 1, 1, 3, 0, 9})
	f.Add([]byte(`{"memories":[{"content":"test"`), []byte{3})
	f.Add([]byte(`Here's "the" JSON: {'a': 'it's',}`), []byte{5, 5, 5})
	f.Add([]byte(`"a{b"`), []byte{2})
	f.Add([]byte("\xff[\"\xfe\"]"), []byte{1, 1})
	f.Fuzz(func(t *testing.T, doc, cuts []byte) {
		r := streamCut(string(doc), cuts)
		if r.Type == ResultComplete && !json.Valid([]byte(r.Buffer)) {
			t.Fatalf("assembled %q from %q: not valid JSON", r.Buffer, doc)
		}
		// Repair turns most fuzz input into valid JSON with structure,
		// which a valid doc alone would rarely have.
		valid := []string{}
		if json.Valid(doc) {
			valid = append(valid, string(doc))
		}
		if repaired, err := Repair(string(doc)); err == nil {
			valid = append(valid, repaired)
		}
		for _, v := range valid {
			if len(v) > MaxBufferSize {
				continue
			}
			if r := streamCut(v, cuts); r.Type != ResultComplete || !sameJSON(r.Buffer, v) {
				t.Fatalf("valid %q cut by %v: %v %q %v", v, cuts, r.Type, r.Buffer, r.Err)
			}
		}
	})
}

// streamCut streams doc as deltas whose lengths come from cuts, each byte
// modulo 64, and returns the final Result.
func streamCut(doc string, cuts []byte) Result {
	events := []Event{start()}
	rest := doc
	for _, c := range cuts {
		n := min(int(c)%64, len(rest))
		events = append(events, delta(rest[:n]))
		rest = rest[n:]
	}
	events = append(events, delta(rest), stop())
	a := newTestAssembler()
	var r Result
	for _, ev := range events {
		if r = a.Process(ev); r.Type == ResultError || r.Type == ResultComplete {
			break
		}
	}
	return r
}
