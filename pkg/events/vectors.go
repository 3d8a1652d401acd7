package events

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/cuedeck/cuedeck/pkg/core/vector"
)

// Names of the embedding assets. Keyword search never waits for them: the
// indexer stores a DocRecord first and asks for its vectors afterwards, so
// embeddings trail and `cue status` reports how far.
const (
	// EmbedStream carries EmbedRequests from indexers to embed workers.
	// Taken once, and trimmed by the embed workers once its vectors are
	// stored (as IngestStream).
	EmbedStream = "CUE_EMBED"
	// SubjectEmbedPrefix + repo is the subject of EmbedRequest.
	SubjectEmbedPrefix = "cue.embed."
	// EmbedderConsumer is the durable consumer the embed workers share.
	EmbedderConsumer = "embedder"
	// VectorsBucket is the KV bucket of VectorRecords, one per (model,
	// file), keyed by VectorKey.
	VectorsBucket = "cue_vectors"
)

// KindEmbedRequest and KindVectorRecord name the embedding events.
const (
	KindEmbedRequest Kind = "embed.request"
	KindVectorRecord Kind = "vector.record"
)

// EmbedSubject is the subject of embed requests for repo.
func EmbedSubject(repo string) string { return SubjectEmbedPrefix + repo }

// EmbedRequest asks for the vectors of one DocRecord under one model.
//
// Subject EmbedSubject(repo) on EmbedStream, Nats-Msg-Id EmbedRequestMsgID.
// Its publishers are the indexers: after storing a DocRecord (Deleted when
// the record became a tombstone or a skip, so stale vectors are removed), and
// when a model switch finds records without vectors of the new model. Its
// subscribers are the embed workers, which read the DocRecord at SourceSeq or
// later from DocsBucket, embed its chunks through the vector cache, and put a
// VectorRecord; they ack only after that put.
type EmbedRequest struct {
	Repo      string `json:"repo"`
	Path      string `json:"path"`
	Model     string `json:"model"`
	SHA256    string `json:"sha256,omitempty"`
	SourceSeq uint64 `json:"source_seq"`
	Deleted   bool   `json:"deleted,omitempty"`
}

// EventKind implements Event.
func (EmbedRequest) EventKind() Kind { return KindEmbedRequest }

// Validate implements Event.
func (e EmbedRequest) Validate() error {
	if err := validRepoPath(e.Repo, e.Path); err != nil {
		return err
	}
	if e.Model == "" {
		return fmt.Errorf("%w: embed request for %s/%s names no model", ErrMalformed, e.Repo, e.Path)
	}
	if !e.Deleted && !validSHA(e.SHA256) {
		return fmt.Errorf("%w: embed request for %s/%s: sha256 %q is not 64 hex digits", ErrMalformed, e.Repo, e.Path, e.SHA256)
	}
	return nil
}

// EmbedRequestMsgID is the Nats-Msg-Id of an embed request: the file, the
// model and the content (or the deletion), so a retried request is dropped
// and a model switch is not.
func EmbedRequestMsgID(e EmbedRequest) string {
	what := e.SHA256
	if e.Deleted {
		what = "deleted@" + fmt.Sprint(e.SourceSeq)
	}
	return "embed/" + e.Model + "/" + e.Repo + "/" + msgIDPath(e.Path) + "@" + what
}

// ChunkVector is the vector of one DocRecord chunk.
type ChunkVector struct {
	StartLine int `json:"start"`
	EndLine   int `json:"end"`
	// Vector is the L2-normalised embedding: EncodeInt8Vector'd since
	// events 1.1, EncodeVector'd before; DecodeVector reads both.
	Vector string `json:"vector"`
}

// VectorRecord holds the chunk vectors of one file under one model.
//
// Stored in VectorsBucket under VectorKey(model, repo, path). Its publishers
// are the embed workers, writing with compare-and-set so a record of an older
// SourceSeq never replaces a newer one; its subscribers are the edges, which
// watch the keys of the model they query with (VectorKeyPrefix) and never
// compare vectors of different models. A record whose document was deleted
// is removed from the bucket.
//
// Chunks follow the DocRecord's Chunks that have text, in order; their line
// ranges name the section a semantic hit matched. A record must stay under
// the server's payload limit, so a file with more chunks than fit has only
// its first ones embedded and ChunksOmitted counts the rest. A file without
// text has a record with no chunks (and Dimensions 0 if the model has not
// said its length yet), so it is known to be embedded.
type VectorRecord struct {
	Repo       string        `json:"repo"`
	Path       string        `json:"path"`
	Model      string        `json:"model"`
	Dimensions int           `json:"dims"`
	SHA256     string        `json:"sha256"`
	SourceSeq  uint64        `json:"source_seq"`
	Chunks     []ChunkVector `json:"chunks"`
	// ChunksOmitted is how many of the file's chunks with text were left
	// out to keep the record under the payload limit.
	ChunksOmitted int `json:"chunks_omitted,omitempty"`
	// LeftOut says the workers that wrote the record embed prose only
	// ([embed] files) and the file is not prose (code, data): it holds no
	// chunks, and the file is found by keyword search alone. Workers that
	// embed every file embed such a file again.
	LeftOut bool `json:"left_out,omitempty"`
}

// EventKind implements Event.
func (VectorRecord) EventKind() Kind { return KindVectorRecord }

// Validate implements Event.
func (r VectorRecord) Validate() error {
	if err := validRepoPath(r.Repo, r.Path); err != nil {
		return err
	}
	if r.Model == "" || r.Dimensions < 0 || (r.Dimensions == 0 && len(r.Chunks) > 0) {
		return fmt.Errorf("%w: vector record for %s/%s needs a model and dimensions", ErrMalformed, r.Repo, r.Path)
	}
	floats := base64.StdEncoding.EncodedLen(4 * r.Dimensions)
	codes := len(int8Prefix) + base64.StdEncoding.EncodedLen(4+r.Dimensions)
	for i, c := range r.Chunks {
		want := floats
		if strings.HasPrefix(c.Vector, int8Prefix) {
			want = codes
		}
		if len(c.Vector) != want {
			return fmt.Errorf("%w: vector record for %s/%s: chunk %d holds %d bytes, %d dimensions need %d", ErrMalformed, r.Repo, r.Path, i, len(c.Vector), r.Dimensions, want)
		}
	}
	return nil
}

// DecodeVectorRecord decodes an encoded VectorRecord.
func DecodeVectorRecord(b []byte) (VectorRecord, error) {
	ev, err := Decode(b)
	if err != nil {
		return VectorRecord{}, err
	}
	rec, ok := ev.(VectorRecord)
	if !ok {
		return VectorRecord{}, fmt.Errorf("%w: expected %s, got %s", ErrMalformed, KindVectorRecord, ev.EventKind())
	}
	return rec, nil
}

// ModelKey is a model id as a KV key token: unpadded base64url, because ids
// hold ':' and other characters keys refuse.
func ModelKey(model string) string { return base64.RawURLEncoding.EncodeToString([]byte(model)) }

// VectorKey is the cue_vectors key of a file's vectors under model: the
// model token, a dot, and the file's DocKey.
func VectorKey(model, repo, path string) string { return ModelKey(model) + "." + DocKey(repo, path) }

// VectorKeyPrefix is the KV filter matching every vector record of model.
func VectorKeyPrefix(model string) string { return ModelKey(model) + ".>" }

// ParseVectorKey is the inverse of VectorKey.
func ParseVectorKey(key string) (model, repo, path string, err error) {
	i := strings.IndexByte(key, '.')
	if i <= 0 {
		return "", "", "", fmt.Errorf("%w: vector key %q has no model", ErrMalformed, key)
	}
	raw, err := base64.RawURLEncoding.DecodeString(key[:i])
	if err != nil {
		return "", "", "", fmt.Errorf("%w: vector key %q: %v", ErrMalformed, key, err)
	}
	repo, path, err = ParseDocKey(key[i+1:])
	return string(raw), repo, path, err
}

// int8Prefix marks a vector encoded by EncodeInt8Vector; standard base64
// never holds a colon, so the two encodings cannot be confused.
const int8Prefix = "q8:"

// EncodeInt8Vector encodes v as its int8 codes: "q8:" and the standard
// base64 of the little-endian float32 scale followed by one signed byte per
// dimension (vector.Quantize). A quarter of EncodeVector's size, and
// lossless for the edges, which keep vectors as exactly these codes.
func EncodeInt8Vector(v []float32) string {
	return int8Prefix + base64.StdEncoding.EncodeToString(vector.AppendCodes(make([]byte, 0, 4+len(v)), v))
}

// EncodeVector encodes v as standard base64 of little-endian float32s.
func EncodeVector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// DecodeVector is the inverse of EncodeVector and of EncodeInt8Vector.
func DecodeVector(s string) ([]float32, error) {
	if rest, ok := strings.CutPrefix(s, int8Prefix); ok {
		return decodeInt8Vector(rest)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: vector: %v", ErrMalformed, err)
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: vector of %d bytes is not whole float32s", ErrMalformed, len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// AppendVectorCodes appends to dst the scale and int8 codes of a vector
// EncodeInt8Vector encoded, as vector.AppendCodes lays them out, without
// going through float32s; ok is false, and dst returned as it is, for a
// vector EncodeVector encoded (DecodeVector reads those).
func AppendVectorCodes(dst []byte, s string) (out []byte, ok bool, err error) {
	rest, ok := strings.CutPrefix(s, int8Prefix)
	if !ok {
		return dst, false, nil
	}
	start := len(dst)
	out, err = base64.StdEncoding.AppendDecode(dst, []byte(rest))
	if err != nil {
		return dst, true, fmt.Errorf("%w: int8 vector: %v", ErrMalformed, err)
	}
	if err := checkCodes(out[start:]); err != nil {
		return dst, true, err
	}
	return out, true, nil
}

// checkCodes refuses codes without a scale or with one that maps them to
// no vector.
func checkCodes(b []byte) error {
	if len(b) < 4 {
		return fmt.Errorf("%w: int8 vector of %d bytes has no scale", ErrMalformed, len(b))
	}
	if scale := vector.CodesScale(b); math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) || scale < 0 {
		return fmt.Errorf("%w: int8 vector with scale %v", ErrMalformed, scale)
	}
	return nil
}

func decodeInt8Vector(s string) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: int8 vector: %v", ErrMalformed, err)
	}
	if err := checkCodes(b); err != nil {
		return nil, err
	}
	v := make([]float32, len(b)-4)
	vector.DecodeCodes(v, b)
	return v, nil
}
