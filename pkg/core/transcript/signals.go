package transcript

import (
	"regexp"
	"strings"

	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/prune"
)

// The signal weights. memory.Selector adds WeightSignal·signal to a
// message's keyword score, so these say which messages matter for what
// they are and where they sit, and leave the words to the keyword tiers
// (a decision's "because", a correction's "actually" are scored there).
// A signal is the sum of the weights that apply, capped at 1.
const (
	// SignalCorrection is a user prompt that pushes back on what the agent
	// did ("no", "don't", "instead", "actually", "revert"): the strongest
	// source of a lasting rule.
	SignalCorrection = 0.8
	// SignalBeforeChange is assistant text followed, before the next text
	// or prompt, by a write or edit call: the reasoning behind a change.
	SignalBeforeChange = 0.5
	// SignalAfterFailure is assistant text following a failed tool call or
	// a failing test run: the diagnosis of a failure.
	SignalAfterFailure = 0.5
	// SignalFailure is a tool result that failed or a test run that
	// reported failures, kept so the diagnosis has its evidence.
	SignalFailure = 0.4
	// SignalTask is the first prompt of the lines: the task the rest serves.
	SignalTask = 0.3
	// SignalNamesFile is a user or assistant message naming a source file
	// or a file the conversation modified: it is anchored to the code.
	SignalNamesFile = 0.2
)

// Signals returns the salience signal of each message of c, in [0, 1], for
// memory.Selector.Select beside c's messages (see MemoryMessages).
// Synthetic messages get 0: the client wrote them, so they hold no
// decision. Other tool results get 0 unless they failed.
func Signals(c Conversation) []float64 {
	sig := make([]float64, len(c.Messages))
	calls := make(map[string]*prune.ToolCall, len(c.Calls))
	for i := range c.Calls {
		if c.Calls[i].ID != "" {
			calls[c.Calls[i].ID] = &c.Calls[i]
		}
	}
	failed := func(m Message) bool {
		if m.Role != RoleTool {
			return false
		}
		return m.ToolError || (calls[m.CallID] != nil && testFailed(*calls[m.CallID]))
	}
	changes := func(m Message) bool {
		if m.Role != RoleTool {
			return false
		}
		call := calls[m.CallID]
		return call != nil && call.Status != prune.StatusError && chatTools.changedFile(*call) != ""
	}
	modified := make(map[string]bool, len(c.FilesModified))
	for _, f := range c.FilesModified {
		modified[f] = true
		if i := strings.LastIndexByte(f, '/'); i >= 0 && i+1 < len(f) {
			modified[f[i+1:]] = true
		}
	}

	firstPrompt := true
	for i, m := range c.Messages {
		if m.Synthetic {
			continue
		}
		var s float64
		switch m.Role {
		case RoleUser:
			if firstPrompt {
				s += SignalTask
				firstPrompt = false
			} else if isCorrection(m.Text) {
				s += SignalCorrection
			}
			if namesFile(m.Text, modified) {
				s += SignalNamesFile
			}
		case RoleAssistant:
			// Look back to the previous prose for a failure, and ahead to
			// the next for a change; what the client interjects in between
			// (reminders, hook output) does not separate them.
			for j := i - 1; j >= 0 && (c.Messages[j].Role == RoleTool || c.Messages[j].Synthetic); j-- {
				if failed(c.Messages[j]) {
					s += SignalAfterFailure
					break
				}
			}
			for j := i + 1; j < len(c.Messages) && (c.Messages[j].Role == RoleTool || c.Messages[j].Synthetic); j++ {
				if changes(c.Messages[j]) {
					s += SignalBeforeChange
					break
				}
			}
			if namesFile(m.Text, modified) {
				s += SignalNamesFile
			}
		case RoleTool:
			if failed(m) {
				s += SignalFailure
			}
		}
		sig[i] = min(s, 1)
	}
	return sig
}

// correctionOpeners start a prompt that corrects the agent; correctionPhrases
// do anywhere in it. Both are matched on the lowercased prompt.
var (
	correctionOpeners = []string{"no", "nope", "wait", "stop", "actually", "instead", "don't", "do not", "that's wrong", "wrong"}
	correctionPhrases = []string{
		"don't ", "do not ", "instead", "actually", "that's not", "that is not", "not what i",
		"revert", "undo", "you broke", "shouldn't", "should not", "never ", "stop ",
	}
)

func isCorrection(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	for _, o := range correctionOpeners {
		if rest, ok := strings.CutPrefix(t, o); ok && (rest == "" || !isWordByte(rest[0])) {
			return true
		}
	}
	for _, p := range correctionPhrases {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b == '_' || b == '\'' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// sourceFile matches a path or file name with a source or config
// extension; a bare word with a dot ("e.g.", "v1.2") does not.
var sourceFile = regexp.MustCompile(`(?:^|[\s"'` + "`" + `(\[])(?:[\w.-]+/)*[\w-]+\.(?:go|mod|py|ts|tsx|js|jsx|mjs|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|rb|php|lua|zig|sh|sql|proto|md|json|jsonl|ya?ml|toml|ini|txt|html|css|scss|vue|svelte)\b`)

func namesFile(text string, modified map[string]bool) bool {
	if sourceFile.MatchString(text) {
		return true
	}
	for f := range modified {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// testCommands mark a shell call as a test run.
var testCommands = []string{
	"go test", "pytest", "npm test", "npm run test", "yarn test", "pnpm test", "cargo test",
	"make test", "make check", "jest", "vitest", "mvn test", "gradle test", "./gradlew test",
	"dotnet test", "rspec", "mix test", "ctest", "tox",
}

// isTestRun reports a shell call (Claude Code's Bash, or any call with a
// command parameter) that runs a test suite.
func isTestRun(c prune.ToolCall) bool {
	cmd, _ := c.Params["command"].(string)
	if cmd == "" {
		cmd, _ = c.Params["cmd"].(string)
	}
	for _, t := range testCommands {
		if strings.Contains(cmd, t) {
			return true
		}
	}
	return false
}

// failMarkers in a test run's output mean it failed even when the call
// itself reported success (a runner that exits 0, a chat log without
// is_error).
var failMarkers = []string{"--- FAIL", "\nFAIL", "FAIL\t", "FAILED", "panic:", " failed,", "failures:", "Tests failed", "npm ERR!"}

func testFailed(c prune.ToolCall) bool {
	if !isTestRun(c) {
		return false
	}
	if c.Status == prune.StatusError {
		return true
	}
	if c.Status != prune.StatusCompleted {
		return false
	}
	out := c.Output
	if strings.HasPrefix(out, "FAIL") {
		return true
	}
	for _, m := range failMarkers {
		if strings.Contains(out, m) {
			return true
		}
	}
	return false
}

// Outcome infers how the work went from the last test run with a result:
// failure if it failed, success if it passed, "" when there was none, so
// that memory.ExtractExperiences falls back to reading the prose. The last
// run is the one that counts because a session typically fails its tests
// on the way and stops once they pass (or gives up while they fail).
func (c Conversation) Outcome() memory.Outcome {
	for i := len(c.Calls) - 1; i >= 0; i-- {
		call := c.Calls[i]
		if !isTestRun(call) || (call.Status != prune.StatusCompleted && call.Status != prune.StatusError) {
			continue
		}
		if testFailed(call) {
			return memory.OutcomeFailure
		}
		return memory.OutcomeSuccess
	}
	return ""
}

// AssistantProse is the assistant's own text, synthetic messages left out,
// in order and separated by blank lines: the text rule-based experience
// grafting reads.
func (c Conversation) AssistantProse() string {
	var b strings.Builder
	for _, m := range c.Messages {
		if m.Role != RoleAssistant || m.Synthetic {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(strings.TrimSpace(m.Text))
	}
	return b.String()
}

// MemoryTranscript is c as memory.ExtractExperiences takes it.
func (c Conversation) MemoryTranscript() memory.Transcript {
	return memory.Transcript{
		AgentID:       c.Agent,
		SessionID:     c.Session,
		Text:          c.AssistantProse(),
		FilesModified: append([]string(nil), c.FilesModified...),
		Outcome:       c.Outcome(),
	}
}

// MemoryMessages is c's messages as memory.Selector.Select takes them,
// index for index with Signals(c).
func (c Conversation) MemoryMessages() []memory.Message {
	out := make([]memory.Message, len(c.Messages))
	for i, m := range c.Messages {
		out[i] = memory.Message{ID: m.ID, Content: m.Text}
	}
	return out
}
