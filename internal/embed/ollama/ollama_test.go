package ollama

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/embed"
	"github.com/cuedeck/cuedeck/internal/ollamatest"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
)

// sleeper stands in for time: it records each wait and moves the clock
// instead of sleeping.
type sleeper struct {
	clk *clock.Deterministic

	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	s.clk.Advance(d)
	return ctx.Err()
}

func (s *sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newEmbedder returns an Embedder on srv with a deterministic clock, RNG
// and sleeper; cfg's Model defaults to all-minilm.
func newEmbedder(t *testing.T, srv *ollamatest.Server, cfg Config) (*Embedder, *sleeper) {
	t.Helper()
	clk := clock.NewDeterministicMillis(1_700_000_000_000)
	sl := &sleeper{clk: clk}
	if cfg.Model == "" {
		cfg.Model = "all-minilm"
	}
	cfg.Host = srv.BaseURL()
	cfg.Clock, cfg.RNG, cfg.Sleep = clk, clock.NewDeterministicRNG(42), sl.Sleep
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, sl
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d", i)
	}
	return out
}

func TestEmbedBatchesInOrder(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(384))
	e, _ := newEmbedder(t, srv, Config{})
	if e.ModelID() != "ollama:all-minilm" || e.Dimensions() != 0 {
		t.Fatalf("before: %q, %d", e.ModelID(), e.Dimensions())
	}
	in := texts(70)
	vecs, err := e.Embed(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("/api/embed"); got != 3 {
		t.Errorf("requests = %d, want 3 (32, 32, 6)", got)
	}
	if len(vecs) != 70 || e.Dimensions() != 384 {
		t.Fatalf("%d vectors, dimensions %d", len(vecs), e.Dimensions())
	}
	for i, v := range vecs {
		want := ollamatest.Embedding(in[i], 384)
		for j := range v {
			if math.Abs(float64(v[j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d is not text %d's", i, i)
			}
		}
	}
	if got := srv.Inputs(); strings.Join(got, "|") != strings.Join(in, "|") {
		t.Error("server saw the texts out of order")
	}
}

func TestEmbedNothing(t *testing.T) {
	srv := ollamatest.NewServer(t)
	e, _ := newEmbedder(t, srv, Config{})
	vecs, err := e.Embed(t.Context(), nil)
	if err != nil || len(vecs) != 0 || srv.TotalRequests() != 0 {
		t.Fatalf("vecs %v, err %v, requests %d", vecs, err, srv.TotalRequests())
	}
}

func TestEmbedNormalisesDefensively(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(8))
	srv.SetBehaviour(ollamatest.Behaviour{Scale: 3})
	e, _ := newEmbedder(t, srv, Config{})
	vecs, err := e.Embed(t.Context(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(sum)-1) > 1e-5 {
			t.Errorf("vector %d has norm %v", i, math.Sqrt(sum))
		}
	}
}

// TestHungServerTimesOutThenRetries waits out a 50 ms per-request timeout
// in real time: the HTTP client's deadline cannot run on the fake clock.
func TestHungServerTimesOutThenRetries(t *testing.T) {
	for _, b := range []ollamatest.Behaviour{
		{Mode: ollamatest.Slow, Delay: time.Hour},
		{Mode: ollamatest.Stall},
	} {
		t.Run(b.Mode.String(), func(t *testing.T) {
			srv := ollamatest.NewServer(t)
			srv.Enqueue(b)
			e, sl := newEmbedder(t, srv, Config{Timeout: 50 * time.Millisecond})
			vecs, err := e.Embed(t.Context(), []string{"x"})
			if err != nil || len(vecs) != 1 {
				t.Fatalf("vecs %d, err %v", len(vecs), err)
			}
			if got := srv.Requests("/api/embed"); got != 2 {
				t.Errorf("requests = %d, want 2", got)
			}
			if len(sl.Waits()) != 1 {
				t.Errorf("waits = %v, want one backoff", sl.Waits())
			}
		})
	}
}

func TestCallerDeadlineIsNotRetried(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.SetBehaviour(ollamatest.Behaviour{Mode: ollamatest.Slow, Delay: time.Hour})
	e, sl := newEmbedder(t, srv, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	_, err := e.Embed(ctx, []string{"x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if srv.Requests("/api/embed") != 1 || len(sl.Waits()) != 0 {
		t.Errorf("requests %d, waits %v", srv.Requests("/api/embed"), sl.Waits())
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.ServerError})
	e, sl := newEmbedder(t, srv, Config{})
	if _, err := e.Embed(t.Context(), []string{"x", "y"}); err != nil {
		t.Fatal(err)
	}
	waits := sl.Waits()
	if srv.Requests("/api/embed") != 2 || len(waits) != 1 {
		t.Fatalf("requests %d, waits %v", srv.Requests("/api/embed"), waits)
	}
	// The first delay is DefaultBackoffConfig's 500 ms ± 200 ms.
	if waits[0] < 300*time.Millisecond || waits[0] > 700*time.Millisecond {
		t.Errorf("first backoff = %v", waits[0])
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.RateLimited, RetryAfter: 7 * time.Second})
	e, sl := newEmbedder(t, srv, Config{})
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if waits := sl.Waits(); len(waits) != 1 || waits[0] != 7*time.Second {
		t.Fatalf("waits = %v, want [7s]", waits)
	}
}

func TestRetryAfterIsCapped(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.RateLimited, RetryAfter: time.Hour})
	e, sl := newEmbedder(t, srv, Config{MaxRetryAfter: 10 * time.Second})
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if waits := sl.Waits(); len(waits) != 1 || waits[0] != 10*time.Second {
		t.Fatalf("waits = %v, want [10s]", waits)
	}
}

func TestServerDownIsUnavailable(t *testing.T) {
	srv := ollamatest.NewServer(t)
	e, sl := newEmbedder(t, srv, Config{})
	srv.Close()
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, embed.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "after 4 attempts") || len(sl.Waits()) != 3 {
		t.Errorf("err %v, waits %v", err, sl.Waits())
	}
}

func TestDroppedAndTruncatedAreRetried(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.DropConnection}, ollamatest.Behaviour{Mode: ollamatest.Truncated})
	e, _ := newEmbedder(t, srv, Config{})
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests("/api/embed"); got != 3 {
		t.Errorf("requests = %d, want 3", got)
	}
}

func TestBreakerOpensAndRecovers(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.SetMode(ollamatest.ServerError)
	var transitions []string
	e, sl := newEmbedder(t, srv, Config{Breaker: resilience.BreakerConfig{
		WindowSize: 4, ErrorThreshold: 0.5, Cooldown: 30 * time.Second, ProbesRequired: 2,
		OnStateChange: func(from, to resilience.BreakerState) { transitions = append(transitions, to.String()) },
	}})

	// Two failures in a window of four open the circuit mid-retry.
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, ErrCircuitOpen) || !errors.Is(err, embed.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrCircuitOpen", err)
	}
	if got := srv.Requests("/api/embed"); got != 2 {
		t.Fatalf("requests = %d, want 2", got)
	}
	if e.BreakerState() != resilience.Open {
		t.Fatalf("state %v", e.BreakerState())
	}

	// While open, nothing reaches the server.
	for range 3 {
		if _, err := e.Embed(t.Context(), []string{"x"}); !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("err = %v", err)
		}
	}
	if got := srv.Requests("/api/embed"); got != 2 {
		t.Fatalf("requests while open = %d, want 2", got)
	}

	// After the cooldown, probes go through and two successes close it.
	srv.SetMode(ollamatest.Healthy)
	sl.clk.Advance(30 * time.Second)
	for range 2 {
		if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
			t.Fatal(err)
		}
	}
	if e.BreakerState() != resilience.Closed || srv.Requests("/api/embed") != 4 {
		t.Fatalf("state %v, requests %d", e.BreakerState(), srv.Requests("/api/embed"))
	}
	if got := strings.Join(transitions, ","); got != "open,half_open,closed" {
		t.Errorf("transitions %s", got)
	}
}

func TestModelNotFoundIsNotRetried(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithModels("all-minilm"))
	e, sl := newEmbedder(t, srv, Config{Model: "nomic-embed-text"})
	_, err := e.Embed(t.Context(), []string{"x"})
	if !errors.Is(err, ErrModelNotFound) || errors.Is(err, embed.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrModelNotFound", err)
	}
	if !strings.Contains(err.Error(), "ollama pull nomic-embed-text") {
		t.Errorf("message does not say what to pull: %v", err)
	}
	if srv.Requests("/api/embed") != 1 || len(sl.Waits()) != 0 {
		t.Errorf("requests %d, waits %v", srv.Requests("/api/embed"), sl.Waits())
	}
	if e.BreakerState() != resilience.Closed {
		t.Errorf("a missing model moved the breaker to %v", e.BreakerState())
	}
}

func TestBadResponses(t *testing.T) {
	for _, mode := range []ollamatest.Mode{ollamatest.BrokenJSON, ollamatest.WrongCount, ollamatest.MixedDimensions} {
		t.Run(mode.String(), func(t *testing.T) {
			srv := ollamatest.NewServer(t)
			srv.SetMode(mode)
			e, _ := newEmbedder(t, srv, Config{})
			_, err := e.Embed(t.Context(), []string{"x", "y", "z"})
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrBadResponse) || errors.Is(err, embed.ErrUnavailable) {
				t.Errorf("err = %v, want ErrBadResponse", err)
			}
			if srv.Requests("/api/embed") != 1 {
				t.Errorf("requests = %d, want 1", srv.Requests("/api/embed"))
			}
		})
	}
}

func TestConfiguredDimensionsAreEnforced(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(384))
	e, _ := newEmbedder(t, srv, Config{Dimensions: 768})
	if e.Dimensions() != 768 {
		t.Fatalf("dimensions %d", e.Dimensions())
	}
	if _, err := e.Embed(t.Context(), []string{"x"}); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("err = %v, want ErrBadResponse", err)
	}
}

func TestConcurrentEmbeds(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithDimensions(16))
	e, _ := newEmbedder(t, srv, Config{BatchSize: 4})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := e.Embed(t.Context(), texts(10))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.Requests("/api/embed"); got != 24 {
		t.Errorf("requests = %d, want 24", got)
	}
}

func TestValidate(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("no model: no error")
	}
	if _, err := New(Config{Model: "m", Dimensions: -1}); err == nil {
		t.Error("negative dimensions: no error")
	}
}

// TestRealOllama embeds with a model on the server OLLAMA_HOST names;
// OLLAMA_EMBED_MODEL picks the model (default all-minilm).
func TestRealOllama(t *testing.T) {
	base, real := ollamatest.Endpoint(t)
	if !real {
		t.Skip("OLLAMA_HOST is not set: no real Ollama to test against")
	}
	model := "all-minilm"
	if m := strings.TrimSpace(os.Getenv("OLLAMA_EMBED_MODEL")); m != "" {
		model = m
	}
	e, err := New(Config{Model: model, Host: base})
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.Embed(t.Context(), []string{"the cat sat on the mat", "a kitten rested on a rug", "quarterly tax filing deadlines"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dimensions() == 0 || len(vecs) != 3 {
		t.Fatalf("dimensions %d, %d vectors", e.Dimensions(), len(vecs))
	}
	dot := func(a, b []float32) (s float64) {
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	if near, far := dot(vecs[0], vecs[1]), dot(vecs[0], vecs[2]); near <= far {
		t.Errorf("similar sentences score %v, unrelated %v", near, far)
	}
	t.Logf("%s: %d dimensions", e.ModelID(), e.Dimensions())
}

// BenchmarkEmbed measures the client's overhead over the fake server: 70
// texts in three requests.
func BenchmarkEmbed(b *testing.B) {
	srv := ollamatest.NewServer(b, ollamatest.WithDimensions(384))
	e, err := New(Config{Model: "all-minilm", Host: srv.BaseURL()})
	if err != nil {
		b.Fatal(err)
	}
	in := make([]string, 70)
	for i := range in {
		in[i] = fmt.Sprintf("text number %d", i)
	}
	for b.Loop() {
		if _, err := e.Embed(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}
