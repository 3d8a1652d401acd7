// Package events holds the contracts between CueDeck's roles: the versioned
// events that travel through JetStream, their subjects, their message ids and
// their encoding. Every role imports it; it imports no NATS, Badger or MCP
// code, so a contract can be read and tested on its own.
package events

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Version is written into every encoded event. Decoders accept any minor
// version of MajorVersion (fields are only ever added within a major) and
// reject other majors with ErrUnsupportedVersion.
const (
	MajorVersion = 1
	MinorVersion = 1
	Version      = "1.1"
)

// Kind names an event type on the wire.
type Kind string

// The kinds of event CueDeck publishes.
const (
	KindFileUpserted    Kind = "file.upserted"
	KindFileDeleted     Kind = "file.deleted"
	KindFileSkipped     Kind = "file.skipped"
	KindTranscriptBatch Kind = "transcript.batch"
	KindTask            Kind = "task"
	KindDocRecord       Kind = "doc.record"
)

// Subjects and names of the JetStream assets. They live here, beside the
// events, because every role must agree on them; internal/bus provisions them.
const (
	// IngestStream carries file and transcript events from ingest to the
	// workers, each event taken once by one consumer's workers, who trim
	// the events they acknowledged (a stream created by a release before
	// that is a work queue, whose acks remove its events, until it is
	// created again empty).
	IngestStream = "CUE_INGEST"
	// SubjectFilePrefix + repo is the subject of FileUpserted, FileDeleted and
	// FileSkipped.
	SubjectFilePrefix = "cue.ingest.file."
	// SubjectTranscriptPrefix + repo is the subject of TranscriptBatch.
	SubjectTranscriptPrefix = "cue.ingest.transcript."
	// TasksStream holds the task log; SubjectTaskPrefix + repo its subjects.
	TasksStream       = "CUE_TASKS"
	SubjectTaskPrefix = "cue.tasks."
	// DeadLetterStream keeps events that a worker gave up on, with the error.
	DeadLetterStream        = "CUE_DEAD"
	SubjectDeadLetterPrefix = "cue.dead."
	// DocsBucket is the KV bucket of DocRecords, one per file, keyed by DocKey.
	DocsBucket = "cue_docs"
	// BlobsBucket is the object store holding file contents too large to
	// travel inline, named by their SHA-256.
	BlobsBucket = "cue_blobs"
	// IndexerConsumer is the durable consumer the indexer workers share.
	IndexerConsumer = "indexer"
)

// Header names carried by published messages besides Nats-Msg-Id.
const (
	// HeaderKind repeats the event kind so tools can route without decoding.
	HeaderKind = "Cue-Kind"
	// HeaderTaskWriter names the task board that wrote a task event, so
	// a board tells its own writes from others'.
	HeaderTaskWriter = "Cue-Task-Writer"
	// HeaderDeadError, HeaderDeadStream, HeaderDeadSeq, HeaderDeadSubject and
	// HeaderDeadConsumer describe why and where a dead letter died.
	HeaderDeadError    = "Cue-Dead-Error"
	HeaderDeadStream   = "Cue-Dead-Stream"
	HeaderDeadSeq      = "Cue-Dead-Stream-Seq"
	HeaderDeadSubject  = "Cue-Dead-Subject"
	HeaderDeadConsumer = "Cue-Dead-Consumer"
	HeaderDeadDeliver  = "Cue-Dead-Deliveries"
)

// Errors returned by Decode and the validators.
var (
	ErrUnsupportedVersion = errors.New("unsupported event version")
	ErrUnknownKind        = errors.New("unknown event kind")
	ErrMalformed          = errors.New("malformed event")
	ErrInvalidRepo        = errors.New("invalid repo name")
	ErrInvalidPath        = errors.New("invalid path")
)

var repoNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidateRepo reports whether name can be a repo name: it becomes a subject
// token and a KV key prefix, so it is limited to letters, digits, '-' and '_'
// (1 to 64, starting with a letter or digit). The error wraps ErrInvalidRepo.
func ValidateRepo(name string) error {
	if !repoNamePattern.MatchString(name) {
		return fmt.Errorf("%w %q: use 1-64 letters, digits, '-' or '_', starting with a letter or digit", ErrInvalidRepo, name)
	}
	return nil
}

// RepoNameFrom turns a directory name into a valid repo name, replacing what
// a subject token cannot hold. It returns "workspace" when nothing is left.
func RepoNameFrom(dirName string) string {
	var b strings.Builder
	for _, r := range dirName {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.TrimLeft(b.String(), "-_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return "workspace"
	}
	return name
}

// ValidatePath reports whether p is a clean, relative, slash-separated path
// inside a repository: no leading '/', no '.' or '..' segments, no NUL. The
// error wraps ErrInvalidPath.
func ValidatePath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty", ErrInvalidPath)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%w %q: must be relative to the repository root", ErrInvalidPath, p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%w %q: contains NUL", ErrInvalidPath, p)
	case strings.Contains(p, "\\"):
		return fmt.Errorf("%w %q: use '/' as the separator", ErrInvalidPath, p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w %q: segments must not be empty, '.' or '..'", ErrInvalidPath, p)
		}
	}
	return nil
}

// FileSubject is the subject of file events for repo.
func FileSubject(repo string) string { return SubjectFilePrefix + repo }

// TranscriptSubject is the subject of transcript batches for repo.
func TranscriptSubject(repo string) string { return SubjectTranscriptPrefix + repo }

// TaskSubject is the subject of the task log of repo.
func TaskSubject(repo string) string { return SubjectTaskPrefix + repo }

// DocKey is the cue_docs key of a file: the repo, a dot, and the path in
// unpadded base64url, because KV keys allow only [-/_=.a-zA-Z0-9] and paths
// hold anything.
func DocKey(repo, path string) string {
	return repo + "." + base64.RawURLEncoding.EncodeToString([]byte(path))
}

// ParseDocKey is the inverse of DocKey.
func ParseDocKey(key string) (repo, path string, err error) {
	i := strings.IndexByte(key, '.')
	if i <= 0 {
		return "", "", fmt.Errorf("%w: doc key %q has no repo", ErrMalformed, key)
	}
	raw, err := base64.RawURLEncoding.DecodeString(key[i+1:])
	if err != nil {
		return "", "", fmt.Errorf("%w: doc key %q: %v", ErrMalformed, key, err)
	}
	return key[:i], string(raw), nil
}

// DocsSubject is the subject of key's entries in the stream behind
// DocsBucket.
func DocsSubject(key string) string { return "$KV." + DocsBucket + "." + key }

// DocKeyPrefix is the KV filter matching every doc of repo.
func DocKeyPrefix(repo string) string { return repo + ".>" }

// msgIDPath keeps message ids short for deep paths; the hash keeps them unique.
func msgIDPath(path string) string {
	if len(path) <= 200 {
		return path
	}
	sum := sha256.Sum256([]byte(path))
	return path[:120] + "…" + hex.EncodeToString(sum[:8])
}

// FileUpsertedMsgID is the Nats-Msg-Id of an upsert: the file's identity, its
// content hash and its modification time. The time is there because content
// alone would make an edit A→B→A inside the duplicate window look like a
// retry of the first A, and JetStream would drop it.
func FileUpsertedMsgID(repo, path, sha string, modTime time.Time) string {
	return repo + "/" + msgIDPath(path) + "@" + sha + "@" + strconv.FormatInt(modTime.UnixNano(), 36)
}

// FileDeletedMsgID is the Nats-Msg-Id of a deletion of the version with
// prevSHA and prevModTime; a later deletion of a later version differs.
func FileDeletedMsgID(repo, path, prevSHA string, prevModTime time.Time) string {
	return repo + "/" + msgIDPath(path) + "@deleted@" + prevSHA + "@" + strconv.FormatInt(prevModTime.UnixNano(), 36)
}

// FileSkippedMsgID is the Nats-Msg-Id of a skip report.
func FileSkippedMsgID(repo, path string, reason SkipReason, size int64, modTime time.Time) string {
	return repo + "/" + msgIDPath(path) + "@skipped@" + string(reason) + "@" + strconv.FormatInt(size, 36) + "@" + strconv.FormatInt(modTime.UnixNano(), 36)
}

// TranscriptBatchMsgID is the Nats-Msg-Id of a transcript batch: the
// transcript (TranscriptBatch.StreamKey) and the byte offset the batch
// starts at.
func TranscriptBatchMsgID(repo, streamKey string, offset int64) string {
	return repo + "/" + streamKey + "@" + strconv.FormatInt(offset, 10)
}

// SHA256Hex is the hex SHA-256 of b, the content hash every event carries.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
