package events

import (
	"encoding/json"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
)

// Unmarshal decodes JSON that this package's Encode (or json.Marshal of
// the same types) wrote: with the json v2 decoder, which decodes records
// in half the time encoding/json takes (it does not scan a value once to
// validate it and again to decode it; a file's text is most of a record),
// and with encoding/json when v2 refuses the input. v2 is stricter (exact
// member names, no duplicate names, valid UTF-8) and is told to refuse
// members it does not know (a name in other capitals, a field of a newer
// release), so what it accepts it reads as encoding/json would, and
// anything else still decodes as it did before.
func Unmarshal(data []byte, v any) error {
	return unmarshal(data, v, jsonv2.RejectUnknownMembers(true))
}

// UnmarshalFields is Unmarshal into a struct of only the fields wanted,
// for JSON this process's own json.Marshal wrote (names exactly as
// tagged): members v does not have are skipped instead of sending the
// decoding to encoding/json.
func UnmarshalFields(data []byte, v any) error {
	return unmarshal(data, v)
}

// unmarshal decodes with v2 under opts and, when v2 refuses, with
// encoding/json into what the caller passed: whatever v2 set before it
// gave up goes first.
func unmarshal(data []byte, v any, opts ...jsonv2.Options) error {
	if jsonv2.Unmarshal(data, v, opts...) == nil {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
	return json.Unmarshal(data, v)
}
