// Package transcript reads agent conversation transcripts — Claude Code
// session JSONL and the generic chat JSONL (events.TranscriptClaudeCode,
// events.TranscriptChatJSONL) — into what the extractor works on: the
// conversation's prose messages, its tool calls as auto-supersede sees them,
// the files it modified, and salience signals for each message.
//
// The package is pure: it parses lines it is given and does no I/O.
package transcript

import (
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/prune"
)

// Role is who wrote a message.
type Role string

// The roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// Message is one prose message of a conversation: a user's typed prompt, an
// assistant's text, or a tool's result summarised for salience.
type Message struct {
	// Index is the message's position in Conversation.Messages.
	Index int
	// ID is the line's uuid when the format has one, else "<offset>".
	ID   string
	Role Role
	Text string
	// Offset is the byte offset in the transcript of the line it came from.
	Offset int64
	Time   time.Time
	// Turn is the conversation turn: it advances at each user prompt.
	Turn int
	// Synthetic marks text the client generated rather than a person or the
	// model (task notifications, system reminders, command output): kept
	// for context, never a source of decisions.
	Synthetic bool
	// ToolError marks a tool result that reported an error.
	ToolError bool
	// CallID is, for a RoleTool message, the id of the call whose result
	// it summarises (find it in Conversation.Calls).
	CallID string
}

// Conversation is a parsed transcript, or a batch of one.
type Conversation struct {
	Session string
	Agent   string
	// Cwd is the working directory the lines report (the last one seen).
	Cwd      string
	Messages []Message
	// Calls are the tool calls in call order, with their results attached
	// (Status completed or error, Output, Turn), ready for prune.Supersede.
	Calls []prune.ToolCall
	// FilesModified are the paths of write and edit calls in call order,
	// repeats dropped.
	FilesModified []string
	// Turns is the number of the last turn seen.
	Turns int
	// Lines is how many lines were read; Skipped how many were not
	// conversation (attachments, queue operations, unknown types) or could
	// not be read.
	Lines, Skipped int
}
