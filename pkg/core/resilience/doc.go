// Package resilience keeps CueDeck's calls to slow, failing or metered
// services within bounds. The extractor retries its LLM calls with Backoff,
// wraps them in a CircuitBreaker, slows down on a TokenProjector and asks a
// BudgetTracker (or, shared between workers through the cue_budget KV
// bucket, the pure Budget functions) before spending; the Ollama embedder
// uses Backoff and a CircuitBreaker; the edges rate-limit tool calls with a
// RateLimiter. All time and randomness come from pkg/core/clock, so tests
// run on a deterministic clock and RNG.
//
// It implements seed 003 §2 (backoff), §3 (token projection), §4 (circuit
// breaker) and §6 (budget), and seed 002 §6 (rate limits). Where the seeds
// leave a choice or contradict themselves, this package decides as follows.
//
//   - Backoff: seed 003 §10 expects getJitter(200) to give 42, −137, 189 from
//     DeterministicRNG(12345); the LCG it specifies gives 62, −78, 70, and
//     the LCG is the reference. Attempt 0 is the first retry. Jitter is in
//     whole milliseconds and added after the cap (a delay reaches 8.2 s); a
//     delay that jitter would make negative is 0, since backoff.Stop is −1.
//     MaxAttempts counts runs of the operation under backoff.Retry;
//     MaxElapsed follows backoff.ExponentialBackOff, on the injected clock.
//   - Token projection: the provider is configuration, not an environment
//     variable; "ollama" defaults to 0 tokens per minute, meaning unlimited
//     (never throttle); an unknown provider is an error. The window start is
//     inclusive (timestamp ≥ now − window), as in the seed. The limit is
//     floor(TPM·window ms / 60000) in integers, and "utilisation > 80 %" is
//     decided exactly, so exactly 80 % never throttles even where float64
//     computes 80.00000000000001.
//   - Circuit breaker: the failure rate is, as the seed computes it, the
//     failures within the window divided by a fixed WindowSize (20), not by
//     the attempts made; successes do not dilute it. Failures are not
//     cleared on closing, so those that opened the circuit still count for
//     the rest of their window. The seed's emitMetric is the OnStateChange
//     callback; half_open admits every caller, as the seed sets no limit on
//     concurrent probes; at most WindowSize failure times are kept.
//   - Budget: amounts are counted in int64 micro-dollars, rounded to the
//     nearest, so 0.1 + 0.2 exactly exhausts a 0.3 budget. Rejection is
//     strict (spent + estimate > budget); alerts fire at ≥ 70, 90, 100 %
//     compared exactly. Besides the seed's bounds (NaN, ±Inf, negative,
//     > 2^53−1), amounts above MaxAmountUSD (≈ 9.2e12 USD, the int64
//     micro-dollar range) are rejected. handleExactBudgetRequest is Decide;
//     unlike the seed's, it rolls the window first and allows everything
//     when the budget is disabled.
//   - Rate limits: a token bucket (as GCRA) of capacity Burst refilled at
//     Limit per Window, so read_context allows 15 at once, then one every
//     6 s. Tools not in the table are unlimited. On refusal,
//     retry_after_seconds is the wait for the next token, rounded up, at
//     least 1 (the seed's example 45 suggests a fixed window; a token bucket
//     answers sooner); current_count counts the client's requests to the
//     tool in its current window, allowed and refused, this one included.
package resilience
