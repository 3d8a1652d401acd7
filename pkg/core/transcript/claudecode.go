package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ccLine is the part of a Claude Code transcript line the parser reads.
// Fields that vary between client versions (timestamp, origin) are kept raw
// so that a new shape there does not cost the whole line.
type ccLine struct {
	Type             string          `json:"type"`
	UUID             string          `json:"uuid"`
	SessionID        string          `json:"sessionId"`
	AgentID          string          `json:"agentId"`
	IsSidechain      bool            `json:"isSidechain"`
	Cwd              string          `json:"cwd"`
	Timestamp        json.RawMessage `json:"timestamp"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	PromptSource     string          `json:"promptSource"`
	Origin           json.RawMessage `json:"origin"`
	Message          *ccMessage      `json:"message"`
}

type ccMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ccBlock is one content block: text, tool_use, tool_result (thinking and
// image blocks are read and ignored).
type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (p *parser) claudeCode(raw json.RawMessage) {
	var l ccLine
	if json.Unmarshal(raw, &l) != nil {
		p.skip()
		return
	}
	switch l.Type {
	case "user", "assistant":
	default:
		// attachment, queue-operation, last-prompt, cost-state, tools-used,
		// atis-latch, system, summary and whatever later versions add.
		p.skip()
		return
	}
	if l.Message == nil {
		p.skip()
		return
	}
	content := bytes.TrimSpace(l.Message.Content)
	var text string
	var blocks []ccBlock
	isString := len(content) > 0 && content[0] == '"'
	switch {
	case isString:
		if json.Unmarshal(content, &text) != nil {
			p.skip()
			return
		}
	case len(content) > 0 && content[0] == '[':
		if json.Unmarshal(content, &blocks) != nil {
			p.skip()
			return
		}
	default:
		p.skip()
		return
	}

	if l.SessionID != "" && p.c.Session == "" {
		p.c.Session = l.SessionID
	}
	if l.IsSidechain && l.AgentID != "" && p.c.Agent == "" {
		p.c.Agent = l.AgentID
	}
	if l.Cwd != "" {
		p.c.Cwd = l.Cwd
	}
	p.lineID = l.UUID
	t := parseTime(l.Timestamp)

	if l.Type == "assistant" {
		if isString {
			p.add(Message{Role: RoleAssistant, Text: text, Time: t})
			return
		}
		// Claude Code writes each content block on its own line, but an
		// older or foreign writer may put several in one: texts become one
		// message, before the calls the model made after writing them.
		var texts []string
		for _, b := range blocks {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				texts = append(texts, b.Text)
			}
		}
		if len(texts) > 0 {
			p.add(Message{Role: RoleAssistant, Text: strings.Join(texts, "\n\n"), Time: t})
		}
		for _, b := range blocks {
			if b.Type == "tool_use" {
				p.call(b.ID, b.Name, params(b.Input))
			}
		}
		return
	}

	synthetic := l.IsMeta || l.IsCompactSummary || l.PromptSource == "system" || originIsClient(l.Origin)
	if isString {
		// Meta lines ride along with a prompt (skill bodies, reminders);
		// they do not start a turn of their own.
		if !l.IsMeta {
			p.prompt()
		}
		p.add(Message{Role: RoleUser, Text: text, Time: t, Synthetic: synthetic || isClientText(text)})
		return
	}
	hasResult := false
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			hasResult = true
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				texts = append(texts, b.Text)
			}
		}
	}
	if len(texts) > 0 {
		// A prompt with an image or a pasted file comes as blocks; text
		// beside tool results is what hooks and the client add.
		joined := strings.Join(texts, "\n\n")
		if !hasResult && !l.IsMeta {
			p.prompt()
		}
		p.add(Message{Role: RoleUser, Text: joined, Time: t, Synthetic: synthetic || hasResult || isClientText(joined)})
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			p.result(b.ToolUseID, resultText(b.Content), b.IsError, t)
		}
	}
}

// originIsClient reports an origin (Claude Code 2.1's provenance of a
// prompt) that is not a person: a task notification, a scheduled prompt.
func originIsClient(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var o struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	return o.Kind != "" && o.Kind != "user" && o.Kind != "human"
}

// resultText is a tool result's content: a string, or the text of an array
// of blocks (images and other blocks dropped).
func resultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		var texts []string
		for _, part := range parts {
			if part.Type == "text" {
				texts = append(texts, part.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}
