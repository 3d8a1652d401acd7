package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/ollamatest"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
)

const testModel = "qwen2.5:7b-instruct"

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
	return slices.Clone(s.waits)
}

// newOllama returns an extractor on srv with a deterministic clock, RNG and
// sleeper.
func newOllama(t testing.TB, srv *ollamatest.Server, cfg OllamaConfig) (*Ollama, *sleeper) {
	t.Helper()
	clk := clock.NewDeterministicMillis(1_700_000_000_000)
	sl := &sleeper{clk: clk}
	if cfg.Model == "" {
		cfg.Model = testModel
	}
	cfg.Host = srv.BaseURL()
	if cfg.Clock == nil {
		cfg.Clock = clk
	}
	cfg.RNG, cfg.Sleep = clock.NewDeterministicRNG(42), sl.Sleep
	o, err := NewOllama(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o, sl
}

// wire is a memory as the model writes it.
type wire struct {
	Content      string   `json:"content"`
	Kind         string   `json:"kind"`
	Rationale    string   `json:"rationale"`
	FilesTouched []string `json:"files_touched"`
	Confidence   float64  `json:"confidence"`
}

func reply(t testing.TB, ms ...wire) string {
	t.Helper()
	b, err := json.Marshal(map[string][]wire{"memories": ms})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	decision = wire{
		Content:      `Local state lives in Badger under .cuedeck/.cache; the "cue_memories" KV bucket is the source of truth.`,
		Kind:         "decision",
		Rationale:    "Badger is rebuildable from JetStream — no migration needed.",
		FilesTouched: []string{"internal/store/badger.go", "./cmd/cue/main.go"},
		Confidence:   0.9,
	}
	preference = wire{
		Content:      "The user wants tests to poll with a deadline, never sleep.\nTabs\tand ünïcödé survive.",
		Kind:         "preference",
		FilesTouched: []string{},
		Confidence:   0.75,
	}
)

func sampleRequest() Request {
	return Request{
		Repo:    "cuedeck",
		Session: "s1",
		Messages: []memory.Message{
			{ID: "1", Content: "user: keep local state in Badger, it is rebuildable"},
			{ID: "2", Content: "assistant: done, see internal/store/badger.go"},
		},
		Files: []string{"internal/store/badger.go"},
	}
}

func wantStats(t *testing.T, got, want Stats) {
	t.Helper()
	if got != want {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
}

func TestHealthyStreamAtOddBoundaries(t *testing.T) {
	for _, chunks := range [][]int{{3}, {1}, {1, 2, 5, 7, 11}, {4096}} {
		t.Run(fmt.Sprint(chunks), func(t *testing.T) {
			srv := ollamatest.NewServer(t)
			srv.Enqueue(ollamatest.Behaviour{Reply: reply(t, decision, preference), Chunks: chunks, PromptEvalCount: 321, EvalCount: 87})
			o, sl := newOllama(t, srv, OllamaConfig{})
			res, err := o.Extract(t.Context(), sampleRequest())
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Memories) != 2 || res.Invalid != 0 || res.Repaired || res.Attempts != 1 {
				t.Fatalf("result %+v", res)
			}
			d, p := res.Memories[0], res.Memories[1]
			if d.Content != decision.Content || d.Kind != memory.KindDecision || d.Rationale != decision.Rationale ||
				d.Confidence != 0.9 || !slices.Equal(d.FilesTouched, []string{"internal/store/badger.go", "cmd/cue/main.go"}) {
				t.Errorf("decision %+v", d)
			}
			if p.Content != preference.Content || p.Kind != memory.KindPreference || p.Confidence != 0.75 || len(p.FilesTouched) != 0 {
				t.Errorf("preference %+v", p)
			}
			if res.PromptTokens != 321 || res.OutputTokens != 87 {
				t.Errorf("tokens %d/%d", res.PromptTokens, res.OutputTokens)
			}
			wantStats(t, o.Stats(), Stats{Calls: 1, Attempts: 1, Successes: 1, PromptTokens: 321, OutputTokens: 87})
			if srv.Requests("/api/chat") != 1 || len(sl.Waits()) != 0 {
				t.Errorf("requests %d, waits %v", srv.Requests("/api/chat"), sl.Waits())
			}
		})
	}
}

func TestRequestShape(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(`{"memories":[]}`))
	o, _ := newOllama(t, srv, OllamaConfig{MaxOutputTokens: 512, ContextTokens: 8192})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil || len(res.Memories) != 0 || res.Invalid != 0 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	chats := srv.ChatRequests()
	if len(chats) != 1 {
		t.Fatalf("%d chats", len(chats))
	}
	c := chats[0]
	if c.Model != testModel || c.Stream == nil || !*c.Stream || string(c.Format) != Schema {
		t.Errorf("model %q, stream %v, format %s", c.Model, c.Stream, c.Format)
	}
	if len(c.Messages) != 2 || c.Messages[0].Role != "system" || c.Messages[0].Content != SystemPrompt ||
		c.Messages[1].Role != "user" || c.Messages[1].Content != UserMessage(sampleRequest()) {
		t.Errorf("messages %+v", c.Messages)
	}
	if c.Options["temperature"] != 0.0 || c.Options["num_predict"] != 512.0 || c.Options["num_ctx"] != 8192.0 {
		t.Errorf("options %v", c.Options)
	}
	if !json.Valid([]byte(Schema)) {
		t.Error("Schema is not JSON")
	}
	user := c.Messages[1].Content
	for _, want := range []string{"Repository: cuedeck", "internal/store/badger.go", "user: keep local state in Badger", "assistant: done"} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q:\n%s", want, user)
		}
	}
}

func TestTruncatedAnswerIsRepaired(t *testing.T) {
	full := reply(t, decision, preference)
	cut := full[:strings.Index(full, `"kind":"preference"`)+len(`"kind":"pref`)]
	srv := ollamatest.NewServer(t)
	srv.Enqueue(ollamatest.Behaviour{Reply: cut, Chunks: []int{3}, DoneReason: "length", PromptEvalCount: 100, EvalCount: 1024})
	o, _ := newOllama(t, srv, OllamaConfig{})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	// The decision survives; the cut preference has kind "pref" and fails
	// validation, counted.
	if !res.Repaired || len(res.Memories) != 1 || res.Memories[0].Content != decision.Content || res.Invalid != 1 {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(res.InvalidReasons[0], `memories[1]: kind "pref"`) {
		t.Errorf("reasons %q", res.InvalidReasons)
	}
	wantStats(t, o.Stats(), Stats{Calls: 1, Attempts: 1, Successes: 1, Repaired: 1, InvalidCandidates: 1, PromptTokens: 100, OutputTokens: 1024})
}

func TestTrailingProseAfterAnswerIsDropped(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.Enqueue(ollamatest.Behaviour{Reply: reply(t, decision) + "\nHope this helps!", Chunks: []int{5}})
	o, _ := newOllama(t, srv, OllamaConfig{})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil || len(res.Memories) != 1 || !res.Repaired {
		t.Fatalf("res %+v, err %v", res, err)
	}
	wantStats(t, o.Stats(), Stats{Calls: 1, Attempts: 1, Successes: 1, Repaired: 1, PromptTokens: o.Stats().PromptTokens, OutputTokens: o.Stats().OutputTokens})
}

func TestInvalidOutput(t *testing.T) {
	for _, tc := range []struct{ name, reply string }{
		{"prose", "I am sorry, I cannot help with that."},
		{"array", `[{"content":"x","kind":"fact"}]`},
		{"no memories", `{"facts":[]}`},
		{"memories not a list", `{"memories":"none"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := ollamatest.NewServer(t)
			srv.SetBehaviour(ollamatest.Behaviour{Reply: tc.reply, Chunks: []int{2}, PromptEvalCount: 50, EvalCount: 9})
			o, sl := newOllama(t, srv, OllamaConfig{})
			res, err := o.Extract(t.Context(), sampleRequest())
			if !errors.Is(err, ErrInvalidOutput) {
				t.Fatalf("err = %v, want ErrInvalidOutput", err)
			}
			if res.Attempts != 1 || res.PromptTokens != 50 || res.OutputTokens != 9 || len(res.Memories) != 0 {
				t.Errorf("result %+v", res)
			}
			st := o.Stats()
			if st.InvalidOutput != 1 || st.Successes != 0 || st.Attempts != 1 || st.Retries != 0 || st.PromptTokens != 50 {
				t.Errorf("stats %+v", st)
			}
			if srv.Requests("/api/chat") != 1 || len(sl.Waits()) != 0 || o.BreakerState() != resilience.Closed {
				t.Errorf("requests %d, waits %v, breaker %v", srv.Requests("/api/chat"), sl.Waits(), o.BreakerState())
			}
		})
	}
}

func TestInvalidCandidatesAreCounted(t *testing.T) {
	answer := `{"memories":[
		{"content":"Use RRF with k=60","kind":"decision","rationale":"","files_touched":["pkg/core/search/fusion.go"],"confidence":0.8},
		{"content":"Do the thing","kind":"todo","confidence":0.5},
		{"content":"Too sure","kind":"fact","confidence":1.5},
		{"content":"   ","kind":"fact","confidence":0.5},
		{"content":"Outside","kind":"fact","files_touched":["/etc/passwd"],"confidence":0.5},
		{"content":"Climbs","kind":"fact","files_touched":["../other/x.go"],"confidence":0.5},
		{"content":"Typed wrong","kind":"fact","confidence":"high"},
		{"content":"An experience","kind":"experience","confidence":0.5},
		"not an object",
		{"content":"No confidence given","kind":"open_question","files_touched":["docs\\design.md"]}
	]}`
	srv := ollamatest.NewServer(t)
	srv.Enqueue(ollamatest.Behaviour{Reply: answer, Chunks: []int{7}})
	o, _ := newOllama(t, srv, OllamaConfig{})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 2 || res.Invalid != 8 || len(res.InvalidReasons) != maxReasons {
		t.Fatalf("result %+v", res)
	}
	if m := res.Memories[1]; m.Kind != memory.KindOpenQuestion || m.Confidence != memory.DefaultConfidence || !slices.Equal(m.FilesTouched, []string{"docs/design.md"}) {
		t.Errorf("second memory %+v", m)
	}
	for i, want := range []string{`memories[1]: kind "todo"`, "memories[2]: confidence 1.5", "memories[3]: content", "memories[4]: files_touched path \"/etc/passwd\" is absolute", "memories[5]: files_touched path \"../other/x.go\" leaves"} {
		if !strings.HasPrefix(res.InvalidReasons[i], want) {
			t.Errorf("reason %d = %q, want prefix %q", i, res.InvalidReasons[i], want)
		}
	}
	st := o.Stats()
	if st.InvalidCandidates != 8 || st.Successes != 1 || st.InvalidOutput != 0 || st.Repaired != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(reply(t, decision)))
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.RateLimited, RetryAfter: 7 * time.Second})
	o, sl := newOllama(t, srv, OllamaConfig{})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil || len(res.Memories) != 1 || res.Attempts != 2 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if waits := sl.Waits(); len(waits) != 1 || waits[0] != 7*time.Second {
		t.Fatalf("waits = %v, want [7s]", waits)
	}
	st := o.Stats()
	if st.RateLimited != 1 || st.Retries != 1 || st.Attempts != 2 || st.Successes != 1 || srv.Requests("/api/chat") != 2 {
		t.Errorf("stats %+v, requests %d", st, srv.Requests("/api/chat"))
	}
}

func TestRetryAfterIsCapped(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(`{"memories":[]}`))
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.RateLimited, RetryAfter: time.Hour})
	o, sl := newOllama(t, srv, OllamaConfig{MaxRetryAfter: 10 * time.Second})
	if _, err := o.Extract(t.Context(), sampleRequest()); err != nil {
		t.Fatal(err)
	}
	if waits := sl.Waits(); len(waits) != 1 || waits[0] != 10*time.Second {
		t.Fatalf("waits = %v, want [10s]", waits)
	}
}

func TestQueueFullIsRetried(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(reply(t, decision)))
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.QueueFull, RetryAfter: 2 * time.Second}, ollamatest.Behaviour{Mode: ollamatest.QueueFull})
	o, sl := newOllama(t, srv, OllamaConfig{})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil || len(res.Memories) != 1 || res.Attempts != 3 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	// The first wait is Retry-After's; the second, without one, is the
	// backoff's second delay: 1 s ± 200 ms.
	waits := sl.Waits()
	if len(waits) != 2 || waits[0] != 2*time.Second || waits[1] < 800*time.Millisecond || waits[1] > 1200*time.Millisecond {
		t.Fatalf("waits = %v", waits)
	}
	st := o.Stats()
	if st.QueueFull != 2 || st.Retries != 2 || st.Attempts != 3 || st.Successes != 1 || srv.Requests("/api/chat") != 3 {
		t.Errorf("stats %+v, requests %d", st, srv.Requests("/api/chat"))
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(reply(t, decision)))
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.ServerError})
	o, sl := newOllama(t, srv, OllamaConfig{})
	if _, err := o.Extract(t.Context(), sampleRequest()); err != nil {
		t.Fatal(err)
	}
	// The first delay is DefaultBackoffConfig's 500 ms ± 200 ms.
	if waits := sl.Waits(); len(waits) != 1 || waits[0] < 300*time.Millisecond || waits[0] > 700*time.Millisecond {
		t.Errorf("waits = %v", waits)
	}
	if st := o.Stats(); st.ServerErrors != 1 || st.Retries != 1 || st.Successes != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestStallTimesOut waits out a 50 ms per-attempt timeout in real time: the
// HTTP client's deadline cannot run on the fake clock.
func TestStallTimesOut(t *testing.T) {
	t.Run("then recovers", func(t *testing.T) {
		srv := ollamatest.NewServer(t, ollamatest.WithChatReply(reply(t, decision)))
		srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.Stall, StallAfter: 3})
		o, sl := newOllama(t, srv, OllamaConfig{CallTimeout: 50 * time.Millisecond})
		res, err := o.Extract(t.Context(), sampleRequest())
		if err != nil || len(res.Memories) != 1 || res.Attempts != 2 {
			t.Fatalf("res %+v, err %v", res, err)
		}
		if st := o.Stats(); st.Timeouts != 1 || st.Retries != 1 || st.Successes != 1 || len(sl.Waits()) != 1 {
			t.Errorf("stats %+v, waits %v", st, sl.Waits())
		}
	})
	t.Run("until attempts run out", func(t *testing.T) {
		srv := ollamatest.NewServer(t, ollamatest.WithChatReply(reply(t, decision)))
		srv.SetBehaviour(ollamatest.Behaviour{Mode: ollamatest.Stall, StallAfter: 3})
		o, sl := newOllama(t, srv, OllamaConfig{CallTimeout: 50 * time.Millisecond})
		res, err := o.Extract(t.Context(), sampleRequest())
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if !strings.Contains(err.Error(), "failed 3 attempts") || res.Attempts != 3 {
			t.Errorf("err %v, attempts %d", err, res.Attempts)
		}
		wantStats(t, o.Stats(), Stats{Calls: 1, Attempts: 3, Retries: 2, Timeouts: 3})
		if srv.Requests("/api/chat") != 3 || len(sl.Waits()) != 2 {
			t.Errorf("requests %d, waits %v", srv.Requests("/api/chat"), sl.Waits())
		}
	})
}

// tickingClock moves forward a second every time it is read, so that the
// assembler's close timeout passes within a few chunks.
type tickingClock struct{ *clock.Deterministic }

func (c tickingClock) Now() time.Time {
	c.Advance(time.Second)
	return c.Deterministic.Now()
}

func TestPaddedAnswerIsClosedEarly(t *testing.T) {
	// A complete value, then whitespace until the stream stalls: the close
	// timeout ends the attempt with the value, not the call timeout.
	srv := ollamatest.NewServer(t)
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.Stall, StallAfter: 40, Reply: reply(t, decision) + strings.Repeat("\n", 60), Chunks: []int{len([]rune(reply(t, decision))), 1}})
	o, sl := newOllama(t, srv, OllamaConfig{Clock: tickingClock{clock.NewDeterministicMillis(0)}, CallTimeout: 10 * time.Second})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil || len(res.Memories) != 1 || res.Attempts != 1 || res.Repaired {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if res.PromptTokens == 0 || res.OutputTokens == 0 {
		t.Errorf("tokens %d/%d: estimates expected without a final chunk", res.PromptTokens, res.OutputTokens)
	}
	if st := o.Stats(); st.Successes != 1 || st.Timeouts != 0 || len(sl.Waits()) != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestDroppedStreamIsRetried(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(reply(t, decision, preference)), ollamatest.WithChatChunks(3))
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.Truncated}, ollamatest.Behaviour{Mode: ollamatest.DropConnection})
	o, sl := newOllama(t, srv, OllamaConfig{})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil || len(res.Memories) != 2 || res.Attempts != 3 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	st := o.Stats()
	if st.DroppedStreams != 2 || st.Retries != 2 || st.Attempts != 3 || st.Successes != 1 || len(sl.Waits()) != 2 {
		t.Errorf("stats %+v, waits %v", st, sl.Waits())
	}
	if srv.Requests("/api/chat") != 3 {
		t.Errorf("requests = %d", srv.Requests("/api/chat"))
	}
}

func TestErrorMidStreamIsRetried(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(reply(t, decision)), ollamatest.WithChatChunks(4))
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.StreamError, StallAfter: 5})
	o, sl := newOllama(t, srv, OllamaConfig{})
	res, err := o.Extract(t.Context(), sampleRequest())
	if err != nil || len(res.Memories) != 1 || res.Attempts != 2 || res.Repaired {
		t.Fatalf("res %+v, err %v", res, err)
	}
	st := o.Stats()
	if st.ServerErrors != 1 || st.Retries != 1 || st.Successes != 1 || st.DroppedStreams != 0 || len(sl.Waits()) != 1 {
		t.Errorf("stats %+v, waits %v", st, sl.Waits())
	}
}

func TestServerDownIsUnavailable(t *testing.T) {
	srv := ollamatest.NewServer(t)
	o, sl := newOllama(t, srv, OllamaConfig{})
	srv.Close()
	res, err := o.Extract(t.Context(), sampleRequest())
	if !errors.Is(err, ErrUnavailable) || res.Attempts != 3 || len(sl.Waits()) != 2 {
		t.Fatalf("err %v, attempts %d, waits %v", err, res.Attempts, sl.Waits())
	}
	if st := o.Stats(); st.ConnectErrors != 3 || st.Retries != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestBreakerOpensAndStopsRequests(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(`{"memories":[]}`))
	srv.SetMode(ollamatest.ServerError)
	var transitions []string
	o, sl := newOllama(t, srv, OllamaConfig{Breaker: resilience.BreakerConfig{
		WindowSize: 4, ErrorThreshold: 0.5, Cooldown: 30 * time.Second, ProbesRequired: 1,
		OnStateChange: func(_, to resilience.BreakerState) { transitions = append(transitions, to.String()) },
	}})

	// Two failures in a window of four open the circuit mid-retry.
	_, err := o.Extract(t.Context(), sampleRequest())
	if !errors.Is(err, ErrCircuitOpen) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrCircuitOpen", err)
	}
	if got := srv.Requests("/api/chat"); got != 2 || o.BreakerState() != resilience.Open {
		t.Fatalf("requests %d, state %v", got, o.BreakerState())
	}

	// While open, nothing reaches the server.
	for range 3 {
		res, err := o.Extract(t.Context(), sampleRequest())
		if !errors.Is(err, ErrCircuitOpen) || res.Attempts != 0 {
			t.Fatalf("res %+v, err %v", res, err)
		}
	}
	if got := srv.Requests("/api/chat"); got != 2 {
		t.Fatalf("requests while open = %d, want 2", got)
	}
	wantStats(t, o.Stats(), Stats{Calls: 4, Attempts: 2, Retries: 1, ServerErrors: 2, BreakerRejections: 3, BreakerState: resilience.Open})

	// After the cooldown a probe goes through and closes it.
	srv.SetMode(ollamatest.Healthy)
	sl.clk.Advance(30 * time.Second)
	if _, err := o.Extract(t.Context(), sampleRequest()); err != nil {
		t.Fatal(err)
	}
	if o.BreakerState() != resilience.Closed || srv.Requests("/api/chat") != 3 {
		t.Fatalf("state %v, requests %d", o.BreakerState(), srv.Requests("/api/chat"))
	}
	if got := strings.Join(transitions, ","); got != "open,half_open,closed" {
		t.Errorf("transitions %s", got)
	}
}

func TestSpendLimitIsRefusedWithoutRetry(t *testing.T) {
	for _, status := range []int{429, 402, 403} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := ollamatest.NewServer(t)
			srv.SetBehaviour(ollamatest.Behaviour{Mode: ollamatest.SpendLimited, Status: status})
			o, sl := newOllama(t, srv, OllamaConfig{})
			res, err := o.Extract(t.Context(), sampleRequest())
			if !errors.Is(err, ErrRefused) || errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want ErrRefused", err)
			}
			if !strings.Contains(err.Error(), "spend limit") || res.Attempts != 1 {
				t.Errorf("err %v, attempts %d", err, res.Attempts)
			}
			if srv.Requests("/api/chat") != 1 || len(sl.Waits()) != 0 {
				t.Errorf("requests %d, waits %v", srv.Requests("/api/chat"), sl.Waits())
			}
			wantStats(t, o.Stats(), Stats{Calls: 1, Attempts: 1, Refused: 1})
		})
	}
}

func TestModelNotFoundIsNotRetried(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithModels("llama3.2"))
	o, sl := newOllama(t, srv, OllamaConfig{})
	_, err := o.Extract(t.Context(), sampleRequest())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ollama pull "+testModel) {
		t.Fatalf("err = %v, want ErrUnavailable telling to pull", err)
	}
	if srv.Requests("/api/chat") != 1 || len(sl.Waits()) != 0 || o.BreakerState() != resilience.Closed {
		t.Errorf("requests %d, waits %v, breaker %v", srv.Requests("/api/chat"), sl.Waits(), o.BreakerState())
	}
	wantStats(t, o.Stats(), Stats{Calls: 1, Attempts: 1, SetupErrors: 1})
}

func TestCallerCancellationStopsAtOnce(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.SetBehaviour(ollamatest.Behaviour{Mode: ollamatest.Slow, Delay: time.Hour})
	o, sl := newOllama(t, srv, OllamaConfig{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	_, err := o.Extract(ctx, sampleRequest())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if srv.Requests("/api/chat") != 1 || len(sl.Waits()) != 0 {
		t.Errorf("requests %d, waits %v", srv.Requests("/api/chat"), sl.Waits())
	}
	if st := o.Stats(); st.Timeouts != 0 || st.Retries != 0 || o.BreakerState() != resilience.Closed {
		t.Errorf("stats %+v", st)
	}
}

func TestConcurrentExtracts(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithChatReply(reply(t, decision, preference)), ollamatest.WithChatChunks(5))
	srv.Enqueue(ollamatest.Behaviour{Mode: ollamatest.ServerError})
	o, _ := newOllama(t, srv, OllamaConfig{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			res, err := o.Extract(t.Context(), sampleRequest())
			if err == nil && len(res.Memories) != 2 {
				err = fmt.Errorf("%d memories", len(res.Memories))
			}
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
	st := o.Stats()
	if st.Calls != 8 || st.Successes != 8 || st.Attempts != 9 || st.ServerErrors != 1 || srv.Requests("/api/chat") != 9 {
		t.Errorf("stats %+v, requests %d", st, srv.Requests("/api/chat"))
	}
}

func TestEstimate(t *testing.T) {
	srv := ollamatest.NewServer(t)
	o, _ := newOllama(t, srv, OllamaConfig{MaxOutputTokens: 700})
	req := sampleRequest()
	prompt, out := o.Estimate(req)
	exact := tokens.Count(SystemPrompt) + tokens.Count(UserMessage(req))
	if out != 700 || prompt < exact || prompt > exact+exact/5+promptOverhead {
		t.Errorf("estimate %d/%d, exact count %d", prompt, out, exact)
	}
	req.Messages = append(req.Messages, memory.Message{Content: strings.Repeat("more words here ", 100)})
	if longer, _ := o.Estimate(req); longer <= prompt+250 {
		t.Errorf("estimate %d does not grow with the messages (was %d)", longer, prompt)
	}
	if srv.TotalRequests() != 0 {
		t.Error("Estimate made a request")
	}
}

func TestConfig(t *testing.T) {
	if _, err := NewOllama(OllamaConfig{}); err == nil {
		t.Error("no model: no error")
	}
	if _, err := NewOllama(OllamaConfig{Model: "m", Temperature: -1}); err == nil {
		t.Error("negative temperature: no error")
	}
	o, err := NewOllama(OllamaConfig{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	if c.Host.String() != DefaultOllamaHost || c.CallTimeout != 120*time.Second || c.MaxAttempts != 3 || c.MaxOutputTokens != 1024 || c.Temperature != 0 {
		t.Errorf("defaults %+v", c)
	}
	if o.Provider() != "ollama" || o.Model() != "m" {
		t.Errorf("provider %q, model %q", o.Provider(), o.Model())
	}
}

// TestRealOllama extracts with the chat model OLLAMA_CHAT_MODEL names on
// the server OLLAMA_HOST names.
func TestRealOllama(t *testing.T) {
	base, real := ollamatest.Endpoint(t)
	if !real {
		t.Skip("OLLAMA_HOST is not set: no real Ollama to test against")
	}
	model := strings.TrimSpace(os.Getenv("OLLAMA_CHAT_MODEL"))
	if model == "" {
		t.Skip("OLLAMA_CHAT_MODEL is not set: no chat model to test with")
	}
	o, err := NewOllama(OllamaConfig{Model: model, Host: base})
	if err != nil {
		t.Fatal(err)
	}
	res, err := o.Extract(t.Context(), Request{
		Repo: "cuedeck",
		Messages: []memory.Message{
			{Content: "user: We will store local state in Badger rather than SQLite, because Badger is pure Go and the binary must build without cgo."},
			{Content: "assistant: Agreed. I switched internal/store/store.go to Badger."},
			{Content: "user: Also, I prefer table-driven tests in this repo."},
		},
		Files: []string{"internal/store/store.go"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || res.PromptTokens == 0 || res.OutputTokens == 0 {
		t.Fatalf("result %+v", res)
	}
	for _, m := range res.Memories {
		if !extractable(m.Kind) || m.Content == "" || m.Confidence < 0 || m.Confidence > 1 {
			t.Errorf("memory %+v", m)
		}
		t.Logf("%s (%.2f): %s %v", m.Kind, m.Confidence, m.Content, m.FilesTouched)
	}
	t.Logf("%d memories, %d invalid, repaired %v, tokens %d/%d, stats %+v", len(res.Memories), res.Invalid, res.Repaired, res.PromptTokens, res.OutputTokens, o.Stats())
}

// BenchmarkExtract measures the client's overhead over the fake server: one
// two-memory answer streamed in 3-rune chunks.
func BenchmarkExtract(b *testing.B) {
	srv := ollamatest.NewServer(b, ollamatest.WithChatReply(reply(b, decision, preference)), ollamatest.WithChatChunks(3))
	o, err := NewOllama(OllamaConfig{Model: testModel, Host: srv.BaseURL()})
	if err != nil {
		b.Fatal(err)
	}
	req := sampleRequest()
	for b.Loop() {
		if res, err := o.Extract(b.Context(), req); err != nil || len(res.Memories) != 2 {
			b.Fatal(res, err)
		}
	}
}
