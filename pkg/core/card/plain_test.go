package card

import (
	"math/rand/v2"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Every string str writes without go-yaml is written as go-yaml's
// Node.Encode writes it: the same kind, tag, value and style, on words
// YAML reads as something else, and on random strings over the
// characters that matter.
func TestPlainScalarsAreEncodedAsYAMLWould(t *testing.T) {
	cases := []string{"todo", "in_progress", "Fix login", "v1.2", "a/b", "y", "Yes", "NULL", "off", "On",
		"x ", "e1", "nan", "inf", "Infinity", "True", "t-1", "a.b.c", "tilde~", "a:b", "a #b", "x-", "A1.5e3"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZy n0.9-_/ :#'\\\"e~!%&*?|>@`[]{},"
	for i := range 20000 {
		// Half over the characters plain strings hold, so that many take
		// the plain path; half over all of them.
		chars := alphabet
		if i%2 == 0 {
			chars = alphabet[:11]
		}
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteByte(chars[rng.IntN(len(chars))])
		}
		cases = append(cases, b.String())
	}
	plain := 0
	for _, s := range cases {
		if !plainSafe(s) {
			continue
		}
		plain++
		want := &yaml.Node{}
		if err := want.Encode(s); err != nil {
			t.Fatal(err)
		}
		got := str(s)
		if got.Kind != want.Kind || got.Tag != want.Tag || got.Value != want.Value || got.Style != want.Style {
			t.Fatalf("%q: str gives kind %v tag %q value %q style %v; Node.Encode kind %v tag %q value %q style %v",
				s, got.Kind, got.Tag, got.Value, got.Style, want.Kind, want.Tag, want.Value, want.Style)
		}
		var back string
		if err := got.Decode(&back); err != nil || back != s {
			t.Fatalf("%q reads back as %q (%v)", s, back, err)
		}
	}
	if plain < 1000 {
		t.Fatalf("only %d of %d strings took the plain path", plain, len(cases))
	}
}
