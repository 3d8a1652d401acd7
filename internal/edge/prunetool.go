package edge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/prune"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// pruners holds one Pruner per tool preset; a Pruner keeps only its
// configuration, so calls share it. They count no tokens: countSaved does,
// after the rules ran, in parallel and once per distinct output.
var pruners = sync.OnceValue(func() map[string]*prune.Pruner {
	out := make(map[string]*prune.Pruner, 2)
	for name, t := range map[string]prune.Tools{tools.PresetClaudeCode: prune.ClaudeCodeTools(), tools.PresetSeed: prune.SeedTools()} {
		p, err := prune.New(prune.Config{Tools: t, CountTokens: func(string) int { return 0 }})
		if err != nil {
			panic(fmt.Sprintf("edge: prune preset %s: %v", name, err))
		}
		out[name] = p
	}
	return out
})

// pruneConversation answers prune_conversation: seed 001's auto-supersede
// over the calls sent, or over the calls of the messages sent. It keeps no
// state, so any edge answers it the same.
func pruneConversation(raw json.RawMessage) (json.RawMessage, error) {
	const tool = tools.PruneConversation
	var present struct {
		ToolCalls json.RawMessage `json:"tool_calls"`
		Messages  json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(raw, &present) == nil {
		// Exactly one of the two, checked here: a top-level oneOf or
		// minProperties would not reach agents, since clients drop them
		// (mcp-go's schema type keeps type, properties, required and
		// additionalProperties only) and Anthropic's API refuses a
		// top-level oneOf.
		switch has, hasMsgs := len(present.ToolCalls) > 0, len(present.Messages) > 0; {
		case has && hasMsgs:
			return nil, tools.InvalidParams(tool, "send either tool_calls or messages, not both")
		case !has && !hasMsgs:
			return nil, tools.InvalidParams(tool, "send tool_calls ([{id, tool, params, turn, status}]) or messages (Anthropic-style, with tool_use and tool_result blocks)")
		}
	}
	args, err := tools.Validate(tool, raw)
	if err != nil {
		return nil, err
	}
	var a tools.PruneConversationArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, tools.InvalidParams(tool, err.Error())
	}
	p := pruners()[a.Tools]
	if p == nil {
		return nil, tools.InvalidParams(tool, fmt.Sprintf("tools %q: use claude-code or seed", a.Tools))
	}
	var res tools.PruneConversationResult
	if a.ToolCalls != nil {
		res, err = pruneCalls(p, a.ToolCalls, a.CurrentTurn)
	} else {
		res, err = pruneMessages(p, a.Messages, a.CurrentTurn)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// pruneCalls prunes calls sent as tool_calls.
func pruneCalls(p *prune.Pruner, in []tools.CallIn, currentTurn *int) (tools.PruneConversationResult, error) {
	calls := make([]prune.ToolCall, len(in))
	seen := make(map[string]int, len(in))
	last := 0
	for i, c := range in {
		if j, dup := seen[c.ID]; dup {
			return tools.PruneConversationResult{}, tools.InvalidParams(tools.PruneConversation,
				fmt.Sprintf("tool_calls[%d].id %q repeats tool_calls[%d].id: give every call its own id", i, c.ID, j))
		}
		seen[c.ID] = i
		last = max(last, c.Turn)
		calls[i] = prune.ToolCall{ID: c.ID, Tool: c.Tool, Params: c.Params, Turn: c.Turn, Status: prune.Status(c.Status), Output: c.Output, OutputTokens: c.OutputTokens}
	}
	turn := turnOr(currentTurn, last)
	r := p.Supersede(calls, turn)
	countSaved(calls, &r)
	out := result(p, r, turn)
	out.ToolCalls = make([]tools.CallOut, len(in))
	for i, c := range calls {
		o := tools.CallOut{CallIn: in[i]}
		o.Params = redactValue(o.Params).(map[string]any)
		o.Output = redact(o.Output)
		if c.Superseded {
			o.Superseded, o.SupersededBy, o.Reason = true, c.SupersededBy, string(c.Reason)
			o.Output = marker(c)
		}
		out.ToolCalls[i] = o
	}
	return out, nil
}

func turnOr(t *int, last int) int {
	if t != nil {
		return *t
	}
	return last
}

// result is the part of the answer both inputs share.
func result(p *prune.Pruner, r prune.Result, turn int) tools.PruneConversationResult {
	tally := func(t prune.Tally) tools.Tally { return tools.Tally{Count: t.Count, Tokens: t.Tokens} }
	total := r.Stats.Total()
	out := tools.PruneConversationResult{
		CurrentTurn: turn,
		Superseded:  make([]tools.Supersession, len(r.Superseded)),
		Stats: tools.PruneStats{
			Hash: tally(r.Stats.Hash), File: tally(r.Stats.File), Todo: tally(r.Stats.Todo), Total: tally(total),
			TokensSaved: total.Tokens, Text: r.Stats.Render(),
		},
		Log: make([]string, len(r.Log)),
	}
	for i, s := range r.Superseded {
		out.Superseded[i] = tools.Supersession{ID: s.ID, Tool: s.Tool, By: s.By, Reason: string(s.Reason), Key: redact(s.Key), Tokens: s.Tokens}
	}
	for i, l := range r.Log {
		out.Log[i] = redact(l)
	}
	// A reminder only for conversations that keep a todo list: one that
	// never did would be told so every few turns.
	if st := r.Todos; st.LastWriteTurn > 0 || len(st.Tasks) > 0 {
		if p.ReminderDue(st.LastWriteTurn, turn) {
			out.Reminder = redact(p.TodoReminder(st, turn).Text)
		}
	}
	return out
}

// countSaved fills in the tokens of r's supersessions, and its stats, as
// a Pruner counting with tokens.Count would: a call's OutputTokens when
// positive, else the count of its Output. Counting is most of the cost of
// pruning a long conversation, so each distinct output is counted once (a
// repeated call often returned the same text) and outputs are spread over
// the CPUs.
func countSaved(calls []prune.ToolCall, r *prune.Result) {
	byID := make(map[string]*prune.ToolCall, len(r.Superseded))
	counts := make(map[string]int)
	for i := range calls {
		c := &calls[i]
		if c.Superseded {
			byID[c.ID] = c
			if c.OutputTokens <= 0 {
				counts[c.Output] = 0
			}
		}
	}
	texts := make([]string, 0, len(counts))
	for t := range counts {
		texts = append(texts, t)
	}
	n := make([]int, len(texts))
	workers := min(runtime.GOMAXPROCS(0), len(texts)/8+1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(texts); i = int(next.Add(1) - 1) {
				n[i] = tokens.Count(texts[i])
			}
		})
	}
	wg.Wait()
	for i, t := range texts {
		counts[t] = n[i]
	}
	r.Stats = prune.Stats{}
	for i := range r.Superseded {
		s := &r.Superseded[i]
		c := byID[s.ID]
		s.Tokens = c.OutputTokens
		if s.Tokens <= 0 {
			s.Tokens = counts[c.Output]
		}
		t := &r.Stats.Todo
		switch s.Reason {
		case prune.ReasonHash:
			t = &r.Stats.Hash
		case prune.ReasonFile:
			t = &r.Stats.File
		}
		t.Count++
		t.Tokens += s.Tokens
	}
}

// marker is what a superseded call's output becomes.
func marker(c prune.ToolCall) string {
	why := ""
	switch c.Reason {
	case prune.ReasonHash:
		why = "same call made again"
	case prune.ReasonFile:
		why = "file written since"
	case prune.ReasonTodo:
		why = "newer todo list"
	}
	return fmt.Sprintf("[superseded by %s: %s]", c.SupersededBy, why)
}

// Anthropic Messages API shapes, as far as pruning reads them.
type (
	apiMessage struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	apiBlock struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     map[string]any  `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
		Text      string          `json:"text"`
	}
)

// resultAt locates a tool_result block: messages[msg].content[block].
type resultAt struct{ msg, block int }

// pruneMessages derives the calls of an Anthropic-style conversation,
// prunes them, and returns the messages with each superseded call's
// tool_result content replaced by its marker. A user message carrying
// text (a string, or a text block) starts a turn, the first being turn 1;
// a tool_use block is a call of the current turn, in progress until a
// tool_result names it (completed, or error with is_error). Everything
// else passes through unchanged.
func pruneMessages(p *prune.Pruner, msgs []json.RawMessage, currentTurn *int) (tools.PruneConversationResult, error) {
	const tool = tools.PruneConversation
	var calls []prune.ToolCall
	index := map[string]int{}
	results := map[string]resultAt{}
	blocks := make([][]json.RawMessage, len(msgs))
	turn := 0
	for i, raw := range msgs {
		var m apiMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return tools.PruneConversationResult{}, tools.InvalidParams(tool, fmt.Sprintf("messages[%d]: want an object with role and content", i))
		}
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			if m.Role == "user" {
				turn++
			}
			continue
		}
		if err := json.Unmarshal(m.Content, &blocks[i]); err != nil {
			return tools.PruneConversationResult{}, tools.InvalidParams(tool, fmt.Sprintf("messages[%d].content: want a string or an array of content blocks", i))
		}
		parsed := make([]apiBlock, len(blocks[i]))
		startsTurn := false
		for j, rb := range blocks[i] {
			if err := json.Unmarshal(rb, &parsed[j]); err != nil {
				return tools.PruneConversationResult{}, tools.InvalidParams(tool, fmt.Sprintf(`messages[%d].content[%d]: want a content block object such as {"type": "text", "text": "…"}`, i, j))
			}
			startsTurn = startsTurn || (m.Role == "user" && parsed[j].Type == "text")
		}
		if startsTurn {
			turn++
		}
		for j, b := range parsed {
			switch b.Type {
			case "tool_use":
				if b.ID == "" || b.Name == "" {
					return tools.PruneConversationResult{}, tools.InvalidParams(tool, fmt.Sprintf("messages[%d].content[%d]: a tool_use block needs an id and a name", i, j))
				}
				if _, dup := index[b.ID]; dup {
					return tools.PruneConversationResult{}, tools.InvalidParams(tool, fmt.Sprintf("messages[%d].content[%d]: tool_use id %q is used twice: give every call its own id", i, j, b.ID))
				}
				index[b.ID] = len(calls)
				calls = append(calls, prune.ToolCall{ID: b.ID, Tool: b.Name, Params: b.Input, Turn: turn, Status: prune.StatusInProgress})
			case "tool_result":
				k, ok := index[b.ToolUseID]
				if !ok {
					continue // its call is outside the window sent
				}
				c := &calls[k]
				c.Status = prune.StatusCompleted
				if b.IsError {
					c.Status = prune.StatusError
				}
				c.Output = resultText(b.Content)
				results[b.ToolUseID] = resultAt{i, j}
			}
		}
	}
	t := turnOr(currentTurn, turn)
	r := p.Supersede(calls, t)
	countSaved(calls, &r)
	out := result(p, r, t)
	replace := map[int]map[int]string{}
	for _, c := range calls {
		if at, ok := results[c.ID]; ok && c.Superseded {
			if replace[at.msg] == nil {
				replace[at.msg] = map[int]string{}
			}
			replace[at.msg][at.block] = marker(c)
		}
	}
	out.Messages = make([]json.RawMessage, len(msgs))
	for i, raw := range msgs {
		if rs := replace[i]; rs != nil {
			var err error
			if raw, err = replaceResults(raw, blocks[i], rs); err != nil {
				return tools.PruneConversationResult{}, err
			}
		}
		out.Messages[i] = redactJSON(raw)
	}
	return out, nil
}

// resultText is the text a tool_result's content holds: the string, or
// its text blocks joined by newlines (images and the like carry none).
func resultText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var bs []apiBlock
	if json.Unmarshal(content, &bs) != nil {
		return ""
	}
	var texts []string
	for _, b := range bs {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// replaceResults re-encodes a message with the content of the tool_result
// blocks at the indexes of rs replaced by their markers; every other field
// keeps its bytes.
func replaceResults(raw json.RawMessage, blocks []json.RawMessage, rs map[int]string) (json.RawMessage, error) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, err
	}
	content := make([]json.RawMessage, len(blocks))
	copy(content, blocks)
	for j, mark := range rs {
		var b map[string]json.RawMessage
		if err := json.Unmarshal(content[j], &b); err != nil {
			return nil, err
		}
		b["content"], _ = json.Marshal(mark)
		nb, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		content[j] = nb
	}
	var err error
	if msg["content"], err = json.Marshal(content); err != nil {
		return nil, err
	}
	return json.Marshal(msg)
}

// redactJSON passes every string of a JSON value through the guard. Most
// messages hold no secret: one guard pass over the raw bytes finds that,
// and only the others are decoded and re-encoded.
func redactJSON(raw json.RawMessage) json.RawMessage {
	if _, found := guard.Redact(string(raw)); len(found) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw // the schema accepted it, so it decodes
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return raw
	}
	return out
}

// redactValue returns v with every string (map keys included) redacted.
func redactValue(v any) any {
	switch v := v.(type) {
	case string:
		return redact(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = redactValue(x)
		}
		return out
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[redact(k)] = redactValue(x)
		}
		return out
	}
	return v
}
