// Package ollama is the embed.Embedder adapter for any embedding model an
// Ollama server runs (all-minilm gives 384-d MiniLM). It batches texts into
// /api/embed calls, retries transient failures with backoff, and stops
// calling a failing server behind a circuit breaker, so that indexers fall
// back to keyword search (embed.ErrUnavailable) instead of waiting on it.
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/ollama/ollama/api"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/retry"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
)

// Errors Embed returns, besides the caller's context errors.
var (
	// ErrCircuitOpen is returned, without a request being made, while the
	// breaker is open. It wraps embed.ErrUnavailable.
	ErrCircuitOpen = fmt.Errorf("ollama: circuit open: %w", embed.ErrUnavailable)
	// ErrModelNotFound means the server does not have the model; the error
	// returned with it says which `ollama pull` fixes that. It is not
	// retried.
	ErrModelNotFound = errors.New("ollama: model not found")
	// ErrBadResponse means the server answered with something that is not
	// a valid embedding response: broken JSON, the wrong number of vectors
	// or vectors of differing lengths. It is not retried.
	ErrBadResponse = errors.New("ollama: bad embedding response")
)

// DefaultHost is where Ollama listens unless told otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// Config configures an Embedder. Only Model is required.
type Config struct {
	// Model is the Ollama model, e.g. "all-minilm".
	Model string
	// Host is the server's base URL; nil means DefaultHost. main reads
	// OLLAMA_HOST, not this package.
	Host *url.URL
	// HTTPClient makes the requests; nil means a new client with no timeout
	// of its own (Timeout bounds each request).
	HTTPClient *http.Client
	// Dimensions, if set, is the vector length the model must give; a
	// response of another length is ErrBadResponse. Zero: learnt from the
	// first successful response.
	Dimensions int
	// BatchSize is the most texts sent in one request (default 32).
	BatchSize int
	// Timeout bounds each request (default 30 s); an earlier deadline on
	// the caller's context wins.
	Timeout time.Duration
	// MaxAttempts is how many times one batch is tried (default 4).
	MaxAttempts int
	// MaxRetryAfter caps how long a 429's Retry-After is honoured
	// (default 1 min).
	MaxRetryAfter time.Duration
	// Backoff shapes the delays between attempts; zero fields take
	// resilience.DefaultBackoffConfig's. Its MaxAttempts is MaxAttempts.
	Backoff resilience.BackoffConfig
	// Breaker configures the circuit breaker; zero fields take
	// resilience.DefaultBreakerConfig's.
	Breaker resilience.BreakerConfig
	// Clock times the breaker and Retry-After dates (default the wall
	// clock); RNG draws backoff jitter (default math/rand).
	Clock clock.Clock
	RNG   clock.RNG
	// Sleep waits d between attempts, returning early with ctx's error if
	// ctx ends first. nil means a timer. Tests inject one that returns at
	// once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives retries and breaker transitions (default discard).
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.Host == nil {
		c.Host, _ = url.Parse(DefaultHost)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 32
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 4
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = time.Minute
	}
	c.Backoff.MaxAttempts = c.MaxAttempts
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

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if c.Model == "" {
		return errors.New("ollama: no model configured")
	}
	if c.Dimensions < 0 {
		return fmt.Errorf("ollama: negative dimensions %d", c.Dimensions)
	}
	return nil
}

// Embedder embeds texts with an Ollama model. It is safe for concurrent
// use.
type Embedder struct {
	cfg     Config
	client  *api.Client
	breaker *resilience.CircuitBreaker

	mu   sync.Mutex
	dims int // 0 until configured or learnt
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an Embedder for cfg. It makes no request.
func New(cfg Config) (*Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	log := cfg.Logger.With("model", cfg.Model)
	cfg.Logger = log
	userHook := cfg.Breaker.OnStateChange
	cfg.Breaker.OnStateChange = func(from, to resilience.BreakerState) {
		log.Warn("ollama embedder circuit", "from", from.String(), "to", to.String())
		if userHook != nil {
			userHook(from, to)
		}
	}
	hc := *cfg.HTTPClient
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = retryAfterTransport{base: base}
	return &Embedder{
		cfg:     cfg,
		client:  api.NewClient(cfg.Host, &hc),
		breaker: resilience.NewCircuitBreaker(cfg.Breaker, cfg.Clock),
		dims:    cfg.Dimensions,
	}, nil
}

// ModelID implements embed.Embedder: "ollama:<model>".
func (e *Embedder) ModelID() string { return "ollama:" + e.cfg.Model }

// Dimensions implements embed.Embedder. Unless configured, it is 0 until
// the first successful Embed.
func (e *Embedder) Dimensions() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dims
}

// BreakerState is the circuit breaker's state, for status reports.
func (e *Embedder) BreakerState() resilience.BreakerState { return e.breaker.State() }

// Embed implements embed.Embedder: one L2-normalised vector per text, in
// order, in batches of BatchSize, each tried up to MaxAttempts times.
//
// Errors wrap embed.ErrUnavailable when the server cannot be reached or
// keeps failing (ErrCircuitOpen while the breaker is open); ErrModelNotFound
// when the model is not pulled; ErrBadResponse when the answer is malformed;
// ctx's error when ctx ends.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.cfg.BatchSize {
		batch := texts[start:min(start+e.cfg.BatchSize, len(texts))]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one batch, retrying retryable failures.
func (e *Embedder) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	bo := resilience.NewBackoff(e.cfg.Backoff, e.cfg.RNG, e.cfg.Clock)
	for attempt := 1; ; attempt++ {
		if !e.breaker.CanExecute() {
			return nil, ErrCircuitOpen
		}
		vecs, retryAfter, err := e.embedOnce(ctx, batch)
		if err == nil {
			e.breaker.RecordSuccess()
			return vecs, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr // the caller gave up: no fault of the server
		}
		kind := classify(err)
		switch kind {
		case modelNotFound:
			// A missing model is a setup problem, not an outage: it says
			// nothing about the server's health.
			return nil, fmt.Errorf("%w: %q is not on the Ollama server at %s; run `ollama pull %s`: %v",
				ErrModelNotFound, e.cfg.Model, e.cfg.Host.Redacted(), e.cfg.Model, err)
		case permanent:
			return nil, fmt.Errorf("ollama embed: %w", err)
		}
		e.breaker.RecordFailure()
		if kind == badResponse {
			if !errors.Is(err, ErrBadResponse) {
				err = fmt.Errorf("%w: %w", ErrBadResponse, err)
			}
			return nil, err
		}
		delay := bo.NextBackOff()
		if delay == backoff.Stop {
			return nil, fmt.Errorf("ollama embed: giving up after %d attempts: %w: %w", attempt, embed.ErrUnavailable, err)
		}
		if retryAfter > delay {
			delay = min(retryAfter, e.cfg.MaxRetryAfter)
		}
		e.cfg.Logger.Debug("ollama embed retry", "attempt", attempt, "delay", delay, "err", err)
		if err := e.cfg.Sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
}

// embedOnce makes one /api/embed request under the per-request timeout and
// checks its answer. retryAfter is the server's Retry-After, if any.
func (e *Embedder) embedOnce(ctx context.Context, batch []string) (vecs [][]float32, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	var header string
	ctx = context.WithValue(ctx, retryAfterKey{}, &header)
	resp, err := e.client.Embed(ctx, &api.EmbedRequest{Model: e.cfg.Model, Input: batch})
	if err != nil {
		return nil, retry.ParseAfter(header, e.cfg.Clock.Now()), err
	}
	vecs, err = e.check(batch, resp.Embeddings)
	return vecs, 0, err
}

// check validates a response against the batch, learns the dimensions
// from the first good one and normalises the vectors.
func (e *Embedder) check(batch []string, vecs [][]float32) ([][]float32, error) {
	if len(vecs) != len(batch) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrBadResponse, len(vecs), len(batch))
	}
	if len(vecs) == 0 {
		return vecs, nil
	}
	n := len(vecs[0])
	if n == 0 {
		return nil, fmt.Errorf("%w: empty vector", ErrBadResponse)
	}
	for i, v := range vecs {
		if len(v) != n {
			return nil, fmt.Errorf("%w: vector %d has %d dimensions, vector 0 has %d", ErrBadResponse, i, len(v), n)
		}
	}
	e.mu.Lock()
	if e.dims == 0 {
		e.dims = n
	}
	want := e.dims
	e.mu.Unlock()
	if n != want {
		return nil, fmt.Errorf("%w: %d dimensions, want %d", ErrBadResponse, n, want)
	}
	for _, v := range vecs {
		normalize(v)
	}
	return vecs, nil
}

// normalize scales v to unit length in place. Ollama's /api/embed already
// normalises; this guards against models or versions that do not. A zero
// vector is left as it is.
func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.Abs(norm-1) < 1e-6 {
		return
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
}

type errorKind int

const (
	retryable errorKind = iota
	permanent
	modelNotFound
	badResponse
)

// classify sorts a failed request: timeouts, connection errors, 408, 429
// and 5xx are worth retrying; a 404 is a missing model; broken JSON is a
// bad response; any other 4xx is the request's fault.
func classify(err error) errorKind {
	var se api.StatusError
	if errors.As(err, &se) {
		switch {
		case se.StatusCode == http.StatusNotFound:
			return modelNotFound
		case se.StatusCode == http.StatusRequestTimeout, se.StatusCode == http.StatusTooManyRequests, se.StatusCode >= 500:
			return retryable
		}
		return permanent
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, ErrBadResponse) {
		return badResponse
	}
	var ne net.Error
	var ue *url.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.As(err, &ne) || errors.As(err, &ue) {
		return retryable
	}
	return permanent
}

// retryAfterKey carries a *string into a request's context for
// retryAfterTransport to fill: api.StatusError drops the headers.
type retryAfterKey struct{}

type retryAfterTransport struct{ base http.RoundTripper }

func (t retryAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		if p, ok := r.Context().Value(retryAfterKey{}).(*string); ok {
			*p = resp.Header.Get("Retry-After")
		}
	}
	return resp, err
}
