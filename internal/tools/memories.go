package tools

import (
	"encoding/json"
	"time"
)

// Memory tool names. search_memories reads what the extractor workers
// remembered (the cue_memories bucket); prune_conversation runs seed 001's
// auto-supersede over a conversation the caller sends, keeping no state.
const (
	SearchMemories    = "search_memories"
	PruneConversation = "prune_conversation"
)

// SearchMemoriesArgs are search_memories's arguments.
type SearchMemoriesArgs struct {
	Query   string         `json:"query"`
	Limit   int            `json:"limit,omitempty"`
	Mode    string         `json:"mode,omitempty"`
	Filters *MemoryFilters `json:"filters,omitempty"`
}

// MemoryFilters narrow search_memories. Every field left empty passes
// everything; the fields that are set must all pass.
type MemoryFilters struct {
	Repo    string `json:"repo,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Session string `json:"session,omitempty"`
	// Files matches memories touching any of them; a memory's path
	// matches when it ends with the given path at a '/' boundary, so
	// "auth/token.go" finds "src/auth/token.go".
	Files []string `json:"files,omitempty"`
	// Since keeps memories last updated since a date ("2024-01-01": from
	// that day on) or within an age ("2w", "<3d"); list_tasks's ">",
	// ">=", "<" and "<=" forms work too.
	Since string `json:"since,omitempty"`
}

// MemoryHit is one search_memories result: the memory as the extractors
// stored it, and how this search found it.
type MemoryHit struct {
	Content      string   `json:"content"`
	Kind         string   `json:"kind"`
	Rationale    string   `json:"rationale,omitempty"`
	FilesTouched []string `json:"files_touched,omitempty"`
	Confidence   float64  `json:"confidence"`
	Repo         string   `json:"repo"`
	Session      string   `json:"session"`
	// Agent is the subagent that said it, "" for the session's main agent.
	Agent string `json:"agent,omitempty"`
	// Source is the byte range of the session's transcript it came from.
	Source   SourceSpan `json:"source"`
	Provider string     `json:"provider,omitempty"`
	Model    string     `json:"model,omitempty"`
	Outcome  string     `json:"outcome,omitempty"`
	// Extractions counts the transcript batches that said it.
	Extractions int       `json:"extractions"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Hash is the memory's identity (the dedup hash of its content).
	Hash string `json:"hash"`
	// Score and Modes are read_context's: the scale depends on the mode,
	// and Modes lists the rankings that found the hit.
	Score float64  `json:"score"`
	Modes []string `json:"modes,omitempty"`
	// Fallback says why the requested mode was not used, when it was not.
	Fallback string `json:"fallback,omitempty"`
}

// SourceSpan is a byte range [Start, End) of a transcript.
type SourceSpan struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Tool presets of prune_conversation: which tool and parameter names mean
// read, write, edit, glob, grep and the todo tools.
const (
	PresetClaudeCode = "claude-code"
	PresetSeed       = "seed"
)

// PruneConversationArgs are prune_conversation's arguments: exactly one
// of ToolCalls and Messages.
type PruneConversationArgs struct {
	ToolCalls []CallIn          `json:"tool_calls,omitempty"`
	Messages  []json.RawMessage `json:"messages,omitempty"`
	// CurrentTurn is the turn the conversation is in; nil means the last
	// turn of the input.
	CurrentTurn *int   `json:"current_turn,omitempty"`
	Tools       string `json:"tools,omitempty"`
}

// CallIn is one tool call as a caller sends it.
type CallIn struct {
	ID           string         `json:"id"`
	Tool         string         `json:"tool"`
	Params       map[string]any `json:"params,omitempty"`
	Turn         int            `json:"turn"`
	Status       string         `json:"status"`
	Output       string         `json:"output,omitempty"`
	OutputTokens int            `json:"output_tokens,omitempty"`
}

// CallOut is a call of prune_conversation's result: the call as sent, with
// a superseded call's output replaced by its SupersededMarker.
type CallOut struct {
	CallIn
	Superseded   bool   `json:"superseded"`
	SupersededBy string `json:"superseded_by,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

// Supersession is one call prune_conversation pruned.
type Supersession struct {
	ID     string `json:"id"`
	Tool   string `json:"tool"`
	By     string `json:"by"`
	Reason string `json:"reason"`
	// Key is the short call hash (reason hash) or the file key (file).
	Key    string `json:"key,omitempty"`
	Tokens int    `json:"tokens"`
}

// PruneStats are seed 001's strategyStats.autoSupersede, their total,
// and the `/acp stats` block rendered.
type PruneStats struct {
	Hash        Tally  `json:"hash"`
	File        Tally  `json:"file"`
	Todo        Tally  `json:"todo"`
	Total       Tally  `json:"total"`
	TokensSaved int    `json:"tokens_saved"`
	Text        string `json:"text"`
}

// Tally counts the calls one rule pruned and the output tokens saved.
type Tally struct {
	Count  int `json:"count"`
	Tokens int `json:"tokens"`
}

// PruneConversationResult is prune_conversation's result. ToolCalls is set
// when the input was tool_calls, Messages when it was messages; either way
// Superseded lists what was pruned, in the order the rules ran.
type PruneConversationResult struct {
	ToolCalls   []CallOut         `json:"tool_calls,omitempty"`
	Messages    []json.RawMessage `json:"messages,omitempty"`
	CurrentTurn int               `json:"current_turn"`
	Superseded  []Supersession    `json:"superseded"`
	Stats       PruneStats        `json:"stats"`
	Log         []string          `json:"log"`
	// Reminder is the todo reminder (with stuck-task guidance) when one is
	// due at the current turn.
	Reminder string `json:"reminder,omitempty"`
}
