package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cuedeck/cuedeck/pkg/core/prune"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// ErrUnknownFormat is returned by Parse for a format other than
// events.TranscriptClaudeCode and events.TranscriptChatJSONL.
var ErrUnknownFormat = errors.New("transcript: unknown format")

// Parse reads the lines of a transcript, or of one batch of it, in format
// (events.TranscriptClaudeCode or events.TranscriptChatJSONL). offsets[i]
// is the byte offset of lines[i] in the file, as events.TranscriptBatch
// carries them; where offsets is shorter than lines (nil, say), the line's
// index stands in for its offset.
//
// A line that cannot be read (not a JSON object, a field of the wrong type)
// is counted in Skipped and the parse goes on: a transcript is written by
// another program while it is read, so one bad line must not lose the rest.
// The only error is one wrapping ErrUnknownFormat.
//
// Turns advance at each user prompt, a client-generated one included (a
// task notification is a prompt the model answers); turn 0 holds what comes
// before the first prompt of the lines, so turn numbers are relative to the
// lines given, not to the whole session. A tool result whose call is not
// among the lines (it was in an earlier batch) still gives its RoleTool
// message, with CallID set, but updates no call.
func Parse(format string, lines []json.RawMessage, offsets []int64) (Conversation, error) {
	p := parser{calls: make(map[string]int)}
	switch format {
	case events.TranscriptClaudeCode:
		p.tools = claudeCodeTools
		for i, line := range lines {
			p.line(offsetOf(offsets, i))
			p.claudeCode(line)
		}
	case events.TranscriptChatJSONL:
		p.tools = chatTools
		for i, line := range lines {
			p.line(offsetOf(offsets, i))
			p.chat(line)
		}
	default:
		return Conversation{}, fmt.Errorf("%w %q (use %s or %s)", ErrUnknownFormat, format, events.TranscriptClaudeCode, events.TranscriptChatJSONL)
	}
	p.c.Lines = len(lines)
	return p.c, nil
}

func offsetOf(offsets []int64, i int) int64 {
	if i < len(offsets) {
		return offsets[i]
	}
	return int64(i)
}

// toolNames is the part of a prune.Tools naming the parser needs: which
// calls change files, and which parameters name the file.
type toolNames struct {
	changes    map[string]bool
	pathParams []string
}

func namesOf(ts ...prune.Tools) toolNames {
	n := toolNames{changes: make(map[string]bool)}
	for _, t := range ts {
		for _, name := range append(append([]string(nil), t.Write...), t.Edit...) {
			n.changes[name] = true
		}
		for _, p := range t.FilePathParams {
			if !contains(n.pathParams, p) {
				n.pathParams = append(n.pathParams, p)
			}
		}
	}
	return n
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

var (
	claudeCodeTools = namesOf(prune.ClaudeCodeTools())
	// Generic chat logs come from agents of either naming, so both are
	// recognised; the names do not collide (Claude Code's are capitalised).
	chatTools = namesOf(prune.ClaudeCodeTools(), prune.SeedTools())
)

// changedFile is the file a write or edit call changes, "" for other calls.
func (n toolNames) changedFile(c prune.ToolCall) string {
	if !n.changes[c.Tool] {
		return ""
	}
	for _, p := range n.pathParams {
		if s, _ := c.Params[p].(string); s != "" {
			return s
		}
	}
	return ""
}

type parser struct {
	c     Conversation
	tools toolNames
	// calls indexes c.Calls by call id.
	calls map[string]int
	// files dedups c.FilesModified.
	files map[string]bool

	// The current line: its offset, id and how many messages it gave.
	offset  int64
	lineID  string
	emitted int
}

func (p *parser) line(offset int64) {
	p.offset, p.lineID, p.emitted = offset, "", 0
}

func (p *parser) skip() { p.c.Skipped++ }

// add appends a message from the current line. A line giving several
// messages (text and tool results) gives its later ones the ids "<id>#1",
// "<id>#2", so that ids stay unique for salience selection.
func (p *parser) add(m Message) {
	id := p.lineID
	if id == "" {
		id = strconv.FormatInt(p.offset, 10)
	}
	if p.emitted > 0 {
		id += "#" + strconv.Itoa(p.emitted)
	}
	p.emitted++
	m.Index = len(p.c.Messages)
	m.ID = id
	m.Offset = p.offset
	m.Turn = p.c.Turns
	p.c.Messages = append(p.c.Messages, m)
}

func (p *parser) prompt() { p.c.Turns++ }

func (p *parser) call(id, tool string, params map[string]any) {
	c := prune.ToolCall{ID: id, Tool: tool, Params: params, Turn: p.c.Turns, Status: prune.StatusPending}
	if id != "" {
		p.calls[id] = len(p.c.Calls)
	}
	p.c.Calls = append(p.c.Calls, c)
	if f := p.tools.changedFile(c); f != "" {
		if p.files == nil {
			p.files = make(map[string]bool)
		}
		if !p.files[f] {
			p.files[f] = true
			p.c.FilesModified = append(p.c.FilesModified, f)
		}
	}
}

// result attaches a tool result to its call and adds its RoleTool message.
func (p *parser) result(id, output string, isError bool, t time.Time) {
	var call *prune.ToolCall
	if i, ok := p.calls[id]; ok && id != "" {
		call = &p.c.Calls[i]
		call.Output = output
		call.Status = prune.StatusCompleted
		if isError {
			call.Status = prune.StatusError
		}
	}
	p.add(Message{Role: RoleTool, Text: summarise(call, output, isError), Time: t, ToolError: isError, CallID: id})
}

// Tool summaries keep the head of a result: enough to tell what happened,
// little enough that a long Read does not crowd salience selection's
// token budget. Errors keep more, since their text is the lesson.
const (
	summaryRunes      = 160
	errorSummaryRunes = 400
	keyRunes          = 80
)

func summarise(call *prune.ToolCall, output string, isError bool) string {
	var b strings.Builder
	if call != nil {
		b.WriteString(call.Tool)
		if k := callKey(call.Params); k != "" {
			b.WriteByte(' ')
			b.WriteString(truncate(k, keyRunes))
		}
	} else {
		b.WriteString("tool result")
	}
	b.WriteString(": ")
	if isError {
		b.WriteString("error: ")
		b.WriteString(truncate(strings.TrimSpace(output), errorSummaryRunes))
		return b.String()
	}
	first, _, _ := strings.Cut(strings.TrimSpace(output), "\n")
	if first == "" {
		first = "ok"
	}
	b.WriteString(truncate(first, summaryRunes))
	return b.String()
}

// callKey is what a call is about, for its summary: a path, a command, a
// pattern, a description — the first of these it has.
func callKey(params map[string]any) string {
	for _, k := range []string{"file_path", "notebook_path", "filePath", "path", "command", "pattern", "url", "query", "description"} {
		if s, _ := params[k].(string); s != "" {
			first, _, _ := strings.Cut(s, "\n")
			return first
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// parseTime reads an RFC 3339 string or Unix seconds or milliseconds; a
// timestamp it cannot read is the zero time, not a reason to drop the line.
func parseTime(raw json.RawMessage) time.Time {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return time.Time{}
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}
		}
		return t
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f <= 0 {
		return time.Time{}
	}
	// Seconds since the epoch stay below 1e11 until the year 5138.
	if f < 1e11 {
		return time.Unix(0, int64(f*1e9)).UTC()
	}
	return time.UnixMilli(int64(f)).UTC()
}

// params decodes a tool input: a JSON object, or (chat logs) a string
// holding one. Anything else is kept whole under "raw", so that calls with
// different inputs still hash differently for supersede.
func params(raw json.RawMessage) map[string]any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		if s == "" {
			return nil
		}
		raw = []byte(s)
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			return m
		}
		return map[string]any{"raw": s}
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		return m
	}
	return map[string]any{"raw": string(raw)}
}

// syntheticPrefixes open text that Claude Code (or a hook) writes into the
// user's side of the conversation: background task notifications, system
// reminders, slash commands and their local output, interruptions.
var syntheticPrefixes = []string{
	"<task-notification>", "<system-reminder>", "<command-name>", "<command-message>",
	"<command-args>", "<command-stdout>", "<local-command-stdout>", "<local-command-stderr>",
	"<local-command-caveat>", "<user-prompt-submit-hook>", "<bash-input>", "<bash-stdout>",
	"<bash-stderr>", "<user-memory-input>", "<new-diagnostics>",
	"[Request interrupted by user", "Caveat: The messages below were generated by the user while running local commands",
}

// isClientText reports text that a person did not type.
func isClientText(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	for _, p := range syntheticPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
