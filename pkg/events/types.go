package events

import (
	"encoding/json"
	"time"
)

// Event is any of the versioned event types of this package.
type Event interface {
	// EventKind is the kind written on the wire.
	EventKind() Kind
	// Validate reports a structural problem that makes the event unusable;
	// the error wraps ErrMalformed, ErrInvalidRepo or ErrInvalidPath.
	Validate() error
}

// FileUpserted says a file was created or its content changed.
//
// Subject FileSubject(repo) on IngestStream; Nats-Msg-Id FileUpsertedMsgID.
// Its publisher is ingest (the repository walker and watcher); its subscriber
// is the indexer, which turns it into a DocRecord.
//
// Content holds the file when it is at most the ingest's inline limit;
// otherwise Blob names an object in BlobsBucket (its SHA-256) and Content is
// empty. Content is valid UTF-8: invalid bytes were replaced by U+FFFD and
// UTF8Repaired says so; SHA256 is always of the bytes on disk.
type FileUpserted struct {
	Repo         string    `json:"repo"`
	Path         string    `json:"path"`
	SHA256       string    `json:"sha256"`
	Size         int64     `json:"size"`
	ModTime      time.Time `json:"mtime"`
	Content      string    `json:"content,omitempty"`
	Blob         string    `json:"blob,omitempty"`
	UTF8Repaired bool      `json:"utf8_repaired,omitempty"`
	// First says ingest has no record of publishing Path before, so the
	// indexer stores the record without first looking for an older one
	// (it still looks when one turns out to be there). A hint: when it is
	// wrong, or absent, only that lookup is spent.
	First bool `json:"first,omitempty"`
	// Repeat says the file is as ingest published it before: this publish
	// repeats that one because a comparison found what it led to lost (the
	// document's record, or the card's task in a task log restored from a
	// backup). A card repeated changes a task only where the log lacks it
	// or holds it as of a change no later than the card's updated time.
	Repeat bool `json:"repeat,omitempty"`
	// WrittenBackFrom says the file is a task card as ingest's card
	// write-back wrote it, unchanged since, from the task log incarnation
	// it names (bus.StreamState.ID): while that log is the task log, the
	// card holds the log's own state of its task (or an older one, when
	// the log moved on before the file was read), so the indexer indexes
	// it and changes no task. A card edited, or published for any other
	// reason, goes without it.
	WrittenBackFrom string `json:"written_back_from,omitempty"`
}

// FileDeleted says a file is gone (deleted, or renamed away from Path).
//
// Subject FileSubject(repo) on IngestStream; Nats-Msg-Id FileDeletedMsgID.
// Its publisher is ingest; its subscriber is the indexer, which writes a
// tombstone DocRecord so that an older upsert delivered late cannot revive it.
type FileDeleted struct {
	Repo       string    `json:"repo"`
	Path       string    `json:"path"`
	PrevSHA256 string    `json:"prev_sha256,omitempty"`
	PrevMod    time.Time `json:"prev_mtime"`
}

// SkipReason says why ingest did not send a file's content.
type SkipReason string

// The reasons a file is skipped.
const (
	SkipBinary         SkipReason = "binary"
	SkipTooLarge       SkipReason = "too_large"
	SkipSymlinkEscapes SkipReason = "symlink_escapes_repo"
	SkipUnreadable     SkipReason = "unreadable"
	SkipNotRegular     SkipReason = "not_regular_file"
)

// FileSkipped says ingest saw a file and will not index it, and why, so the
// skip is visible (cue status, read_doc) rather than silent.
//
// Subject FileSubject(repo) on IngestStream; Nats-Msg-Id FileSkippedMsgID.
// Its publisher is ingest; its subscriber is the indexer, which records it
// as a DocRecord with Skip set.
type FileSkipped struct {
	Repo    string     `json:"repo"`
	Path    string     `json:"path"`
	Size    int64      `json:"size"`
	ModTime time.Time  `json:"mtime"`
	Reason  SkipReason `json:"reason"`
	Detail  string     `json:"detail,omitempty"`
	// First is FileUpserted.First.
	First bool `json:"first,omitempty"`
}

// TranscriptBatch carries new whole lines of one agent transcript: a
// session's own file, or a subagent's beside it (Agent set).
//
// Subject TranscriptSubject(repo) on IngestStream; Nats-Msg-Id
// TranscriptBatchMsgID(repo, StreamKey(), StartOffset). Its publisher is
// ingest's transcript tailer, which maps the transcript to a repo by the
// cwd its lines carry; its subscriber is the extractor.
//
// Lines holds every complete line from StartOffset up to EndOffset that is
// valid JSON, in order, with Offsets[i] the byte offset of Lines[i] in the
// file. Lines that are not JSON (a torn write, a corrupted file) are left
// out and counted in BadLines, so the offsets of a batch are never
// computed from the lengths of its lines. A partial last line is never
// sent: EndOffset is just past the last newline read.
type TranscriptBatch struct {
	Repo    string `json:"repo"`
	Session string `json:"session"`
	// Agent is the subagent id for a subagent's transcript, "" for the
	// session's own.
	Agent string `json:"agent,omitempty"`
	// Source is the transcript's path on the machine that tailed it.
	Source string `json:"source"`
	// Format is TranscriptClaudeCode or TranscriptChatJSONL.
	Format      string            `json:"format"`
	Cwd         string            `json:"cwd,omitempty"`
	StartOffset int64             `json:"start_offset"`
	EndOffset   int64             `json:"end_offset"`
	Lines       []json.RawMessage `json:"lines"`
	Offsets     []int64           `json:"offsets,omitempty"`
	BadLines    int               `json:"bad_lines,omitempty"`
	// Final is set when the batch was flushed because the session or
	// subagent stopped (a Stop or SubagentStop hook), so the extractor
	// knows the outcome of the work is in.
	Final bool `json:"final,omitempty"`
}

// StreamKey names the transcript a batch comes from: the session, and the
// subagent after a "~" when there is one. Subagents share their parent's
// session id, so the session alone does not tell two files apart.
func (e TranscriptBatch) StreamKey() string {
	if e.Agent == "" {
		return e.Session
	}
	return e.Session + "~" + e.Agent
}

// Transcript formats.
const (
	// TranscriptClaudeCode is Claude Code's session JSONL
	// (~/.claude/projects/<dir>/<session>.jsonl and
	// <session>/subagents/agent-<id>.jsonl).
	TranscriptClaudeCode = "claude-code"
	// TranscriptChatJSONL is the generic chat format: one message per line,
	// {"role", "content", "name"?, "tool_calls"?, "tool_call_id"?,
	// "is_error"?, "timestamp"?, "session"?, "cwd"?}, as OpenAI-style chat
	// logs write them.
	TranscriptChatJSONL = "chat-jsonl"
)

// TaskOp is what a TaskEvent does to a task.
type TaskOp string

// Task operations.
const (
	TaskCreated TaskOp = "created"
	TaskUpdated TaskOp = "updated"
	TaskDeleted TaskOp = "deleted"
)

// Task is the state of a task card.
type Task struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Status    string   `json:"status"`
	Priority  string   `json:"priority"`
	Assignee  string   `json:"assignee,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	Notes     string   `json:"notes,omitempty"`
	// CloseReason says why a done or archived task was closed ("fixed in
	// 4f2a1c", "duplicate of k3m9qa"); reopening the task clears it.
	CloseReason string        `json:"close_reason,omitempty"`
	Comments    []TaskComment `json:"comments,omitempty"`
	Created     time.Time     `json:"created"`
	Updated     time.Time     `json:"updated"`
	Path        string        `json:"path"`
}

// TaskComment is one remark on a task, oldest first in Task.Comments: what
// was tried, found or decided while working on it. By names who wrote it
// when known (the token of an MCP call, the user of `cue tasks comment`).
type TaskComment struct {
	At   time.Time `json:"at"`
	By   string    `json:"by,omitempty"`
	Text string    `json:"text"`
}

// TaskEvent is one mutation of a repo's task log.
//
// Subject TaskSubject(repo) on TasksStream, published with the expected last
// subject sequence so writers on different edges serialise. Its publishers
// are the indexer (card files changed) and the edges (MCP task tools); its
// subscribers are the edges, which materialise the board, and ingest, which
// writes MCP-made changes back into card files.
type TaskEvent struct {
	Repo   string `json:"repo"`
	Op     TaskOp `json:"op"`
	Task   Task   `json:"task"`
	Actor  string `json:"actor,omitempty"`
	Source string `json:"source,omitempty"`
	// RequestID is the client's id for the call that made the event
	// (create_task's and update_task's request_id): a retry with the same
	// id finds this event and writes nothing.
	RequestID string `json:"request_id,omitempty"`
}

// Heading is a markdown heading and the lines its section spans (1-indexed,
// inclusive: from the heading to the line before the next heading of the
// same or a higher level, or the end of the file).
type Heading struct {
	Level     int    `json:"level"`
	Text      string `json:"text"`
	Slug      string `json:"slug"`
	Line      int    `json:"line"`
	EndLine   int    `json:"end_line"`
	ParentIdx int    `json:"parent,omitempty"`
}

// Link is a reference from a document: a markdown link or an @doc reference.
type Link struct {
	Target string `json:"target"`
	Anchor string `json:"anchor,omitempty"`
	Text   string `json:"text,omitempty"`
	Line   int    `json:"line"`
	Kind   string `json:"kind"`
}

// Chunk is a piece of a document that search scores on its own.
type Chunk struct {
	StartLine   int      `json:"start"`
	EndLine     int      `json:"end"`
	HeadingPath []string `json:"heading_path,omitempty"`
	Tokens      int      `json:"tokens"`
}

// Skip records why a file is known but not indexed.
type Skip struct {
	Reason SkipReason `json:"reason"`
	Detail string     `json:"detail,omitempty"`
}

// DocKind classifies a DocRecord.
type DocKind string

// Document kinds.
const (
	DocMarkdown DocKind = "markdown"
	DocCode     DocKind = "code"
	DocText     DocKind = "text"
	DocCard     DocKind = "card"
)

// DocRecord is what the indexer derives from one file: the unit edges
// materialise and search.
//
// Stored in the KV bucket DocsBucket under DocKey(repo, path). Its publisher
// is the indexer, writing with compare-and-set so that a record built from
// an older ingest message (SourceSeq) never replaces a newer one; its
// subscribers are the edges, which watch the bucket.
//
// A record is one of three states: indexed (Content or Blob set), deleted
// (Deleted, a tombstone kept for ordering) or skipped (Skip set).
type DocRecord struct {
	Repo        string         `json:"repo"`
	Path        string         `json:"path"`
	SHA256      string         `json:"sha256,omitempty"`
	Size        int64          `json:"size"`
	ModTime     time.Time      `json:"mtime"`
	SourceSeq   uint64         `json:"source_seq"`
	Kind        DocKind        `json:"doc_kind,omitempty"`
	Language    string         `json:"language,omitempty"`
	Tokens      int            `json:"tokens"`
	Lines       int            `json:"lines"`
	Title       string         `json:"title,omitempty"`
	Headings    []Heading      `json:"headings,omitempty"`
	Links       []Link         `json:"links,omitempty"`
	Frontmatter map[string]any `json:"frontmatter,omitempty"`
	Chunks      []Chunk        `json:"chunks,omitempty"`
	Warnings    []string       `json:"warnings,omitempty"`
	Content     string         `json:"content,omitempty"`
	Blob        string         `json:"blob,omitempty"`
	Deleted     bool           `json:"deleted,omitempty"`
	Skip        *Skip          `json:"skip,omitempty"`
	IndexedAt   time.Time      `json:"indexed_at"`
	// Changed are the times (IndexedAt) of the content changes of the
	// path after its first version, oldest first: the indexer carries them
	// from the record it replaces and adds one when the SHA-256 differs
	// (importance.CarryChanges: those of the last 30 days, at most 32).
	// The edges score recent changes from them (file importance).
	Changed []time.Time `json:"changed,omitempty"`
}

// EventKind implements Event.
func (FileUpserted) EventKind() Kind { return KindFileUpserted }

// EventKind implements Event.
func (FileDeleted) EventKind() Kind { return KindFileDeleted }

// EventKind implements Event.
func (FileSkipped) EventKind() Kind { return KindFileSkipped }

// EventKind implements Event.
func (TranscriptBatch) EventKind() Kind { return KindTranscriptBatch }

// EventKind implements Event.
func (TaskEvent) EventKind() Kind { return KindTask }

// EventKind implements Event.
func (DocRecord) EventKind() Kind { return KindDocRecord }
