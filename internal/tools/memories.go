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
	GetMemory         = "get_memory"
	SaveMemory        = "save_memory"
	UpdateMemory      = "update_memory"
	ForgetMemory      = "forget_memory"
	PruneConversation = "prune_conversation"
)

// ListMemories lists memories without a query, newest first: what `cue
// memories list` and `show` call through the daemon's query service. It
// is not an MCP tool (tools/list does not carry it): an agent searches.
const ListMemories = "list_memories"

// ListMemoriesArgs are list_memories's arguments: search_memories's
// filters, at most Limit memories (all when 0), and Hash to ask for the
// memories whose hash starts with it.
type ListMemoriesArgs struct {
	Filters           *MemoryFilters `json:"filters,omitempty"`
	Limit             int            `json:"limit,omitempty"`
	Hash              string         `json:"hash,omitempty"`
	IncludeSuperseded bool           `json:"include_superseded,omitempty"`
}

// SaveMemoryArgs are save_memory's arguments: what an agent wants later
// sessions to know, written through the path extracted memories take
// (validation, the secret guard, the dedup hash, compare-and-set) without
// an LLM or a budget. It needs no retry key: the same words are one
// memory, so a retry stores nothing new.
type SaveMemoryArgs struct {
	Kind      string   `json:"kind"`
	Text      string   `json:"text"`
	Rationale string   `json:"rationale,omitempty"`
	Files     []string `json:"files,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Repo      string   `json:"repo,omitempty"`
	// Supersedes are hashes (from search_memories) of memories of the
	// same repo this one replaces: a reversed decision, a corrected fact.
	// They become history: search_memories, scenes and hook context serve
	// this one instead.
	Supersedes []string `json:"supersedes,omitempty"`
}

// SavedConfidence is the confidence of a memory an agent saves: above
// what extraction gives a remark found in a transcript, since the agent
// chose to record it, and below certainty.
const SavedConfidence = 0.9

// SaveMemoryResult is save_memory's result. Action is "saved" (a new
// memory), "updated" (the same words were known with less confidence),
// "unchanged" (known already) or
// "forgotten" (the words were forgotten and stay so).
type SaveMemoryResult struct {
	Hash   string `json:"hash"`
	Repo   string `json:"repo"`
	Kind   string `json:"kind"`
	Action string `json:"action"`
}

// UpdateMemoryArgs are update_memory's arguments: the hash of a live
// memory and its corrected words. Kind, Rationale, Files and Tags default
// to the old memory's; an empty Files or Tags (not an absent one) clears
// them.
type UpdateMemoryArgs struct {
	Hash      string   `json:"hash"`
	Text      string   `json:"text"`
	Kind      string   `json:"kind,omitempty"`
	Rationale *string  `json:"rationale,omitempty"`
	Files     []string `json:"files,omitempty"`
	Tags      []string `json:"tags,omitempty"`
	Repo      string   `json:"repo,omitempty"`
}

// UpdateMemoryResult is update_memory's result: the new memory, as
// save_memory answers, and the hash of the one it superseded.
type UpdateMemoryResult struct {
	SaveMemoryResult
	Supersedes string `json:"supersedes"`
}

// ForgetMemoryArgs are forget_memory's arguments: the memory's hash, as
// search_memories reports it.
type ForgetMemoryArgs struct {
	Hash string `json:"hash"`
	Repo string `json:"repo,omitempty"`
}

// ForgetMemoryResult is forget_memory's result; Forgotten is when (RFC
// 3339), the first time if it was forgotten before.
type ForgetMemoryResult struct {
	Hash      string `json:"hash"`
	Repo      string `json:"repo"`
	Forgotten string `json:"forgotten"`
}

// MemoryNotFound is error 1001 for a hash no memory of repo has.
func MemoryNotFound(repo, hash string) *Error {
	return &Error{Code: CodeFileNotFound, Message: "Memory Not Found", Data: map[string]any{
		"error": "MemoryNotFound", "hash": hash, "repo": repo,
		"suggestion": "Take the hash from a search_memories hit, and its repo",
	}}
}

// SearchMemoriesArgs are search_memories's arguments.
type SearchMemoriesArgs struct {
	Query   string         `json:"query"`
	Limit   int            `json:"limit,omitempty"`
	Mode    string         `json:"mode,omitempty"`
	Filters *MemoryFilters `json:"filters,omitempty"`
	// IncludeSuperseded also ranks memories a later one superseded (a
	// decision reversed, a fact corrected): history, left out by default.
	IncludeSuperseded bool `json:"include_superseded,omitempty"`
	// Detail answers MemoryHits with every field (provenance, confidence,
	// counts) instead of MemoryBriefs.
	Detail bool `json:"detail,omitempty"`
}

// MemoryBrief is a search_memories hit without detail: what an agent
// reads to decide, about a third of a MemoryHit's tokens; get_memory (or
// detail) gives the rest.
type MemoryBrief struct {
	Hash         string   `json:"hash"`
	Kind         string   `json:"kind"`
	Content      string   `json:"content"`
	Rationale    string   `json:"rationale,omitempty"`
	FilesTouched []string `json:"files_touched,omitempty"`
	Tags         []string `json:"tags,omitempty"`
	// Updated is the day it was last said, YYYY-MM-DD.
	Updated      string   `json:"updated"`
	Score        float64  `json:"score"`
	Supersedes   []string `json:"supersedes,omitempty"`
	SupersededBy []string `json:"superseded_by,omitempty"`
	Fallback     string   `json:"fallback,omitempty"`
}

// Brief is h without its detail.
func (h MemoryHit) Brief() MemoryBrief {
	return MemoryBrief{Hash: h.Hash, Kind: h.Kind, Content: h.Content, Rationale: h.Rationale, FilesTouched: h.FilesTouched, Tags: h.Tags,
		Updated: h.UpdatedAt.UTC().Format(time.DateOnly), Score: h.Score, Supersedes: h.Supersedes, SupersededBy: h.SupersededBy,
		Fallback: h.Fallback}
}

// GetMemoryArgs are get_memory's arguments: a memory's hash, as
// search_memories gives it.
type GetMemoryArgs struct {
	Hash string `json:"hash"`
	Repo string `json:"repo,omitempty"`
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
	// Tags matches memories with any of them.
	Tags []string `json:"tags,omitempty"`
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
	Tags         []string `json:"tags,omitempty"`
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
	// Supersedes are the hashes of the earlier memories this one
	// replaced; SupersededBy those of the later ones that replaced it
	// (only with include_superseded: otherwise it is not answered).
	Supersedes   []string `json:"supersedes,omitempty"`
	SupersededBy []string `json:"superseded_by,omitempty"`
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
