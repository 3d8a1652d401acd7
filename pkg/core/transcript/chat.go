package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
)

// chatLine is one line of the generic chat format (events.TranscriptChatJSONL).
type chatLine struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	IsError    bool            `json:"is_error"`
	Timestamp  json.RawMessage `json:"timestamp"`
	Session    string          `json:"session"`
	Cwd        string          `json:"cwd"`
}

// chatToolCall takes both the flat shape the format names ({"id", "name",
// "arguments"}) and OpenAI's ({"id", "type", "function": {"name",
// "arguments"}}), since logs of either kind are what people have.
type chatToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Function  *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

func (p *parser) chat(raw json.RawMessage) {
	var l chatLine
	if json.Unmarshal(raw, &l) != nil {
		p.skip()
		return
	}
	text, ok := chatContent(l.Content)
	if !ok {
		p.skip()
		return
	}
	var role Role
	switch l.Role {
	case "user":
		role = RoleUser
	case "assistant":
		role = RoleAssistant
	case "system", "developer":
		role = RoleSystem
	case "tool", "function":
		role = RoleTool
	default:
		p.skip()
		return
	}
	if l.Session != "" && p.c.Session == "" {
		p.c.Session = l.Session
	}
	if l.Cwd != "" {
		p.c.Cwd = l.Cwd
	}
	t := parseTime(l.Timestamp)

	switch role {
	case RoleUser:
		p.prompt()
		p.add(Message{Role: RoleUser, Text: text, Time: t, Synthetic: isClientText(text)})
	case RoleSystem:
		if strings.TrimSpace(text) != "" {
			p.add(Message{Role: RoleSystem, Text: text, Time: t})
		}
	case RoleAssistant:
		if strings.TrimSpace(text) != "" {
			p.add(Message{Role: RoleAssistant, Text: text, Time: t})
		}
		for _, c := range l.ToolCalls {
			name, args := c.Name, c.Arguments
			if c.Function != nil {
				if name == "" {
					name = c.Function.Name
				}
				if len(args) == 0 {
					args = c.Function.Arguments
				}
			}
			p.call(c.ID, name, params(args))
		}
	case RoleTool:
		p.result(l.ToolCallID, text, l.IsError, t)
	}
}

// chatContent reads a message's content: a string, null, or an array of
// parts whose text parts are joined. ok is false for any other shape.
func chatContent(raw json.RawMessage) (text string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	switch raw[0] {
	case '"':
		return text, json.Unmarshal(raw, &text) == nil
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &parts) != nil {
			return "", false
		}
		var texts []string
		for _, part := range parts {
			if part.Type == "text" || (part.Type == "" && part.Text != "") {
				texts = append(texts, part.Text)
			}
		}
		return strings.Join(texts, "\n"), true
	}
	return "", false
}
