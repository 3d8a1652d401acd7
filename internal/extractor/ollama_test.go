package extractor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/llm"
	"github.com/cuedeck/cuedeck/internal/ollamatest"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/events"
)

const secret = "AKIAIOSFODNN7EXAMPLE"

func ollamaReply(t testing.TB, ms ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"memories": ms})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newOllamaService(t *testing.T, srv *ollamatest.Server) (*bus.Conn, *Service) {
	t.Helper()
	ext, err := llm.NewOllama(llm.OllamaConfig{Model: "qwen2.5:7b-instruct", Host: srv.BaseURL(), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	conn, _ := bustest.Start(t, bus.Settings{})
	s := newService(t, conn, ext, Config{PriceInPerMTok: 1, PriceOutPerMTok: 1, DailyUSD: 1})
	run(t, s)
	return conn, s
}

func TestOllamaPathStoresTheModelsMemories(t *testing.T) {
	srv := ollamatest.NewServer(t)
	srv.SetBehaviour(ollamatest.Behaviour{Chunks: []int{7}, PromptEvalCount: 300, EvalCount: 50, Reply: ollamaReply(t,
		map[string]any{"content": "Retries live in the HTTP transport", "kind": "decision", "rationale": "Every caller gets them",
			"files_touched": []string{"internal/client/client.go"}, "confidence": 0.9},
		map[string]any{"content": "The staging bucket key is " + secret, "kind": "fact", "confidence": 0.8},
	)})
	conn, s := newOllamaService(t, srv)
	rec := extractOne(t, conn, s, decisionBatch(0, 1))
	if rec.Path != events.PathLLM || rec.Provider != "ollama" || rec.Model != "qwen2.5:7b-instruct" ||
		rec.PromptTokens != 300 || rec.OutputTokens != 50 || rec.SpentMicros != 350 {
		t.Fatalf("record %+v", rec)
	}
	st := state(t, s.Budget(), rec.ExtractedAt)
	if st.SpentMicros != 350 || st.ReservedOpen != 0 || st.Calls != 1 {
		t.Fatalf("budget %+v: the reservation was not settled to the reported tokens", st)
	}
	got := memories(t, conn)
	m, ok := got[events.MemoryKey("app", memory.Hash("Retries live in the HTTP transport"))]
	if !ok || m.Kind != memory.KindDecision || m.Confidence != 0.9 || m.Provider != "ollama" || m.Source.Start != 0 {
		t.Fatalf("memories %+v", got)
	}
	for _, m := range got {
		if strings.Contains(m.Content, secret) {
			t.Fatalf("secret stored: %q", m.Content)
		}
	}
	for _, m := range rec.Memories {
		if strings.Contains(m.Content, secret) {
			t.Fatalf("secret in the extraction record: %q", m.Content)
		}
	}
}

func TestOllamaFailuresTakeTheRulePath(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    ollamatest.Behaviour
		why  string
	}{
		{"invalid output", ollamatest.Behaviour{Reply: "I think you decided well!", PromptEvalCount: 300, EvalCount: 6}, WhyInvalidOutput},
		{"server error", ollamatest.Behaviour{Mode: ollamatest.ServerError}, WhyUnavailable},
		{"unknown model", ollamatest.Behaviour{Mode: ollamatest.ModelNotFound}, WhyUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := ollamatest.NewServer(t)
			srv.SetBehaviour(tc.b)
			conn, s := newOllamaService(t, srv)
			rec := extractOne(t, conn, s, decisionBatch(3, 10))
			if rec.Path != events.PathRules || (tc.why != "" && rec.Why != tc.why) {
				t.Fatalf("record %s/%s, want rules/%s", rec.Path, rec.Why, tc.why)
			}
			if len(rec.Memories) != 1 || rec.Memories[0].Content != "Use option 3" || rec.Memories[0].Provider != ProviderRules {
				t.Fatalf("memories %+v", rec.Memories)
			}
			st := state(t, s.Budget(), rec.ExtractedAt)
			if st.ReservedOpen != 0 || st.SpentMicros != rec.SpentMicros {
				t.Fatalf("budget %+v, record spent %d", st, rec.SpentMicros)
			}
			t.Logf("why %s, spent %d µ$", rec.Why, rec.SpentMicros)
		})
	}
}
