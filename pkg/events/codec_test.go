package events

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/vector"
)

func sampleEvents() []Event {
	at := time.Date(2026, 11, 21, 10, 0, 0, 123, time.UTC)
	sha := SHA256Hex([]byte("hello"))
	return []Event{
		FileUpserted{Repo: "app", Path: "docs/a b.md", SHA256: sha, Size: 5, ModTime: at, Content: "hello"},
		FileUpserted{Repo: "app", Path: "big.md", SHA256: sha, Size: 5 << 20, ModTime: at, Blob: sha},
		FileDeleted{Repo: "app", Path: "docs/a.md", PrevSHA256: sha, PrevMod: at},
		FileSkipped{Repo: "app", Path: "img.png", Size: 10, ModTime: at, Reason: SkipBinary, Detail: "NUL byte at offset 3"},
		TranscriptBatch{Repo: "app", Session: "s1", Source: "/x.jsonl", Format: "claude-code", StartOffset: 0, EndOffset: 10, Lines: nil},
		TaskEvent{Repo: "app", Op: TaskCreated, Task: Task{ID: "abc123", Title: "t", Status: "todo", Priority: "low", Created: at, Updated: at}},
		DocRecord{Repo: "app", Path: "docs/a.md", SHA256: sha, SourceSeq: 7, Kind: DocMarkdown, Tokens: 2,
			Headings: []Heading{{Level: 1, Text: "A", Slug: "a", Line: 1, EndLine: 3}}, IndexedAt: at},
		DocRecord{Repo: "app", Path: "gone.md", SourceSeq: 9, Deleted: true, IndexedAt: at},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, ev := range sampleEvents() {
		b, err := Encode(ev)
		if err != nil {
			t.Fatalf("encode %T: %v", ev, err)
		}
		if !strings.HasPrefix(string(b), `{"v":"`+Version+`","kind":"`+string(ev.EventKind())+`"`) {
			t.Fatalf("envelope does not lead with version and kind: %s", b)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("decode %T: %v", ev, err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Fatalf("round trip of %T:\n got %#v\nwant %#v", ev, got, ev)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := []struct {
		name, in string
		want     error
	}{
		{"future major", `{"v":"2.0","kind":"file.deleted","data":{"repo":"a","path":"b"}}`, ErrUnsupportedVersion},
		{"past major", `{"v":"0.9","kind":"file.deleted","data":{"repo":"a","path":"b"}}`, ErrUnsupportedVersion},
		{"no version", `{"kind":"file.deleted","data":{"repo":"a","path":"b"}}`, ErrMalformed},
		{"garbage version", `{"v":"x","kind":"file.deleted","data":{}}`, ErrMalformed},
		{"unknown kind", `{"v":"1.0","kind":"file.exploded","data":{}}`, ErrUnknownKind},
		{"no data", `{"v":"1.0","kind":"file.deleted"}`, ErrMalformed},
		{"not json", `not json`, ErrMalformed},
		{"trailing", `{"v":"1.0","kind":"file.deleted","data":{"repo":"a","path":"b"}} {}`, ErrMalformed},
		{"escaping path", `{"v":"1.0","kind":"file.deleted","data":{"repo":"a","path":"../etc/passwd"}}`, ErrInvalidPath},
		{"bad repo", `{"v":"1.0","kind":"file.deleted","data":{"repo":"a.b","path":"x"}}`, ErrInvalidRepo},
		{"bad sha", `{"v":"1.0","kind":"file.upserted","data":{"repo":"a","path":"x","sha256":"zz"}}`, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.in))
			if !errors.Is(err, c.want) {
				t.Fatalf("Decode(%s) = %v, want %v", c.in, err, c.want)
			}
		})
	}
}

func TestMinorVersionAccepted(t *testing.T) {
	in := `{"v":"1.7","kind":"file.deleted","data":{"repo":"a","path":"b","added_in_1_7":true}}`
	ev, err := Decode([]byte(in))
	if err != nil {
		t.Fatalf("a newer minor version must decode: %v", err)
	}
	if d := ev.(FileDeleted); d.Path != "b" {
		t.Fatalf("got %+v", d)
	}
}

func TestDocKeyRoundTrip(t *testing.T) {
	for _, p := range []string{"a.md", "dir/sub/ü x.md", strings.Repeat("x/", 100) + "y"} {
		key := DocKey("repo-1", p)
		if strings.ContainsAny(key, " +") {
			t.Fatalf("key %q has characters KV rejects", key)
		}
		repo, path, err := ParseDocKey(key)
		if err != nil || repo != "repo-1" || path != p {
			t.Fatalf("ParseDocKey(%q) = %q, %q, %v", key, repo, path, err)
		}
	}
}

func TestMsgIDsDistinguishReEdits(t *testing.T) {
	t1 := time.Unix(100, 0)
	t2 := time.Unix(200, 0)
	a := FileUpsertedMsgID("r", "p.md", "aaaa", t1)
	again := FileUpsertedMsgID("r", "p.md", "aaaa", t2)
	if a == again {
		t.Fatal("the same content saved again later must get a new message id")
	}
	if a != FileUpsertedMsgID("r", "p.md", "aaaa", t1) {
		t.Fatal("a retried publish must keep its message id")
	}
	if FileDeletedMsgID("r", "p.md", "aaaa", t1) == FileDeletedMsgID("r", "p.md", "aaaa", t2) {
		t.Fatal("deleting a re-created file must get a new message id")
	}
}

func TestRepoNames(t *testing.T) {
	for in, want := range map[string]string{"my repo": "my-repo", ".hidden": "hidden", "": "workspace", "ok_1": "ok_1"} {
		got := RepoNameFrom(in)
		if got != want {
			t.Errorf("RepoNameFrom(%q) = %q, want %q", in, got, want)
		}
		if err := ValidateRepo(got); err != nil {
			t.Errorf("RepoNameFrom(%q) gave invalid %q", in, got)
		}
	}
}

// Encode writes the envelope by hand; it must be what json.Marshal of the
// envelope would write, so that readers of older releases read it.
func TestEncodeWritesTheEnvelopeJSONWould(t *testing.T) {
	for _, ev := range sampleEvents() {
		got, err := Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(ev)
		want, _ := json.Marshal(wire{V: Version, Kind: ev.EventKind(), Data: data})
		if !bytes.Equal(got, want) {
			t.Fatalf("Encode(%s) = %s\nwant %s", ev.EventKind(), got, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"v":"1.0","kind":"doc.record","data":{"repo":"a","path":"b","deleted":true},"kind":"task"}`))
	f.Add([]byte(`{"v":"1.0","kind":"doc.record","data":{"repo":"a","path":"b","deleted":true} }`))
	for _, ev := range sampleEvents() {
		b, _ := Encode(ev)
		f.Add(b)
	}
	f.Add([]byte(`{"v":"1.0","kind":"doc.record","data":{"repo":"a","path":"b","deleted":true}}`))
	f.Add([]byte(`{"v":"99","kind":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := Decode(b)
		// The fast path for Encode's own layout agrees with the general one.
		general, gerr := decodeAnyLayout(b)
		if (err == nil) != (gerr == nil) || !reflect.DeepEqual(ev, general) {
			t.Fatalf("Decode = %v, %v; the general decoder %v, %v", ev, err, general, gerr)
		}
		if err != nil {
			if ev != nil {
				t.Fatal("an error must come with no event")
			}
			return
		}
		// Whatever decodes must re-encode and decode to the same thing.
		again, err := Encode(ev)
		if err != nil {
			t.Fatalf("decoded event does not re-encode: %v", err)
		}
		ev2, err := Decode(again)
		if err != nil {
			t.Fatalf("re-encoded event does not decode: %v", err)
		}
		if ev.EventKind() != ev2.EventKind() {
			t.Fatal("kind changed across a round trip")
		}
	})
}

// Embed workers since events 1.1 write int8 codes: a quarter of the bytes
// in cue_vectors, and within half a step of the float vector, which the edges
// quantise to the same codes anyway. Records of 1.0 (floats) stay readable,
// and each form is checked against the record's dimensions.
func TestVectorRecordInt8(t *testing.T) {
	v := []float32{0.5, -0.25, 0.001, 0, -0.8, 0.1}
	enc := EncodeInt8Vector(v)
	if !strings.HasPrefix(enc, "q8:") || len(enc) >= len(EncodeVector(v)) {
		t.Fatalf("EncodeInt8Vector = %q (%d bytes), floats take %d", enc, len(enc), len(EncodeVector(v)))
	}
	back, err := DecodeVector(enc)
	if err != nil || len(back) != len(v) {
		t.Fatalf("DecodeVector = %v, %v", back, err)
	}
	step := float32(0.8) / 127
	for i := range v {
		if d := back[i] - v[i]; d > step/2 || d < -step/2 {
			t.Fatalf("component %d: %v decoded as %v, more than half a step (%v) away", i, v[i], back[i], step)
		}
	}
	if EncodeInt8Vector(back) != enc {
		t.Fatal("re-encoding decoded codes changed them")
	}
	old := VectorRecord{Repo: "r", Path: "a.go", Model: "m", Dimensions: len(v), SHA256: strings.Repeat("b", 64),
		Chunks: []ChunkVector{{StartLine: 1, EndLine: 2, Vector: enc}, {StartLine: 3, EndLine: 3, Vector: EncodeVector(v)}}}
	b, err := Encode(old)
	if err != nil {
		t.Fatalf("a record mixing both encodings: %v", err)
	}
	got, err := DecodeVectorRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := DecodeVector(got.Chunks[1].Vector); err != nil || !slices.Equal(f, v) {
		t.Fatalf("float chunk = %v, %v", f, err)
	}
	old.Dimensions = len(v) + 1
	if _, err := Encode(old); !errors.Is(err, ErrMalformed) {
		t.Fatalf("int8 codes of the wrong length: err = %v, want ErrMalformed", err)
	}
	if z, err := DecodeVector(EncodeInt8Vector(make([]float32, 3))); err != nil || !slices.Equal(z, make([]float32, 3)) {
		t.Fatalf("zero vector = %v, %v", z, err)
	}
}

// Edges take int8 codes as they are: AppendVectorCodes gives the bytes
// vector.AppendCodes wrote, appended after what dst held; a float vector is
// left to DecodeVector; damaged codes are refused.
func TestAppendVectorCodes(t *testing.T) {
	v := []float32{0.5, -0.25, 0.001, 0, -0.8, 0.1}
	head := []byte("head")
	got, ok, err := AppendVectorCodes(head, EncodeInt8Vector(v))
	if err != nil || !ok || !bytes.Equal(got, vector.AppendCodes([]byte("head"), v)) {
		t.Fatalf("AppendVectorCodes = %v, %v, %v; want head and vector.AppendCodes", got, ok, err)
	}
	if got, ok, err := AppendVectorCodes(head, EncodeVector(v)); ok || err != nil || string(got) != "head" {
		t.Fatalf("a float vector: %q, %v, %v; want dst unchanged and ok false", got, ok, err)
	}
	for _, bad := range []string{"q8:!!!", "q8:AAA=", EncodeInt8Vector(v)[:3] + base64.StdEncoding.EncodeToString([]byte{0, 0, 0xc0, 0xff, 1})} {
		if got, ok, err := AppendVectorCodes(head, bad); !ok || !errors.Is(err, ErrMalformed) || string(got) != "head" {
			t.Errorf("%q: %q, %v, %v; want ErrMalformed and dst unchanged", bad, got, ok, err)
		}
	}
}

func TestVectorRecordRoundTrip(t *testing.T) {
	v := []float32{0.25, -1, 3.5e-7, 0}
	rec := VectorRecord{Repo: "r", Path: "docs/a.md", Model: "builtin:use-lite", Dimensions: 4, SHA256: strings.Repeat("a", 64), SourceSeq: 9,
		Chunks: []ChunkVector{{StartLine: 1, EndLine: 4, Vector: EncodeVector(v)}}}
	b, err := Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeVectorRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeVector(got.Chunks[0].Vector)
	if err != nil || !slices.Equal(back, v) {
		t.Fatalf("vector = %v, %v; want %v", back, err, v)
	}
	rec.Dimensions = 5
	if _, err := Encode(rec); !errors.Is(err, ErrMalformed) {
		t.Fatalf("dimension mismatch: err = %v, want ErrMalformed", err)
	}
	rec.Dimensions = 0
	if _, err := Encode(rec); !errors.Is(err, ErrMalformed) {
		t.Fatalf("chunks without dimensions: err = %v, want ErrMalformed", err)
	}
	rec.Chunks, rec.ChunksOmitted = nil, 3
	if _, err := Encode(rec); err != nil {
		t.Fatalf("a record without chunks needs no dimensions: %v", err)
	}
	if _, err := DecodeVector("q8:" + EncodeVector(v)[:5]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("truncated int8 vector: err = %v, want ErrMalformed", err)
	}
	model, repo, path, err := ParseVectorKey(VectorKey("ollama:all-minilm", "r", "docs/a.md"))
	if err != nil || model != "ollama:all-minilm" || repo != "r" || path != "docs/a.md" {
		t.Fatalf("ParseVectorKey = %q %q %q %v", model, repo, path, err)
	}
	if _, err := Encode(EmbedRequest{Repo: "r", Path: "a.md", Model: "m", SHA256: "x"}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("bad sha: err = %v", err)
	}
}
