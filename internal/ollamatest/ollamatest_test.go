package ollamatest

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

func client(s *Server) *api.Client { return api.NewClient(s.BaseURL(), &http.Client{}) }

func norm(v []float32) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum)
}

func TestEmbedHealthy(t *testing.T) {
	s := NewServer(t, WithDimensions(16))
	resp, err := client(s).Embed(t.Context(), &api.EmbedRequest{Model: "all-minilm", Input: []string{"a", "b", "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Embeddings) != 3 || len(resp.Embeddings[0]) != 16 {
		t.Fatalf("got %d vectors of %d", len(resp.Embeddings), len(resp.Embeddings[0]))
	}
	for i, v := range resp.Embeddings {
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm %v", i, n)
		}
	}
	if !equal(resp.Embeddings[0], resp.Embeddings[2]) || equal(resp.Embeddings[0], resp.Embeddings[1]) {
		t.Error("equal texts must give equal vectors and different texts different ones")
	}
	if got := s.Inputs(); strings.Join(got, ",") != "a,b,a" {
		t.Errorf("inputs = %v", got)
	}
	if s.Requests("/api/embed") != 1 {
		t.Errorf("requests = %d", s.Requests("/api/embed"))
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEmbedSingleStringAndDimensions(t *testing.T) {
	s := NewServer(t)
	resp, err := client(s).Embed(t.Context(), &api.EmbedRequest{Model: "m", Input: "hello", Dimensions: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Embeddings) != 1 || len(resp.Embeddings[0]) != 8 {
		t.Fatalf("got %v", resp.Embeddings)
	}
}

func TestLegacyEmbeddings(t *testing.T) {
	s := NewServer(t, WithDimensions(4))
	resp, err := client(s).Embeddings(t.Context(), &api.EmbeddingRequest{Model: "m", Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Embedding) != 4 {
		t.Fatalf("got %v", resp.Embedding)
	}
}

func TestFailureModes(t *testing.T) {
	s := NewServer(t, WithModels("all-minilm"))
	c := client(s)
	embed := func() error {
		_, err := c.Embed(t.Context(), &api.EmbedRequest{Model: "all-minilm", Input: []string{"x", "y"}})
		return err
	}
	status := func(err error) int {
		var se api.StatusError
		if errors.As(err, &se) {
			return se.StatusCode
		}
		return 0
	}

	s.Enqueue(Behaviour{Mode: ServerError})
	if err := embed(); status(err) != 500 {
		t.Errorf("server error: %v", err)
	}
	s.Enqueue(Behaviour{Mode: RateLimited, RetryAfter: 3 * time.Second})
	if err := embed(); status(err) != 429 {
		t.Errorf("rate limited: %v", err)
	}
	s.Enqueue(Behaviour{Mode: ModelNotFound})
	if err := embed(); status(err) != 404 || !strings.Contains(err.Error(), `model "all-minilm" not found, try pulling it first`) {
		t.Errorf("model not found: %v", err)
	}
	if _, err := c.Embed(t.Context(), &api.EmbedRequest{Model: "nomic-embed-text", Input: "x"}); status(err) != 404 {
		t.Errorf("unknown model: %v", err)
	}
	s.Enqueue(Behaviour{Mode: BrokenJSON})
	if err := embed(); err == nil || status(err) != 0 {
		t.Errorf("broken json: %v", err)
	}
	s.Enqueue(Behaviour{Mode: Truncated})
	if err := embed(); err == nil {
		t.Error("truncated: no error")
	}
	s.Enqueue(Behaviour{Mode: DropConnection})
	if err := embed(); err == nil {
		t.Error("dropped connection: no error")
	}
	s.Enqueue(Behaviour{Mode: WrongCount})
	if resp, err := c.Embed(t.Context(), &api.EmbedRequest{Model: "all-minilm", Input: []string{"x", "y"}}); err != nil || len(resp.Embeddings) != 1 {
		t.Errorf("wrong count: %v", err)
	}
	if err := embed(); err != nil {
		t.Errorf("after the queue: %v", err)
	}
	if got := s.Requests("/api/embed"); got != 9 {
		t.Errorf("requests = %d, want 9", got)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	s := NewServer(t)
	s.SetBehaviour(Behaviour{Mode: RateLimited, RetryAfter: 1500 * time.Millisecond})
	resp, err := http.Post(s.URL()+"/api/embed", "application/json", strings.NewReader(`{"model":"m","input":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func TestSlowHonoursCancellation(t *testing.T) {
	s := NewServer(t)
	s.SetBehaviour(Behaviour{Mode: Slow, Delay: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := client(s).Embed(ctx, &api.EmbedRequest{Model: "m", Input: "x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestChatStreams(t *testing.T) {
	s := NewServer(t, WithChatReply("the answer is 42"))
	var parts []string
	var last api.ChatResponse
	err := client(s).Chat(t.Context(), &api.ChatRequest{Model: "llama3.2", Messages: []api.Message{{Role: "user", Content: "hi"}}}, func(r api.ChatResponse) error {
		parts = append(parts, r.Message.Content)
		last = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(parts, ""); got != "the answer is 42" || len(parts) != 5 {
		t.Errorf("parts %q", parts)
	}
	if !last.Done || last.DoneReason != "stop" || last.EvalCount != 4 || last.PromptEvalCount == 0 {
		t.Errorf("final chunk %+v", last)
	}
}

func TestChatNotStreamed(t *testing.T) {
	s := NewServer(t, WithChatReply("one two"))
	stream := false
	var got []api.ChatResponse
	err := client(s).Chat(t.Context(), &api.ChatRequest{Model: "m", Stream: &stream}, func(r api.ChatResponse) error {
		got = append(got, r)
		return nil
	})
	if err != nil || len(got) != 1 || got[0].Message.Content != "one two" || !got[0].Done {
		t.Fatalf("err %v, got %+v", err, got)
	}
}

func TestChatStallsMidStream(t *testing.T) {
	s := NewServer(t, WithChatReply("a b c d"))
	s.Enqueue(Behaviour{Mode: Stall, StallAfter: 2})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var n int
	err := client(s).Chat(ctx, &api.ChatRequest{Model: "m"}, func(api.ChatResponse) error {
		n++
		if n == 2 {
			cancel() // the client gives up once the stream has stalled
		}
		return nil
	})
	if n != 2 || err == nil {
		t.Fatalf("chunks %d, err %v", n, err)
	}
}

func TestChatErrors(t *testing.T) {
	s := NewServer(t, WithModels("llama3.2"))
	err := client(s).Chat(t.Context(), &api.ChatRequest{Model: "qwen"}, func(api.ChatResponse) error { return nil })
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("err = %v", err)
	}
	s.Enqueue(Behaviour{Mode: Truncated})
	s.SetChatReply("a b c d e f")
	if err := client(s).Chat(t.Context(), &api.ChatRequest{Model: "llama3.2"}, func(api.ChatResponse) error { return nil }); err == nil {
		t.Fatal("truncated stream: no error")
	}
}

func TestTagsVersionShow(t *testing.T) {
	s := NewServer(t, WithModels("all-minilm"), WithDimensions(384))
	c := client(s)
	v, err := c.Version(t.Context())
	if err != nil || v != Version {
		t.Fatalf("version %q, %v", v, err)
	}
	list, err := c.List(t.Context())
	if err != nil || len(list.Models) != 1 || list.Models[0].Name != "all-minilm:latest" {
		t.Fatalf("list %+v, %v", list, err)
	}
	show, err := c.Show(t.Context(), &api.ShowRequest{Model: "all-minilm"})
	if err != nil || show.Details.EmbeddingLength != 384 {
		t.Fatalf("show %+v, %v", show, err)
	}
	if _, err := c.Show(t.Context(), &api.ShowRequest{Model: "other"}); err == nil {
		t.Fatal("show of an unknown model: no error")
	}
}

func TestClosedServerRefuses(t *testing.T) {
	s := NewServer(t)
	c := client(s)
	s.Close()
	if _, err := c.Embed(t.Context(), &api.EmbedRequest{Model: "m", Input: "x"}); err == nil {
		t.Fatal("no error from a closed server")
	}
}

func TestEndpoint(t *testing.T) {
	base, real := Endpoint(t)
	if real {
		t.Skip("OLLAMA_HOST is set: Endpoint points at a real Ollama")
	}
	if base.Scheme != "http" || base.Host == "" {
		t.Fatalf("base %v", base)
	}
}

func TestChatScriptedReplyChunksAndCounts(t *testing.T) {
	s := NewServer(t, WithChatReply("default"), WithChatChunks(2))
	reply := `{"a":"é\"x"}`
	s.Enqueue(Behaviour{Reply: reply, Chunks: []int{1, 3}, PromptEvalCount: 111, EvalCount: 22, DoneReason: "length"})
	var parts []string
	var last api.ChatResponse
	err := client(s).Chat(t.Context(), &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}}, func(r api.ChatResponse) error {
		if !r.Done {
			parts = append(parts, r.Message.Content)
		}
		last = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{`, `"a"`, `:"é`, `\"x`, `"}`}
	if strings.Join(parts, "|") != strings.Join(want, "|") {
		t.Errorf("parts %q, want %q", parts, want)
	}
	if last.PromptEvalCount != 111 || last.EvalCount != 22 || last.DoneReason != "length" {
		t.Errorf("final chunk %+v", last)
	}
	if got := s.ChatRequests(); len(got) != 1 || got[0].Messages[0].Content != "hi" {
		t.Errorf("chat requests %+v", got)
	}

	// The next chat falls back to the server's reply, in WithChatChunks sizes.
	parts = nil
	err = client(s).Chat(t.Context(), &api.ChatRequest{Model: "m"}, func(r api.ChatResponse) error {
		if !r.Done {
			parts = append(parts, r.Message.Content)
		}
		return nil
	})
	if err != nil || strings.Join(parts, "|") != "de|fa|ul|t" {
		t.Errorf("parts %q, err %v", parts, err)
	}
}

func TestQueueFullAndSpendLimited(t *testing.T) {
	s := NewServer(t)
	for _, tc := range []struct {
		b          Behaviour
		status     int
		retryAfter string
		body       string
	}{
		{Behaviour{Mode: QueueFull, RetryAfter: 3 * time.Second}, 503, "3", "maximum pending requests"},
		{Behaviour{Mode: SpendLimited}, 429, "", "spend limit"},
		{Behaviour{Mode: SpendLimited, Status: 402}, 402, "", "spend limit"},
	} {
		s.Enqueue(tc.b)
		resp, err := http.Post(s.URL()+"/api/chat", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		io.Copy(&body, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter || !strings.Contains(body.String(), tc.body) {
			t.Errorf("%v: status %d, Retry-After %q, body %q", tc.b.Mode, resp.StatusCode, resp.Header.Get("Retry-After"), body.String())
		}
	}
}

func TestChatStreamError(t *testing.T) {
	s := NewServer(t, WithChatReply("a b c d"))
	s.Enqueue(Behaviour{Mode: StreamError, StallAfter: 2})
	var n int
	err := client(s).Chat(t.Context(), &api.ChatRequest{Model: "m"}, func(api.ChatResponse) error {
		n++
		return nil
	})
	if n != 2 || err == nil || !strings.Contains(err.Error(), "running the model") {
		t.Fatalf("chunks %d, err %v", n, err)
	}
}
