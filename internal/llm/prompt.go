package llm

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

// SystemPrompt is the instruction every extraction sends. It is short on
// purpose: it is paid for on every call, and the answer's shape is enforced
// by the schema in the request's format, not by prose.
const SystemPrompt = `You extract memories from a coding agent's session so that later sessions can reuse them.
Answer {"memories":[...]}; each memory has a kind:
- decision: a choice made about code, design or process
- rationale: why something was chosen or rejected
- fact: a durable fact about the code, tools or environment
- preference: how the user wants things done
- open_question: something left unresolved for a later session
Rules:
- content is self-contained: it must make sense without the transcript, so name the files, functions and values involved.
- rationale says why, or is "".
- files_touched lists the repository-relative paths the memory concerns, from the files given or named in the messages; [] if none.
- confidence (0 to 1) is how firmly the session establishes it.
- Skip chit-chat, routine steps, raw tool output, secrets, and anything from synthetic or system messages (system reminders, hook output, injected context).
- If nothing qualifies, answer {"memories":[]}.`

// Schema is the JSON schema of the answer, sent as the chat's format so
// that Ollama constrains the model's output to it.
const Schema = `{"type":"object","properties":{"memories":{"type":"array","items":{"type":"object","properties":{` +
	`"content":{"type":"string"},` +
	`"kind":{"type":"string","enum":["decision","rationale","fact","preference","open_question"]},` +
	`"rationale":{"type":"string"},` +
	`"files_touched":{"type":"array","items":{"type":"string"}},` +
	`"confidence":{"type":"number","minimum":0,"maximum":1}},` +
	`"required":["content","kind","rationale","files_touched","confidence"]}}},"required":["memories"]}`

var schemaJSON = json.RawMessage(Schema)

// promptOverhead covers the chat template's role markers around the two
// messages and the difference between cl100k_base, which Estimate counts
// with, and the model's own tokenizer.
const promptOverhead = 32

var systemPromptTokens = sync.OnceValue(func() int { return tokens.Count(SystemPrompt) })

// UserMessage renders req as the chat's user message.
func UserMessage(req Request) string {
	var b strings.Builder
	if req.Repo != "" {
		b.WriteString("Repository: ")
		b.WriteString(req.Repo)
		b.WriteByte('\n')
	}
	b.WriteString("Files modified in this part of the session: ")
	if len(req.Files) == 0 {
		b.WriteString("none")
	} else {
		b.WriteString(strings.Join(req.Files, ", "))
	}
	b.WriteString("\nMessages, oldest first:\n")
	for i, m := range req.Messages {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(m.Content)
	}
	return b.String()
}

// estimatePrompt is the prompt tokens of user, with a margin of a tenth for
// tokenizer differences and the fixed overhead.
func estimatePrompt(user string) int {
	n := systemPromptTokens() + tokens.Count(user)
	return n + n/10 + promptOverhead
}
