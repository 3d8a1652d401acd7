package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxPayload bounds what is read from stdin: hook payloads are a few
// hundred bytes (a PostToolUse's tool_response can be larger), and a
// runaway writer must not make a hook allocate without limit.
const MaxPayload = 1 << 20

// Event names Claude Code sends in hook_event_name.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	Stop             = "Stop"
	SubagentStop     = "SubagentStop"
	PreCompact       = "PreCompact"
)

// InstalledEvents are the events `cue hook install` registers.
var InstalledEvents = []string{SessionStart, UserPromptSubmit, Stop, SubagentStop, PreCompact}

// Payload is the part of a hook's stdin JSON that CueDeck uses; other
// fields are ignored.
type Payload struct {
	SessionID           string `json:"session_id"`
	TranscriptPath      string `json:"transcript_path"`
	Cwd                 string `json:"cwd"`
	HookEventName       string `json:"hook_event_name"`
	Prompt              string `json:"prompt,omitempty"`
	AgentID             string `json:"agent_id,omitempty"`
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`
	Source              string `json:"source,omitempty"`  // SessionStart: startup, resume, clear, compact
	Trigger             string `json:"trigger,omitempty"` // PreCompact: manual or auto
}

// ErrPayloadTooLarge is returned by ReadPayload when stdin holds more than
// MaxPayload bytes.
var ErrPayloadTooLarge = errors.New("hook payload larger than 1 MiB")

// ReadPayload decodes one payload from r, reading at most MaxPayload bytes.
// Empty input is an empty payload (a hook run by hand); invalid JSON is an
// error naming what was wrong.
func ReadPayload(r io.Reader) (Payload, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return Payload{}, fmt.Errorf("read hook payload: %w", err)
	}
	if len(b) > MaxPayload {
		return Payload{}, ErrPayloadTooLarge
	}
	var p Payload
	if len(strings.TrimSpace(string(b))) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return Payload{}, fmt.Errorf("hook payload is not the JSON object Claude Code sends: %w", err)
	}
	return p, nil
}

// SystemGenerated reports whether a UserPromptSubmit prompt was written by
// Claude Code rather than the user: a background subagent finishing sends
// a <task-notification> as a prompt, and context injected there would be
// noise the user never asked for.
func (p Payload) SystemGenerated() bool {
	return strings.HasPrefix(strings.TrimSpace(p.Prompt), "<task-notification>")
}

// Signal is the datagram a hook sends the daemon: the payload without the
// prompt, which the daemon does not need and which may be long or private.
type Signal struct {
	Event               string `json:"event"`
	Workspace           string `json:"workspace"`
	SessionID           string `json:"session_id,omitempty"`
	TranscriptPath      string `json:"transcript_path,omitempty"`
	AgentID             string `json:"agent_id,omitempty"`
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`
	Cwd                 string `json:"cwd,omitempty"`
	Source              string `json:"source,omitempty"`
}

// SignalFor is the signal of payload p for the workspace at root.
func SignalFor(p Payload, root string) Signal {
	return Signal{
		Event: p.HookEventName, Workspace: root, SessionID: p.SessionID, TranscriptPath: p.TranscriptPath,
		AgentID: p.AgentID, AgentTranscriptPath: p.AgentTranscriptPath, Cwd: p.Cwd, Source: p.Source,
	}
}
