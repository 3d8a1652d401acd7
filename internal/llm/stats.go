package llm

import (
	"sync/atomic"

	"github.com/cuedeck/cuedeck/pkg/core/resilience"
)

// Stats counts what an Ollama extractor has done since it was made. The
// daemon exports them as metrics; each field is a running total except
// BreakerState.
type Stats struct {
	// Calls is Extract calls; Attempts the requests they made; Successes
	// the calls that returned memories (possibly none); Retries the waits
	// between attempts.
	Calls     int64 `json:"calls"`
	Attempts  int64 `json:"attempts"`
	Successes int64 `json:"successes"`
	Retries   int64 `json:"retries"`
	// Failed attempts by cause. RateLimited is 429s that are not a spend
	// limit; QueueFull 503s (Ollama's OLLAMA_MAX_QUEUE); ServerErrors other
	// 5xx and errors reported mid-stream; Timeouts attempts cut by
	// CallTimeout; DroppedStreams connections closed or answers cut before
	// the final chunk; ConnectErrors servers that could not be reached.
	RateLimited    int64 `json:"rate_limited"`
	QueueFull      int64 `json:"queue_full"`
	ServerErrors   int64 `json:"server_errors"`
	Timeouts       int64 `json:"timeouts"`
	DroppedStreams int64 `json:"dropped_streams"`
	ConnectErrors  int64 `json:"connect_errors"`
	// Repaired is answers whose JSON needed repair; InvalidOutput calls
	// that ended in ErrInvalidOutput; InvalidCandidates memories dropped
	// by validation.
	Repaired          int64 `json:"repaired"`
	InvalidOutput     int64 `json:"invalid_output"`
	InvalidCandidates int64 `json:"invalid_candidates"`
	// Refused is calls that ended in ErrRefused; SetupErrors calls that
	// found the model not pulled (404) or the request rejected (400);
	// BreakerRejections calls and retries the open breaker stopped before
	// a request.
	Refused           int64 `json:"refused"`
	SetupErrors       int64 `json:"setup_errors"`
	BreakerRejections int64 `json:"breaker_rejections"`
	// BreakerState is the breaker's state now (0 closed, 1 open, 2
	// half_open, as seed 003 §4 exports it).
	BreakerState resilience.BreakerState `json:"breaker_state"`
	// PromptTokens and OutputTokens are the provider's counts, summed.
	PromptTokens int64 `json:"prompt_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// counters are Stats as atomics.
type counters struct {
	calls, attempts, successes, retries                                    atomic.Int64
	rateLimited, queueFull, serverErrors, timeouts, dropped, connectErrors atomic.Int64
	repaired, invalidOutput, invalidCandidates                             atomic.Int64
	refused, setupErrors, breakerRejections                                atomic.Int64
	promptTokens, outputTokens                                             atomic.Int64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Calls:             c.calls.Load(),
		Attempts:          c.attempts.Load(),
		Successes:         c.successes.Load(),
		Retries:           c.retries.Load(),
		RateLimited:       c.rateLimited.Load(),
		QueueFull:         c.queueFull.Load(),
		ServerErrors:      c.serverErrors.Load(),
		Timeouts:          c.timeouts.Load(),
		DroppedStreams:    c.dropped.Load(),
		ConnectErrors:     c.connectErrors.Load(),
		Repaired:          c.repaired.Load(),
		InvalidOutput:     c.invalidOutput.Load(),
		InvalidCandidates: c.invalidCandidates.Load(),
		Refused:           c.refused.Load(),
		SetupErrors:       c.setupErrors.Load(),
		BreakerRejections: c.breakerRejections.Load(),
		PromptTokens:      c.promptTokens.Load(),
		OutputTokens:      c.outputTokens.Load(),
	}
}
