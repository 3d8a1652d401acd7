package events

import (
	"fmt"
	"strings"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/memory"
)

// Names of the memory assets. The extractor workers write them; the edges
// watch MemoriesBucket and serve search_memories and the scenes' "Recent
// decisions".
const (
	// ExtractorConsumer is the durable consumer the extractor workers share
	// on IngestStream, filtered to SubjectTranscriptPrefix.
	ExtractorConsumer = "extractor"
	// MemoriesBucket is the KV bucket of MemoryRecords, keyed by MemoryKey:
	// one record per repo and canonical dedup hash (seed 003 §9), written
	// with compare-and-set so two workers never both insert one memory.
	MemoriesBucket = "cue_memories"
	// ExtractionsBucket keeps, per transcript batch (ExtractionKey), what
	// extraction made of it, written before any memory is: a batch
	// delivered again after a crash reuses it instead of paying the LLM
	// twice or extracting something different the second time. Its entries
	// expire after ExtractionsMaxAge.
	ExtractionsBucket = "cue_extractions"
	// BudgetBucket holds the extractors' shared guards: the day's spend
	// (BudgetKey) and the recent token usage per provider (TokensKey), each
	// updated with compare-and-set so N workers together stay inside them.
	BudgetBucket = "cue_budget"
)

// ExtractionsMaxAge is how long an ExtractionRecord is kept: longer than a
// batch can sit undelivered in a healthy cluster.
const ExtractionsMaxAge = 7 * 24 * time.Hour

// KindMemoryRecord and KindExtractionRecord name the memory records.
const (
	KindMemoryRecord     Kind = "memory.record"
	KindExtractionRecord Kind = "extraction.record"
)

// MemoryKey is the cue_memories key of a memory: the repo, a dot, and the
// hex dedup hash of its content (memory.Hash).
func MemoryKey(repo, hash string) string { return repo + "." + hash }

// ParseMemoryKey is the inverse of MemoryKey.
func ParseMemoryKey(key string) (repo, hash string, err error) {
	i := strings.LastIndexByte(key, '.')
	if i <= 0 || i == len(key)-1 {
		return "", "", fmt.Errorf("%w: memory key %q", ErrMalformed, key)
	}
	return key[:i], key[i+1:], nil
}

// MemoryKeyPrefix is the KV filter matching every memory of repo.
func MemoryKeyPrefix(repo string) string { return repo + ".*" }

// MemoryRecord is one memory as stored in MemoriesBucket.
//
// Its writers are the extractor workers: Create when the key is new, Update
// with the revision read when DecideDuplicate says the candidate's
// confidence is strictly greater, nothing otherwise. Its readers are the
// edges (search_memories, scenes) and the dashboard.
type MemoryRecord struct {
	memory.Memory
	// Hash is memory.Hash(Content), repeated so readers need not recompute.
	Hash string `json:"hash"`
	// Agent is the subagent that said it, "" for the session's main agent.
	Agent string `json:"agent,omitempty"`
	// Batch is the Nats-Msg-Id of the transcript batch that last wrote it.
	Batch string `json:"batch"`
	// Extractions counts the batches that extracted this memory, the first
	// included: a memory said again and again is one the team relies on.
	Extractions int `json:"extractions"`
	// Outcome is how the session that made a decision ended, when known
	// (memory.OutcomeSuccess, OutcomeFailure, OutcomeUnknown).
	Outcome memory.Outcome `json:"outcome,omitempty"`
	// ErrorFiles are the files named by stack frames in the failed tool
	// output of the batches that extracted this memory (at most
	// MaxErrorFiles, newest first), and ErrorSeen when a batch last named
	// some: the edges count them toward file importance.
	ErrorFiles []string  `json:"error_files,omitempty"`
	ErrorSeen  time.Time `json:"error_seen,omitzero"`
	// Forgotten is when someone forgot the memory (forget_memory, `cue
	// memories forget`): the record is then a tombstone holding no words,
	// kept so that extracting the same words again does not bring it back.
	Forgotten time.Time `json:"forgotten,omitzero"`
	// Supersedes are the hashes of earlier memories of the repo this one
	// replaces (a decision reversed, a fact corrected). Readers serve a
	// memory some live memory supersedes as history, not as current; the
	// link is kept here alone, so forgetting the newer memory makes the
	// older one current again.
	Supersedes []string `json:"supersedes,omitempty"`
}

// MaxSupersedes bounds MemoryRecord.Supersedes.
const MaxSupersedes = 16

// MaxTags bounds MemoryRecord.Tags, and MaxTagLen each tag's bytes.
const (
	MaxTags   = 16
	MaxTagLen = 64
)

// MaxErrorFiles bounds MemoryRecord.ErrorFiles and
// ExtractionRecord.ErrorFiles.
const MaxErrorFiles = 32

// Validate reports a record the edges cannot serve. A tombstone
// (Forgotten set) needs its repo, kind and a hash, not its words.
func (r MemoryRecord) Validate() error {
	if err := ValidateRepo(r.Repo); err != nil {
		return err
	}
	if !r.Forgotten.IsZero() {
		if !r.Kind.Valid() || !validHash(r.Hash) {
			return fmt.Errorf("%w: memory.record: a forgotten memory needs its kind and hash", ErrMalformed)
		}
		return nil
	}
	if strings.TrimSpace(r.Content) == "" {
		return fmt.Errorf("%w: memory.record: empty content", ErrMalformed)
	}
	if !r.Kind.Valid() {
		return fmt.Errorf("%w: memory.record: unknown kind %q", ErrMalformed, r.Kind)
	}
	if r.Confidence < 0 || r.Confidence > 1 {
		return fmt.Errorf("%w: memory.record: confidence %v outside [0, 1]", ErrMalformed, r.Confidence)
	}
	if r.Hash != memory.Hash(r.Content) {
		return fmt.Errorf("%w: memory.record: hash %s does not match its content", ErrMalformed, r.Hash)
	}
	if len(r.Tags) > MaxTags {
		return fmt.Errorf("%w: memory.record: %d tags, more than %d", ErrMalformed, len(r.Tags), MaxTags)
	}
	for _, tag := range r.Tags {
		if strings.TrimSpace(tag) == "" || len(tag) > MaxTagLen {
			return fmt.Errorf("%w: memory.record: tag %q: give 1 to %d bytes", ErrMalformed, tag, MaxTagLen)
		}
	}
	if len(r.Supersedes) > MaxSupersedes {
		return fmt.Errorf("%w: memory.record: supersedes %d memories, more than %d", ErrMalformed, len(r.Supersedes), MaxSupersedes)
	}
	for _, h := range r.Supersedes {
		if !validHash(h) || h == r.Hash {
			return fmt.Errorf("%w: memory.record: supersedes %q: not the hash of another memory", ErrMalformed, h)
		}
	}
	return nil
}

// EventKind implements Event.
func (MemoryRecord) EventKind() Kind { return KindMemoryRecord }

// validHash reports whether h has the form of memory.Hash: 64 lowercase
// hex digits.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ExtractionPath says how a batch's memories were extracted.
type ExtractionPath string

// The extraction paths.
const (
	// PathLLM: the LLM answered and its output was used.
	PathLLM ExtractionPath = "llm"
	// PathRules: experience grafting (seed 004 §3), because no LLM is
	// configured, the breaker is open, the budget or the token projection
	// refused the call, or the LLM's answer could not be used.
	PathRules ExtractionPath = "rules"
	// PathEmpty: the batch held nothing to extract from.
	PathEmpty ExtractionPath = "empty"
)

// ExtractionKey is the ExtractionsBucket key of a batch: the hex SHA-256 of
// its Nats-Msg-Id (message ids hold characters KV keys do not allow).
func ExtractionKey(batchMsgID string) string { return SHA256Hex([]byte(batchMsgID)) }

// ExtractionRecord is what extraction made of one transcript batch, stored
// before the memories are written. Its writers and readers are the
// extractor workers; `cue status` and the dashboard read the totals.
type ExtractionRecord struct {
	Batch   string         `json:"batch"`
	Repo    string         `json:"repo"`
	Session string         `json:"session"`
	Path    ExtractionPath `json:"path"`
	// Why is the reason for PathRules ("no_llm", "breaker_open",
	// "budget_exhausted", "throttled", "invalid_output", "llm_unavailable",
	// "llm_refused").
	Why      string `json:"why,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Memories are the candidates, before deduplication.
	Memories []memory.Memory `json:"memories"`
	// Outcome is how the session ended, for a Final batch whose rules
	// could tell; the MemoryRecords written from it carry it.
	Outcome memory.Outcome `json:"outcome,omitempty"`
	// ErrorFiles are the files named by stack frames in the batch's failed
	// tool output (importance.StackPaths), relative to the session's
	// working directory when under it; the MemoryRecords written from it
	// carry them.
	ErrorFiles []string `json:"error_files,omitempty"`
	// Invalid counts candidates the LLM returned that failed validation,
	// with the first few reasons; they are counted, never silently dropped.
	Invalid        int      `json:"invalid,omitempty"`
	InvalidReasons []string `json:"invalid_reasons,omitempty"`
	// Supersede pass (seed 001) over the batch's tool calls.
	CallsSuperseded int `json:"calls_superseded"`
	TokensSaved     int `json:"tokens_saved"`
	// Salience selection (seed 003 §1).
	MessagesIn       int `json:"messages_in"`
	MessagesSelected int `json:"messages_selected"`
	// LLM usage, and the spend charged to the day's budget in micro-dollars.
	PromptTokens int       `json:"prompt_tokens,omitempty"`
	OutputTokens int       `json:"output_tokens,omitempty"`
	SpentMicros  int64     `json:"spent_micros,omitempty"`
	ExtractedAt  time.Time `json:"extracted_at"`
}

// EventKind implements Event.
func (ExtractionRecord) EventKind() Kind { return KindExtractionRecord }

// BudgetKey is the BudgetBucket key of the spend of the UTC day holding t
// ("spend.2026-11-22"). A reservation made before midnight is settled
// against its own day's key.
func BudgetKey(t time.Time) string { return "spend." + t.UTC().Format(time.DateOnly) }

// TokensKey is the BudgetBucket key of the recent token usage of provider.
func TokensKey(provider string) string { return "tokens." + provider }

// BudgetState is the value under BudgetKey: the seed's budget snapshot
// (resilience.BudgetSnapshot, whose SpentMicros here includes open
// reservations) plus the reservations not yet settled.
type BudgetState struct {
	WindowStart time.Time `json:"window_start"`
	// SpentMicros is settled spend plus open reservations: what the day
	// may still be charged is at most the limit minus this.
	SpentMicros  int64 `json:"spent_micros"`
	ReservedOpen int64 `json:"reserved_open_micros"`
	// LimitMicros is the daily limit the last writer enforced (0: none), so
	// readers without the extractors' configuration can show utilisation.
	LimitMicros int64 `json:"limit_micros"`
	// Calls counts LLM calls charged to the day.
	Calls       int   `json:"calls"`
	AlertsFired []int `json:"alerts_fired,omitempty"`
	// Refused counts calls the budget turned away (they took the rule path).
	Refused int `json:"refused"`
}

// TokenWindow is the value under TokensKey: the token usage of the
// provider's recent calls, oldest first, trimmed to the projector's window.
type TokenWindow struct {
	Usage []TokenUse `json:"usage"`
}

// TokenUse is one call's tokens.
type TokenUse struct {
	At     time.Time `json:"at"`
	Tokens int64     `json:"tokens"`
}
