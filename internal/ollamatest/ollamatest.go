// Package ollamatest is an Ollama-compatible HTTP server for tests. It speaks
// enough of Ollama's API (/api/embed, /api/embeddings, /api/chat, /api/tags,
// /api/version, /api/show) for the real github.com/ollama/ollama/api client,
// and it can be told, per request or for all of them, to be slow, to stall
// mid-stream, to fail with 500, 429, 503 (a full queue) or 404, to refuse
// on a spend limit, to send broken or truncated JSON or to drop the
// connection. Chat replies can be scripted per request and streamed in
// chunks of chosen sizes, with chosen token counts. The Ollama embedder's tests use it, and so can
// the extractor's LLM tests. Endpoint lets a test target a real Ollama
// through OLLAMA_HOST instead.
package ollamatest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// Mode is how the server answers a request.
type Mode int

// The modes a Behaviour can take.
const (
	// Healthy answers as Ollama would: embeddings are Embedding of each
	// input, chat replies stream the configured reply.
	Healthy Mode = iota
	// Slow waits Behaviour.Delay, or until the client gives up, then
	// answers healthily.
	Slow
	// Stall sends the response headers and Behaviour.StallAfter chat
	// chunks (half an embed body), then hangs until the client gives up.
	Stall
	// ServerError answers 500 with an Ollama error body.
	ServerError
	// RateLimited answers 429, with Retry-After set to
	// Behaviour.RetryAfter in whole seconds when that is positive.
	RateLimited
	// ModelNotFound answers 404 as Ollama does for a model it has not
	// pulled. Requests for a model outside WithModels get it too.
	ModelNotFound
	// BrokenJSON answers 200 with a body that is not valid JSON.
	BrokenJSON
	// Truncated declares the full body's length but sends half of it and
	// closes the connection.
	Truncated
	// DropConnection closes the connection without answering.
	DropConnection
	// WrongCount answers /api/embed with one vector fewer than inputs.
	WrongCount
	// MixedDimensions answers /api/embed with a last vector one element
	// shorter than the others.
	MixedDimensions
	// QueueFull answers 503 as Ollama does when OLLAMA_MAX_QUEUE requests
	// are already waiting, with Retry-After set to Behaviour.RetryAfter in
	// whole seconds when that is positive.
	QueueFull
	// SpendLimited refuses as a metered provider does once a spend limit
	// or quota is reached: Behaviour.Status (default 429, so that a client
	// must read the body to tell it from a rate limit) with a body naming
	// the limit. Retrying it cannot succeed.
	SpendLimited
	// StreamError streams Behaviour.StallAfter chat chunks (at most all
	// of them), then an {"error": …} line instead of the rest, as Ollama
	// does when its runner dies mid-generation. Other endpoints answer
	// healthily.
	StreamError
)

var modeNames = [...]string{"healthy", "slow", "stall", "server_error", "rate_limited", "model_not_found", "broken_json", "truncated", "drop_connection", "wrong_count", "mixed_dimensions", "queue_full", "spend_limited", "stream_error"}

func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// Behaviour scripts one answer.
type Behaviour struct {
	Mode Mode
	// Delay is how long Slow waits before answering.
	Delay time.Duration
	// RetryAfter is the Retry-After of RateLimited, rounded up to seconds;
	// zero sends none.
	RetryAfter time.Duration
	// StallAfter is how many chat chunks Stall sends before hanging, and
	// StreamError before its error.
	StallAfter int
	// Scale multiplies healthy embeddings, so that a test can check that a
	// client normalises vectors that are not. Zero means 1.
	Scale float32
	// Status is the HTTP status of SpendLimited; zero means 429.
	Status int

	// Reply, if not empty, is this chat's assistant reply instead of the
	// server's.
	Reply string
	// Chunks, if set, are the sizes in runes of the streamed chat chunks,
	// the last size repeating, instead of word chunks: odd boundaries cut
	// through JSON strings, escapes and multi-byte text as a tokenizer may.
	// It overrides WithChatChunks.
	Chunks []int
	// PromptEvalCount and EvalCount, if positive, are the token counts the
	// final chat chunk reports instead of the server's estimates (words of
	// the messages, number of chunks), so that a test can make costs exact.
	PromptEvalCount int
	EvalCount       int
	// DoneReason, if set, is the final chat chunk's done_reason instead of
	// "stop" ("length" is a reply cut by num_predict).
	DoneReason string
}

// Option configures a Server.
type Option func(*Server)

// WithDimensions sets the length of the embeddings (default 384).
func WithDimensions(n int) Option { return func(s *Server) { s.dims = n } }

// WithModels limits the models the server knows; requests for others get
// ModelNotFound. By default every model is known.
func WithModels(names ...string) Option { return func(s *Server) { s.models = names } }

// WithChatReply sets the assistant's reply to every chat (default "ok").
func WithChatReply(reply string) Option { return func(s *Server) { s.reply = reply } }

// WithChatChunks streams chat replies in chunks of these sizes in runes,
// the last size repeating, as Behaviour.Chunks does for one request.
func WithChatChunks(sizes ...int) Option { return func(s *Server) { s.chunks = sizes } }

// Version is what /api/version reports.
const Version = "0.32.15"

// Server is a fake Ollama. Its methods are safe for concurrent use, so a
// test may switch modes while requests are in flight.
type Server struct {
	srv  *httptest.Server
	done chan struct{} // closed by Close to release stalled handlers

	mu       sync.Mutex
	dims     int
	models   []string
	reply    string
	chunks   []int
	chats    []api.ChatRequest
	global   Behaviour
	queue    []Behaviour
	requests map[string]int
	inputs   []string
	closed   bool
}

// NewServer starts a fake Ollama and closes it when t's test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{done: make(chan struct{}), dims: 384, reply: "ok", requests: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", s.handleEmbed)
	mux.HandleFunc("POST /api/embeddings", s.handleEmbeddings)
	mux.HandleFunc("POST /api/chat", s.handleChat)
	mux.HandleFunc("GET /api/tags", s.handleTags)
	mux.HandleFunc("GET /api/version", s.handleVersion)
	mux.HandleFunc("POST /api/show", s.handleShow)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// URL is the server's base URL, e.g. "http://127.0.0.1:40123".
func (s *Server) URL() string { return s.srv.URL }

// BaseURL is URL parsed, ready for api.NewClient.
func (s *Server) BaseURL() *url.URL {
	u, err := url.Parse(s.srv.URL)
	if err != nil {
		panic(err) // httptest always gives a valid URL
	}
	return u
}

// Close releases stalled and slow handlers, then stops the server. Later
// requests fail to connect. It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetBehaviour sets how requests are answered once the queue is empty.
func (s *Server) SetBehaviour(b Behaviour) {
	s.mu.Lock()
	s.global = b
	s.mu.Unlock()
}

// SetChatReply sets the assistant's reply to later chats.
func (s *Server) SetChatReply(reply string) {
	s.mu.Lock()
	s.reply = reply
	s.mu.Unlock()
}

// SetMode is SetBehaviour(Behaviour{Mode: m}).
func (s *Server) SetMode(m Mode) { s.SetBehaviour(Behaviour{Mode: m}) }

// Enqueue scripts the next requests, one Behaviour each, in order, before
// the global behaviour applies again. Every endpoint except /api/version
// and /api/tags takes from the queue.
func (s *Server) Enqueue(bs ...Behaviour) {
	s.mu.Lock()
	s.queue = append(s.queue, bs...)
	s.mu.Unlock()
}

// Requests is how many requests path (e.g. "/api/embed") has received.
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// TotalRequests is how many requests all endpoints have received.
func (s *Server) TotalRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.requests {
		n += c
	}
	return n
}

// Inputs is every text /api/embed and /api/embeddings have received, in
// order of arrival.
func (s *Server) Inputs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.inputs)
}

// ChatRequests is every request /api/chat has received and decoded, in
// order of arrival.
func (s *Server) ChatRequests() []api.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.chats)
}

// ResetCounts forgets the requests, inputs and chats seen so far.
func (s *Server) ResetCounts() {
	s.mu.Lock()
	s.requests, s.inputs, s.chats = map[string]int{}, nil, nil
	s.mu.Unlock()
}

// next counts a request on path and returns how to answer it.
func (s *Server) next(path string, scripted bool) Behaviour {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[path]++
	if scripted && len(s.queue) > 0 {
		b := s.queue[0]
		s.queue = s.queue[1:]
		return b
	}
	return s.global
}

func (s *Server) knows(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.models) == 0 || slices.Contains(s.models, model) || slices.Contains(s.models, strings.TrimSuffix(model, ":latest"))
}

func (s *Server) dimensions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dims
}

// Embedding is the healthy server's vector for text: dims values drawn from
// a hash of text, L2-normalised. Equal texts give equal vectors.
func Embedding(text string, dims int) []float32 {
	h := fnv.New64a()
	io.WriteString(h, text)
	state := h.Sum64()
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		// splitmix64: cheap, well-spread values from one seed.
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		f := float64(z>>11)/float64(1<<53)*2 - 1
		v[i] = float32(f)
		sum += f * f
	}
	if norm := math.Sqrt(sum); norm > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / norm)
		}
	}
	return v
}

// fail answers a failing behaviour, or a request for an unknown model, and
// reports whether it did. Slow waits first; the modes that shape a body
// report false and leave it to the caller.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, b Behaviour, model string) bool {
	switch b.Mode {
	case Slow:
		t := time.NewTimer(b.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return true
		case <-s.done:
			return true
		}
	case ServerError:
		writeError(w, http.StatusInternalServerError, "llama runner process has terminated: exit status 2")
	case RateLimited:
		setRetryAfter(w, b.RetryAfter)
		writeError(w, http.StatusTooManyRequests, "server busy, please try again.  maximum pending requests exceeded")
	case QueueFull:
		setRetryAfter(w, b.RetryAfter)
		writeError(w, http.StatusServiceUnavailable, "server busy, please try again.  maximum pending requests exceeded")
	case SpendLimited:
		status := b.Status
		if status == 0 {
			status = http.StatusTooManyRequests
		}
		writeError(w, status, "monthly spend limit reached: raise the limit or add credits in billing settings")
	case ModelNotFound:
		writeNotFound(w, model)
	case BrokenJSON:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"model":"`+model+`","embeddings":[[0.1,0.2,`)
	case DropConnection:
		s.drop(w)
	default:
	}
	switch b.Mode {
	case Healthy, Slow, Stall, Truncated, WrongCount, MixedDimensions, StreamError:
		if !s.knows(model) {
			writeNotFound(w, model)
			return true
		}
		return false
	}
	return true
}

// setRetryAfter sets Retry-After to d rounded up to whole seconds, if d is
// positive.
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		secs := int64((d + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	}
}

func (s *Server) drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("ollamatest: response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}

// hang blocks until the client gives up or the server closes.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeNotFound(w http.ResponseWriter, model string) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", model))
}

// writeBody answers v under b's Mode where that shapes a body: Truncated
// and Stall send half of it.
func (s *Server) writeBody(w http.ResponseWriter, r *http.Request, b Behaviour, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch b.Mode {
	case Truncated:
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body[:len(body)/2])
		// Returning short of Content-Length makes net/http close the
		// connection: the client reads an unexpected EOF.
	case Stall:
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body[:len(body)/2])
		http.NewResponseController(w).Flush()
		s.hang(r)
	default:
		w.Write(body)
	}
}

// embedInputs reads Ollama's input field: a string or a list of strings.
func embedInputs(raw any) ([]string, error) {
	switch in := raw.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{in}, nil
	case []any:
		out := make([]string, len(in))
		for i, x := range in {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("invalid input type")
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("invalid input type")
}

// decodeRequest reads a JSON request body and takes the request's scripted
// behaviour. A body that does not decode is still counted, and answered 400.
func decodeRequest[T any](s *Server, w http.ResponseWriter, r *http.Request) (T, Behaviour, bool) {
	var req T
	err := json.NewDecoder(r.Body).Decode(&req)
	b := s.next(r.URL.Path, true)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return req, b, false
	}
	return req, b, true
}

func (s *Server) handleEmbed(w http.ResponseWriter, r *http.Request) {
	req, b, ok := decodeRequest[api.EmbedRequest](s, w, r)
	if !ok {
		return
	}
	inputs, err := embedInputs(req.Input)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	s.inputs = append(s.inputs, inputs...)
	s.mu.Unlock()
	if s.fail(w, r, b, req.Model) {
		return
	}
	dims := s.dimensions()
	if req.Dimensions > 0 && req.Dimensions < dims {
		dims = req.Dimensions
	}
	resp := api.EmbedResponse{Model: req.Model, Embeddings: make([][]float32, 0, len(inputs))}
	tokens := 0
	for _, in := range inputs {
		resp.Embeddings = append(resp.Embeddings, scaled(Embedding(in, dims), b.Scale))
		tokens += len(strings.Fields(in)) + 2
	}
	switch b.Mode {
	case WrongCount:
		if n := len(resp.Embeddings); n > 0 {
			resp.Embeddings = resp.Embeddings[:n-1]
		}
	case MixedDimensions:
		if n := len(resp.Embeddings); n > 0 && dims > 1 {
			resp.Embeddings[n-1] = resp.Embeddings[n-1][:dims-1]
		}
	}
	resp.PromptEvalCount = tokens
	resp.TotalDuration = time.Millisecond
	s.writeBody(w, r, b, resp)
}

func scaled(v []float32, by float32) []float32 {
	if by == 0 || by == 1 {
		return v
	}
	for i := range v {
		v[i] *= by
	}
	return v
}

// handleEmbeddings is the legacy endpoint: one prompt, one vector, and, as
// in Ollama, not normalised (the healthy vector is scaled by 2).
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	req, b, ok := decodeRequest[api.EmbeddingRequest](s, w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.inputs = append(s.inputs, req.Prompt)
	s.mu.Unlock()
	if s.fail(w, r, b, req.Model) {
		return
	}
	scale := b.Scale
	if scale == 0 {
		scale = 2
	}
	v := scaled(Embedding(req.Prompt, s.dimensions()), scale)
	e := make([]float64, len(v))
	for i, x := range v {
		e[i] = float64(x)
	}
	s.writeBody(w, r, b, api.EmbeddingResponse{Embedding: e})
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	req, b, ok := decodeRequest[api.ChatRequest](s, w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.chats = append(s.chats, req)
	reply, sizes := s.reply, s.chunks
	s.mu.Unlock()
	if s.fail(w, r, b, req.Model) {
		return
	}
	if b.Reply != "" {
		reply = b.Reply
	}
	if b.Chunks != nil {
		sizes = b.Chunks
	}
	promptTokens := 0
	for _, m := range req.Messages {
		promptTokens += len(strings.Fields(m.Content)) + 4
	}
	if b.PromptEvalCount > 0 {
		promptTokens = b.PromptEvalCount
	}
	var chunks []string
	if len(sizes) > 0 {
		chunks = splitRunes(reply, sizes)
	} else {
		chunks = splitReply(reply)
	}
	evalCount := len(chunks)
	if b.EvalCount > 0 {
		evalCount = b.EvalCount
	}
	doneReason := "stop"
	if b.DoneReason != "" {
		doneReason = b.DoneReason
	}
	final := api.ChatResponse{
		Model:      req.Model,
		CreatedAt:  time.Now().UTC(),
		Message:    api.Message{Role: "assistant"},
		Done:       true,
		DoneReason: doneReason,
		Metrics: api.Metrics{
			TotalDuration:      time.Duration(len(chunks)+1) * time.Millisecond,
			LoadDuration:       time.Microsecond,
			PromptEvalCount:    promptTokens,
			PromptEvalDuration: time.Microsecond,
			EvalCount:          evalCount,
			EvalDuration:       time.Duration(len(chunks)) * time.Millisecond,
		},
	}
	if req.Stream != nil && !*req.Stream {
		final.Message.Content = reply
		s.writeBody(w, r, b, final)
		return
	}
	s.streamChat(w, r, b, req.Model, chunks, final)
}

// streamChat sends chunks as NDJSON lines, one flush each, then final.
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, b Behaviour, model string, chunks []string, final api.ChatResponse) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	for i, c := range chunks {
		if b.Mode == Stall && i == b.StallAfter {
			rc.Flush()
			s.hang(r)
			return
		}
		if b.Mode == StreamError && i == b.StallAfter {
			break
		}
		if b.Mode == Truncated && i == len(chunks)/2 {
			io.WriteString(w, `{"model":"`+model+`","message":{"role":"assis`)
			rc.Flush()
			s.drop(w)
			return
		}
		enc.Encode(api.ChatResponse{Model: model, CreatedAt: time.Now().UTC(), Message: api.Message{Role: "assistant", Content: c}})
		rc.Flush()
	}
	switch b.Mode {
	case Stall:
		rc.Flush()
		s.hang(r)
		return
	case StreamError:
		enc.Encode(map[string]string{"error": "an error was encountered while running the model: unexpected EOF"})
		return
	}
	enc.Encode(final)
}

// splitReply cuts reply into word-sized chunks that keep their spaces, as
// a model streams tokens.
func splitReply(reply string) []string {
	var out []string
	start := 0
	for i := 1; i < len(reply); i++ {
		if reply[i] == ' ' {
			out = append(out, reply[start:i])
			start = i
		}
	}
	if start < len(reply) {
		out = append(out, reply[start:])
	}
	return out
}

// splitRunes cuts reply into chunks of sizes[0], sizes[1], … runes, the
// last size repeating; sizes below 1 count as 1.
func splitRunes(reply string, sizes []int) []string {
	var out []string
	runes := []rune(reply)
	for i := 0; len(runes) > 0; i++ {
		n := max(sizes[min(i, len(sizes)-1)], 1)
		n = min(n, len(runes))
		out = append(out, string(runes[:n]))
		runes = runes[n:]
	}
	return out
}

func (s *Server) handleTags(w http.ResponseWriter, r *http.Request) {
	s.next(r.URL.Path, false)
	s.mu.Lock()
	names := slices.Clone(s.models)
	s.mu.Unlock()
	if len(names) == 0 {
		names = []string{"all-minilm:latest"}
	}
	resp := api.ListResponse{Models: []api.ListModelResponse{}}
	for _, n := range names {
		if !strings.Contains(n, ":") {
			n += ":latest"
		}
		sum := fnv.New64a()
		io.WriteString(sum, n)
		digest := binary.BigEndian.AppendUint64(nil, sum.Sum64())
		resp.Models = append(resp.Models, api.ListModelResponse{
			Name: n, Model: n, ModifiedAt: time.Unix(0, 0).UTC(), Size: 45_960_996,
			Digest:  fmt.Sprintf("%x", digest),
			Details: api.ModelDetails{Format: "gguf", Family: "bert", Families: []string{"bert"}, ParameterSize: "23M", QuantizationLevel: "F16"},
		})
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	s.next(r.URL.Path, false)
	writeJSON(w, http.StatusOK, map[string]string{"version": Version})
}

func (s *Server) handleShow(w http.ResponseWriter, r *http.Request) {
	req, b, ok := decodeRequest[api.ShowRequest](s, w, r)
	if !ok {
		return
	}
	if s.fail(w, r, b, req.Model) {
		return
	}
	dims := s.dimensions()
	s.writeBody(w, r, b, api.ShowResponse{
		Details: api.ModelDetails{Format: "gguf", Family: "bert", Families: []string{"bert"}, ParameterSize: "23M", QuantizationLevel: "F16", EmbeddingLength: dims},
		ModelInfo: map[string]any{
			"general.architecture":  "bert",
			"bert.embedding_length": dims,
			"bert.context_length":   512,
		},
	})
}

// Endpoint is the Ollama a test should talk to: the one OLLAMA_HOST names,
// with real true, or else a new fake Server's (closed when t ends), with
// real false. Tests that need a real model should skip when real is false.
func Endpoint(t testing.TB, opts ...Option) (base *url.URL, real bool) {
	t.Helper()
	if strings.TrimSpace(os.Getenv("OLLAMA_HOST")) != "" {
		return envconfig.Host(), true
	}
	return NewServer(t, opts...).BaseURL(), false
}
