package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/ollama/ollama/api"

	"github.com/cuedeck/cuedeck/internal/retry"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/llmjson"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
)

// ErrCircuitOpen is returned, without a request being made, while the
// breaker is open. It wraps ErrUnavailable.
var ErrCircuitOpen = fmt.Errorf("llm: Ollama kept failing, so calls are paused until the circuit breaker's cooldown passes; check the server's health: %w", ErrUnavailable)

// DefaultOllamaHost is where Ollama listens unless told otherwise.
const DefaultOllamaHost = "http://127.0.0.1:11434"

// OllamaConfig configures an Ollama extractor. Only Model is required.
type OllamaConfig struct {
	// Model is the Ollama chat model, e.g. "qwen2.5:7b-instruct".
	Model string
	// Host is the server's base URL; nil means DefaultOllamaHost. main
	// reads OLLAMA_HOST, not this package.
	Host *url.URL
	// HTTPClient makes the requests; nil means a new client with no
	// timeout of its own (CallTimeout bounds each attempt).
	HTTPClient *http.Client
	// CallTimeout bounds one attempt, stream included (default 120 s): a
	// stream that stalls ends by it and is retried. An earlier deadline on
	// the caller's context wins.
	CallTimeout time.Duration
	// MaxAttempts is how many requests one Extract may make (default 3).
	MaxAttempts int
	// MaxRetryAfter caps how long a 429's or 503's Retry-After is honoured
	// (default 1 min).
	MaxRetryAfter time.Duration
	// Backoff shapes the delays between attempts (seed 003 §2); zero
	// fields take resilience.DefaultBackoffConfig's. Its MaxAttempts is
	// MaxAttempts.
	Backoff resilience.BackoffConfig
	// Breaker configures the circuit breaker (seed 003 §4); zero fields
	// take resilience.DefaultBreakerConfig's.
	Breaker resilience.BreakerConfig
	// MaxOutputTokens is Ollama's num_predict (default 1024): the most
	// tokens one answer may take, and what Estimate reserves.
	MaxOutputTokens int
	// ContextTokens, if positive, is Ollama's num_ctx; zero leaves the
	// model's default.
	ContextTokens int
	// Temperature is the sampling temperature. Zero, the default, makes
	// extraction as repeatable as the model allows.
	Temperature float64
	// Clock times the breaker, Retry-After dates and the stream's close
	// timeout (default the wall clock); RNG draws backoff jitter (default
	// math/rand).
	Clock clock.Clock
	RNG   clock.RNG
	// Sleep waits d between attempts, returning early with ctx's error if
	// ctx ends first. nil means a timer. Tests inject one that records the
	// delay and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives retries, failures and breaker transitions (default
	// discard).
	Logger *slog.Logger
}

func (c *OllamaConfig) setDefaults() {
	if c.Host == nil {
		c.Host, _ = url.Parse(DefaultOllamaHost)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 120 * time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 3
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = time.Minute
	}
	c.Backoff.MaxAttempts = c.MaxAttempts
	if c.MaxOutputTokens <= 0 {
		c.MaxOutputTokens = 1024
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
	if c.RNG == nil {
		c.RNG = clock.SystemRNG{}
	}
	if c.Sleep == nil {
		c.Sleep = retry.Sleep
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports a config that cannot work.
func (c OllamaConfig) Validate() error {
	if strings.TrimSpace(c.Model) == "" {
		return errors.New("llm: no Ollama model configured; set one such as qwen2.5:7b-instruct")
	}
	if c.Temperature < 0 || math.IsNaN(c.Temperature) {
		return fmt.Errorf("llm: temperature %v is negative", c.Temperature)
	}
	if c.ContextTokens < 0 {
		return fmt.Errorf("llm: negative context tokens %d", c.ContextTokens)
	}
	return nil
}

// Ollama is the Extractor for a chat model an Ollama server runs. It is
// safe for concurrent use.
type Ollama struct {
	cfg     OllamaConfig
	client  *api.Client
	breaker *resilience.CircuitBreaker
	options map[string]any
	stats   counters
}

var _ Extractor = (*Ollama)(nil)

// NewOllama returns an extractor for cfg. It makes no request.
func NewOllama(cfg OllamaConfig) (*Ollama, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	log := cfg.Logger.With("provider", "ollama", "model", cfg.Model)
	cfg.Logger = log
	userHook := cfg.Breaker.OnStateChange
	cfg.Breaker.OnStateChange = func(from, to resilience.BreakerState) {
		log.Warn("ollama llm circuit", "from", from.String(), "to", to.String())
		if userHook != nil {
			userHook(from, to)
		}
	}
	hc := *cfg.HTTPClient
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = probeTransport{base: base}
	opts := map[string]any{"temperature": cfg.Temperature, "num_predict": cfg.MaxOutputTokens}
	if cfg.ContextTokens > 0 {
		opts["num_ctx"] = cfg.ContextTokens
	}
	return &Ollama{
		cfg:     cfg,
		client:  api.NewClient(cfg.Host, &hc),
		breaker: resilience.NewCircuitBreaker(cfg.Breaker, cfg.Clock),
		options: opts,
	}, nil
}

// Provider implements Extractor: "ollama".
func (o *Ollama) Provider() string { return "ollama" }

// Model implements Extractor.
func (o *Ollama) Model() string { return o.cfg.Model }

// BreakerState is the circuit breaker's state, for status reports.
func (o *Ollama) BreakerState() resilience.BreakerState { return o.breaker.State() }

// Stats returns the counters so far.
func (o *Ollama) Stats() Stats {
	s := o.stats.snapshot()
	s.BreakerState = o.breaker.State()
	return s
}

// Estimate implements Extractor: the cl100k_base tokens of the system
// prompt and req's user message, plus a margin, and MaxOutputTokens.
func (o *Ollama) Estimate(req Request) (promptTokens, maxOutputTokens int) {
	return estimatePrompt(UserMessage(req)), o.cfg.MaxOutputTokens
}

// Extract implements Extractor. It streams one chat whose format is Schema,
// assembles and if need be repairs the answer, and validates each memory.
// Timeouts, 429s (Retry-After honoured), 503s, other 5xx and dropped
// streams are retried up to MaxAttempts with backoff.
//
// Errors: ErrUnavailable (ErrCircuitOpen while the breaker is open; retries
// exhausted; the model not pulled or the request rejected, not retried);
// ErrRefused (a spend limit, quota or permission refusal, after one
// request); ErrInvalidOutput (the answer was not repairable JSON of the
// schema; not retried, since the same prompt at temperature 0 gives the
// same answer); ctx's error when ctx ends. The Result reports attempts and
// tokens whatever the error.
func (o *Ollama) Extract(ctx context.Context, req Request) (Result, error) {
	o.stats.calls.Add(1)
	chat := &api.ChatRequest{
		Model: o.cfg.Model,
		Messages: []api.Message{
			{Role: "system", Content: SystemPrompt},
			{Role: "user", Content: UserMessage(req)},
		},
		Stream:  new(true),
		Format:  schemaJSON,
		Options: o.options,
	}
	var res Result
	bo := resilience.NewBackoff(o.cfg.Backoff, o.cfg.RNG, o.cfg.Clock)
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if !o.breaker.CanExecute() {
			o.stats.breakerRejections.Add(1)
			return res, ErrCircuitOpen
		}
		res.Attempts = attempt
		o.stats.attempts.Add(1)
		ans, f := o.attempt(ctx, chat)
		o.addTokens(&res, ans.promptTokens, ans.outputTokens)
		if f == nil {
			o.breaker.RecordSuccess()
			return o.finish(res, ans, req)
		}
		if err := ctx.Err(); err != nil {
			return res, err // the caller gave up: no fault of the server
		}
		o.count(f.kind)
		switch f.kind {
		case failRefused:
			return res, fmt.Errorf("%w: Ollama at %s refused the request for %s, which retrying will not change; raise the spend limit or check the account: %v",
				ErrRefused, o.cfg.Host.Redacted(), o.cfg.Model, f.err)
		case failModelMissing:
			// A missing model is a setup problem, not an outage: it says
			// nothing about the server's health, so the breaker is spared.
			return res, fmt.Errorf("%w: model %q is not on the Ollama server at %s; run `ollama pull %s`: %v",
				ErrUnavailable, o.cfg.Model, o.cfg.Host.Redacted(), o.cfg.Model, f.err)
		case failRejected:
			return res, fmt.Errorf("%w: the Ollama server at %s rejected the request for %s; check that the model supports chat and JSON schema formats: %v",
				ErrUnavailable, o.cfg.Host.Redacted(), o.cfg.Model, f.err)
		}
		o.breaker.RecordFailure()
		if o.breaker.State() == resilience.Open {
			o.cfg.Logger.Warn("ollama llm unavailable: circuit open", "attempt", attempt, "cause", f.kind.String(), "err", f.err)
			return res, fmt.Errorf("%w after attempt %d: %v", ErrCircuitOpen, attempt, f.err)
		}
		delay := bo.NextBackOff()
		if delay == backoff.Stop {
			o.cfg.Logger.Warn("ollama llm unavailable: attempts exhausted", "attempts", attempt, "cause", f.kind.String(), "err", f.err)
			return res, fmt.Errorf("%w: Ollama at %s failed %d attempts with %s; check that the server is up and not overloaded: %v",
				ErrUnavailable, o.cfg.Host.Redacted(), attempt, o.cfg.Model, f.err)
		}
		if f.retryAfter > delay {
			delay = min(f.retryAfter, o.cfg.MaxRetryAfter)
		}
		o.stats.retries.Add(1)
		o.cfg.Logger.Debug("ollama llm retry", "attempt", attempt, "cause", f.kind.String(), "delay", delay, "err", f.err)
		if err := o.cfg.Sleep(ctx, delay); err != nil {
			return res, err
		}
	}
}

func (o *Ollama) addTokens(res *Result, prompt, output int) {
	res.PromptTokens += prompt
	res.OutputTokens += output
	o.stats.promptTokens.Add(int64(prompt))
	o.stats.outputTokens.Add(int64(output))
}

// finish decodes and validates a transported answer.
func (o *Ollama) finish(res Result, ans answer, req Request) (Result, error) {
	if ans.repaired {
		res.Repaired = true
		o.stats.repaired.Add(1)
	}
	if ans.err != nil {
		o.stats.invalidOutput.Add(1)
		o.cfg.Logger.Warn("ollama llm answer is not JSON", "repo", req.Repo, "session", req.Session, "err", ans.err, "bytes", len(ans.text))
		return res, fmt.Errorf("%w: %v", ErrInvalidOutput, ans.err)
	}
	if err := decodeAnswer(ans.text, &res); err != nil {
		o.stats.invalidOutput.Add(1)
		o.cfg.Logger.Warn("ollama llm answer is not memories", "repo", req.Repo, "session", req.Session, "err", err)
		return res, err
	}
	if res.Invalid > 0 {
		o.stats.invalidCandidates.Add(int64(res.Invalid))
		o.cfg.Logger.Info("ollama llm dropped invalid memories", "repo", req.Repo, "session", req.Session, "invalid", res.Invalid, "reasons", res.InvalidReasons)
	}
	o.stats.successes.Add(1)
	return res, nil
}

func (o *Ollama) count(k failKind) {
	switch k {
	case failRateLimited:
		o.stats.rateLimited.Add(1)
	case failQueueFull:
		o.stats.queueFull.Add(1)
	case failServer:
		o.stats.serverErrors.Add(1)
	case failTimeout:
		o.stats.timeouts.Add(1)
	case failDropped:
		o.stats.dropped.Add(1)
	case failConnect:
		o.stats.connectErrors.Add(1)
	case failRefused:
		o.stats.refused.Add(1)
	case failModelMissing, failRejected:
		o.stats.setupErrors.Add(1)
	}
}

// answer is what one attempt's stream delivered.
type answer struct {
	text         string // the JSON, repaired if need be
	repaired     bool
	err          error // the text could not be made JSON
	promptTokens int
	outputTokens int
}

// errClosedEarly stops a stream whose value is complete but whose final
// chunk does not come: some models pad a JSON answer with whitespace until
// num_predict.
var errClosedEarly = errors.New("llm: answer complete, stream closed early")

// errNoDone is a stream that ended cleanly without its final chunk.
var errNoDone = errors.New("the stream ended before its final chunk")

// attempt makes one streamed chat request under CallTimeout. It returns a
// failure for anything that kept the stream from completing; a complete
// stream returns an answer, which may still not be JSON.
func (o *Ollama) attempt(ctx context.Context, chat *api.ChatRequest) (answer, *failure) {
	actx, cancel := context.WithTimeout(ctx, o.cfg.CallTimeout)
	defer cancel()
	p := &probe{}
	actx = context.WithValue(actx, probeKey{}, p)

	asm := llmjson.NewAssembler(o.cfg.Clock, 0)
	asm.Process(llmjson.Event{Type: llmjson.EventStart})
	var (
		raw      strings.Builder // every delta, for Repair if the assembler gives up
		complete string          // the buffer once it formed a complete value
		asmErr   error
		chunks   int
		final    *api.ChatResponse
	)
	err := o.client.Chat(actx, chat, func(r api.ChatResponse) error {
		if c := r.Message.Content; c != "" {
			chunks++
			if raw.Len() < llmjson.MaxLength {
				raw.WriteString(c)
			}
			if asmErr == nil {
				switch ar := asm.Process(llmjson.Event{Type: llmjson.EventDelta, Content: c}); ar.Type {
				case llmjson.ResultCompleteObject:
					complete = ar.Buffer
				case llmjson.ResultError:
					asmErr = ar.Err
					if errors.Is(ar.Err, llmjson.ErrCloseTimeout) {
						return errClosedEarly
					}
				}
			}
		}
		if r.Done {
			final = &r
		}
		return nil
	})
	switch {
	case errors.Is(err, errClosedEarly):
		// The final chunk never came, so neither did the provider's
		// counts: a chunk is about a token.
		return answer{text: complete, promptTokens: estimateTokensOf(chat), outputTokens: chunks}, nil
	case err != nil:
		asm.Process(llmjson.Event{Type: llmjson.EventError, Err: err})
		return answer{}, o.classify(ctx, actx, p, err)
	case final == nil:
		asm.Process(llmjson.Event{Type: llmjson.EventError, Err: errNoDone})
		return answer{}, &failure{kind: failDropped, err: errNoDone}
	}
	ans := answer{promptTokens: final.PromptEvalCount, outputTokens: final.EvalCount}
	if asmErr == nil {
		ar := asm.Process(llmjson.Event{Type: llmjson.EventStop})
		if ar.Type == llmjson.ResultComplete {
			ans.text, ans.repaired = ar.Buffer, ar.WasRepaired
			return ans, nil
		}
		asmErr = ar.Err
	}
	if complete != "" {
		// The value was whole; what broke the stream came after it.
		ans.text, ans.repaired = complete, true
		return ans, nil
	}
	// Repair looks past prose for the first value that can be made JSON,
	// which the assembler's repair at stop does not.
	fixed, err := llmjson.Repair(raw.String())
	if err != nil {
		ans.err = fmt.Errorf("%v; %v", asmErr, err)
		ans.text = raw.String()
		return ans, nil
	}
	ans.text, ans.repaired = fixed, true
	return ans, nil
}

func estimateTokensOf(chat *api.ChatRequest) int {
	if len(chat.Messages) < 2 {
		return 0
	}
	return estimatePrompt(chat.Messages[1].Content)
}

type failKind int

const (
	failServer failKind = iota
	failRateLimited
	failQueueFull
	failTimeout
	failDropped
	failConnect
	failRefused
	failModelMissing
	failRejected
)

func (k failKind) String() string {
	return [...]string{"server_error", "rate_limited", "queue_full", "timeout", "dropped_stream", "connect_error", "refused", "model_missing", "rejected"}[k]
}

// failure is why an attempt failed and what the server asked to wait.
type failure struct {
	kind       failKind
	err        error
	retryAfter time.Duration
}

// refusalWords mark a 429 or 403 body as a spend limit or quota, which
// waiting does not lift, rather than a rate limit, which it does.
// Ollama's own cloud answers 402 with "usage limit".
var refusalWords = []string{"quota", "billing", "spend limit", "spending limit", "usage limit", "credit", "payment", "insufficient_funds", "insufficient funds"}

func isRefusal(msg string) bool {
	msg = strings.ToLower(msg)
	for _, w := range refusalWords {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// classify sorts a failed attempt. ctx is the caller's, actx the
// attempt's.
func (o *Ollama) classify(ctx, actx context.Context, p *probe, err error) *failure {
	f := &failure{err: err}
	var se api.StatusError
	var ae api.AuthorizationError
	var op *net.OpError
	switch {
	case ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		f.kind = failTimeout
		f.err = fmt.Errorf("no complete answer within %s: %w", o.cfg.CallTimeout, err)
	case errors.As(err, &ae):
		f.kind = failRefused
	case errors.As(err, &se):
		f.kind = classifyStatus(se)
		if f.kind == failRateLimited || f.kind == failQueueFull {
			f.retryAfter = retry.ParseAfter(p.retryAfter(), o.cfg.Clock.Now())
		}
	case p.bodyErr() != nil:
		f.kind = failDropped
	case errors.As(err, &op) && op.Op == "dial":
		f.kind = failConnect
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		f.kind = failDropped
	default:
		var ne net.Error
		var ue *url.Error
		if errors.As(err, &ne) || errors.As(err, &ue) {
			f.kind = failDropped
			break
		}
		// An {"error": …} line mid-stream (the runner crashed) or a line
		// that is not JSON: the server's fault, worth another try.
		f.kind = failServer
	}
	return f
}

func classifyStatus(se api.StatusError) failKind {
	switch code := se.StatusCode; {
	case code == http.StatusPaymentRequired, code == http.StatusUnauthorized:
		return failRefused
	case code == http.StatusForbidden:
		return failRefused
	case code == http.StatusTooManyRequests:
		if isRefusal(se.ErrorMessage) {
			return failRefused
		}
		return failRateLimited
	case code == http.StatusServiceUnavailable:
		if isRefusal(se.ErrorMessage) {
			return failRefused
		}
		return failQueueFull
	case code == http.StatusNotFound:
		return failModelMissing
	case code == http.StatusRequestTimeout:
		return failTimeout
	case code >= 500:
		return failServer
	}
	return failRejected
}

// probeKey carries a *probe into a request's context for probeTransport:
// api.StatusError drops the headers, and api.Client reports a body cut
// mid-line as an error holding the partial line, not as a read error.
type probeKey struct{}

type probe struct {
	mu      sync.Mutex
	header  string
	readErr error
}

func (p *probe) retryAfter() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.header
}

func (p *probe) bodyErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readErr
}

type probeTransport struct{ base http.RoundTripper }

func (t probeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if p, ok := r.Context().Value(probeKey{}).(*probe); ok {
		p.mu.Lock()
		p.header = resp.Header.Get("Retry-After")
		p.mu.Unlock()
		resp.Body = &probeBody{ReadCloser: resp.Body, p: p}
	}
	return resp, nil
}

// probeBody records the first read error other than a clean end.
type probeBody struct {
	io.ReadCloser
	p *probe
}

func (b *probeBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	if err != nil && err != io.EOF {
		b.p.mu.Lock()
		if b.p.readErr == nil {
			b.p.readErr = err
		}
		b.p.mu.Unlock()
	}
	return n, err
}
