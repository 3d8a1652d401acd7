package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// wire is the envelope every event is encoded in:
//
//	{"v":"1.1","kind":"file.upserted","data":{...}}
//
// The version and kind come first so a reader can refuse an event before
// decoding its body.
type wire struct {
	V    string          `json:"v"`
	Kind Kind            `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// MaxEncodedSize bounds what Decode accepts; larger input is malformed.
const MaxEncodedSize = 64 << 20

// Encode validates ev and encodes it with the current Version.
func Encode(ev Event) ([]byte, error) {
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	// The envelope by hand: json.Marshal would scan the data, which can be
	// a whole file's content, once more to compact it. The data is encoded
	// straight after it, as Marshal would encode it, rather than into a
	// buffer of its own that is then copied.
	v, _ := json.Marshal(Version)
	kind, _ := json.Marshal(ev.EventKind())
	var out bytes.Buffer
	out.WriteString(`{"v":`)
	out.Write(v)
	out.WriteString(`,"kind":`)
	out.Write(kind)
	out.WriteString(`,"data":`)
	if err := json.NewEncoder(&out).Encode(ev); err != nil {
		return nil, fmt.Errorf("encode %s: %w", ev.EventKind(), err)
	}
	b := out.Bytes()
	b[len(b)-1] = '}' // in place of the newline Encode ends with
	return b, nil
}

// envelope splits b, as Encode writes it, into its version, kind and
// data without scanning the data; ok is false for any other layout.
func envelope(b []byte) (v string, kind Kind, data []byte, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"v":"`))
	if !ok {
		return "", "", nil, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return "", "", nil, false
	}
	v, rest = string(rest[:i]), rest[i+1:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"kind":"`)); !ok {
		return "", "", nil, false
	}
	i = bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return "", "", nil, false
	}
	kind, rest = Kind(rest[:i]), rest[i+1:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"data":`)); !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return "", "", nil, false
	}
	return v, kind, rest[:len(rest)-1], true
}

// Decode decodes an encoded event and validates it. If the event's major
// version is not MajorVersion, the error wraps ErrUnsupportedVersion; an
// unknown kind wraps ErrUnknownKind; anything else unreadable wraps
// ErrMalformed. The returned Event is a value of one of this package's types
// (FileUpserted, not *FileUpserted).
func Decode(b []byte) (Event, error) {
	if len(b) > MaxEncodedSize {
		return nil, fmt.Errorf("%w: %d bytes exceeds %d", ErrMalformed, len(b), MaxEncodedSize)
	}
	// What Encode wrote is read without a separate pass over the envelope;
	// anything else, or a data part that does not decode alone (it held
	// more fields), goes the general way.
	if v, kind, data, ok := envelope(b); ok && checkVersion(v) == nil {
		if ev, err := decodeData(kind, data); err == nil {
			return ev, nil
		}
	}
	return decodeAnyLayout(b)
}

// decodeAnyLayout is Decode for any JSON layout of the envelope.
func decodeAnyLayout(b []byte) (Event, error) {
	var w wire
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after event", ErrMalformed)
	}
	if err := checkVersion(w.V); err != nil {
		return nil, err
	}
	return decodeData(w.Kind, w.Data)
}

// decodeData decodes and validates the data of an event of kind.
func decodeData(kind Kind, data []byte) (Event, error) {
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return nil, fmt.Errorf("%w: %s event has no data", ErrMalformed, kind)
	}
	var (
		ev  Event
		err error
	)
	switch kind {
	case KindFileUpserted:
		ev, err = decodeAs[FileUpserted](data)
	case KindFileDeleted:
		ev, err = decodeAs[FileDeleted](data)
	case KindFileSkipped:
		ev, err = decodeAs[FileSkipped](data)
	case KindTranscriptBatch:
		ev, err = decodeAs[TranscriptBatch](data)
	case KindTask:
		ev, err = decodeAs[TaskEvent](data)
	case KindDocRecord:
		ev, err = decodeAs[DocRecord](data)
	case KindEmbedRequest:
		ev, err = decodeAs[EmbedRequest](data)
	case KindVectorRecord:
		ev, err = decodeAs[VectorRecord](data)
	default:
		return nil, fmt.Errorf("%w %q (this build knows file.upserted, file.deleted, file.skipped, transcript.batch, task, doc.record, embed.request, vector.record)", ErrUnknownKind, kind)
	}
	if err != nil {
		return nil, err
	}
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	return ev, nil
}

// DecodeDocRecord decodes an encoded DocRecord.
func DecodeDocRecord(b []byte) (DocRecord, error) {
	ev, err := Decode(b)
	if err != nil {
		return DocRecord{}, err
	}
	rec, ok := ev.(DocRecord)
	if !ok {
		return DocRecord{}, fmt.Errorf("%w: expected %s, got %s", ErrMalformed, KindDocRecord, ev.EventKind())
	}
	return rec, nil
}

func decodeAs[T Event](data json.RawMessage) (Event, error) {
	var v T
	if err := Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, v.EventKind(), err)
	}
	return v, nil
}

func checkVersion(v string) error {
	if v == "" {
		return fmt.Errorf("%w: missing version field \"v\"", ErrMalformed)
	}
	majorStr, _, _ := strings.Cut(v, ".")
	major, err := strconv.Atoi(majorStr)
	if err != nil {
		return fmt.Errorf("%w: version %q is not MAJOR.MINOR", ErrMalformed, v)
	}
	if major != MajorVersion {
		return fmt.Errorf("%w %q: this build reads major version %d; upgrade every CueDeck role to the same release", ErrUnsupportedVersion, v, MajorVersion)
	}
	return nil
}

func validRepoPath(repo, path string) error {
	if err := ValidateRepo(repo); err != nil {
		return err
	}
	return ValidatePath(path)
}

func validSHA(sha string) bool {
	if len(sha) != 64 {
		return false
	}
	for i := 0; i < len(sha); i++ {
		c := sha[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Validate implements Event.
func (e FileUpserted) Validate() error {
	if err := validRepoPath(e.Repo, e.Path); err != nil {
		return err
	}
	if !validSHA(e.SHA256) {
		return fmt.Errorf("%w: file.upserted %s: sha256 %q is not 64 hex digits", ErrMalformed, e.Path, e.SHA256)
	}
	if e.Size < 0 {
		return fmt.Errorf("%w: file.upserted %s: negative size", ErrMalformed, e.Path)
	}
	if e.Blob != "" && e.Content != "" {
		return fmt.Errorf("%w: file.upserted %s: both content and blob set", ErrMalformed, e.Path)
	}
	if e.Blob != "" && !validSHA(e.Blob) {
		return fmt.Errorf("%w: file.upserted %s: blob %q is not a sha256", ErrMalformed, e.Path, e.Blob)
	}
	if !utf8.ValidString(e.Content) {
		return fmt.Errorf("%w: file.upserted %s: content is not valid UTF-8", ErrMalformed, e.Path)
	}
	return nil
}

// Validate implements Event.
func (e FileDeleted) Validate() error { return validRepoPath(e.Repo, e.Path) }

// Validate implements Event.
func (e FileSkipped) Validate() error {
	if err := validRepoPath(e.Repo, e.Path); err != nil {
		return err
	}
	if e.Reason == "" {
		return fmt.Errorf("%w: file.skipped %s: no reason", ErrMalformed, e.Path)
	}
	return nil
}

// Validate implements Event.
func (e TranscriptBatch) Validate() error {
	if err := ValidateRepo(e.Repo); err != nil {
		return err
	}
	if e.Session == "" {
		return fmt.Errorf("%w: transcript.batch: no session", ErrMalformed)
	}
	if e.StartOffset < 0 || e.EndOffset < e.StartOffset {
		return fmt.Errorf("%w: transcript.batch %s: offsets %d..%d", ErrMalformed, e.Session, e.StartOffset, e.EndOffset)
	}
	if len(e.Offsets) != 0 && len(e.Offsets) != len(e.Lines) {
		return fmt.Errorf("%w: transcript.batch %s: %d offsets for %d lines", ErrMalformed, e.Session, len(e.Offsets), len(e.Lines))
	}
	switch e.Format {
	case TranscriptClaudeCode, TranscriptChatJSONL:
	default:
		return fmt.Errorf("%w: transcript.batch %s: unknown format %q (use %s or %s)", ErrMalformed, e.Session, e.Format, TranscriptClaudeCode, TranscriptChatJSONL)
	}
	return nil
}

// Validate implements Event.
func (e TaskEvent) Validate() error {
	if err := ValidateRepo(e.Repo); err != nil {
		return err
	}
	switch e.Op {
	case TaskCreated, TaskUpdated, TaskDeleted:
	default:
		return fmt.Errorf("%w: task: unknown op %q", ErrMalformed, e.Op)
	}
	if e.Task.ID == "" {
		return fmt.Errorf("%w: task: no id", ErrMalformed)
	}
	return nil
}

// Validate implements Event.
func (r DocRecord) Validate() error {
	if err := validRepoPath(r.Repo, r.Path); err != nil {
		return err
	}
	if r.Deleted && r.Skip != nil {
		return fmt.Errorf("%w: doc.record %s: both deleted and skipped", ErrMalformed, r.Path)
	}
	if !r.Deleted && r.Skip == nil && !validSHA(r.SHA256) {
		return fmt.Errorf("%w: doc.record %s: sha256 %q is not 64 hex digits", ErrMalformed, r.Path, r.SHA256)
	}
	return nil
}
