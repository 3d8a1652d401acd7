package extractor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/llm"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// failingLLM fails every call with err.
type failingLLM struct {
	err   error
	calls atomic.Int64
}

func (f *failingLLM) Provider() string                { return "fake" }
func (f *failingLLM) Model() string                   { return "broken-1" }
func (f *failingLLM) Estimate(llm.Request) (int, int) { return 100, 100 }
func (f *failingLLM) Extract(context.Context, llm.Request) (llm.Result, error) {
	f.calls.Add(1)
	return llm.Result{}, f.err
}

func TestOpenBreakerTakesTheRulePath(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ext := &failingLLM{err: fmt.Errorf("%w: connection refused", llm.ErrUnavailable)}
	s := newService(t, conn, ext, Config{Breaker: resilience.BreakerConfig{WindowSize: 2, ErrorThreshold: 0.5, Cooldown: time.Hour}})
	run(t, s)
	first := extractOne(t, conn, s, decisionBatch(1, 10))
	second := extractOne(t, conn, s, decisionBatch(2, 10))
	if first.Why != WhyUnavailable || second.Why != WhyBreakerOpen || ext.calls.Load() != 1 {
		t.Fatalf("whys %q then %q after %d calls", first.Why, second.Why, ext.calls.Load())
	}
	if len(second.Memories) != 1 || second.Memories[0].Content != "Use option 2" {
		t.Fatalf("rule path memories %+v", second.Memories)
	}
}

func TestProjectedTokensThrottleToTheRulePath(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ext := &decidingLLM{prompt: 10, output: 10}
	s := newService(t, conn, ext, Config{TokensPerMinute: map[string]int64{"fake": 1000}})
	// Another worker just used 900 of the minute's 1000 tokens.
	kv, err := conn.JS.KeyValue(context.Background(), events.BudgetBucket)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := json.Marshal(events.TokenWindow{Usage: []events.TokenUse{{At: time.Now(), Tokens: 900}}})
	if _, err := kv.Put(context.Background(), events.TokensKey("fake"), w); err != nil {
		t.Fatal(err)
	}
	run(t, s)
	rec := extractOne(t, conn, s, decisionBatch(4, 10))
	if rec.Why != WhyThrottled || ext.calls.Load() != 0 || len(rec.Memories) != 1 {
		t.Fatalf("record %+v after %d calls", rec, ext.calls.Load())
	}
}

func TestUndecodableBatchIsDeadLettered(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	s := newService(t, conn, nil, Config{})
	run(t, s)
	msg := nats.NewMsg(events.TranscriptSubject("app"))
	msg.Data = []byte(`{"v":"1.0","kind":"transcript.batch","data":{"repo":"app"}}`)
	msg.Header.Set(jetstream.MsgIDHeader, "poison-1")
	if _, err := conn.JS.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 30*time.Second, "poison batch dead-lettered", func() bool {
		st, err := conn.JS.Stream(context.Background(), events.DeadLetterStream)
		if err != nil {
			return false
		}
		info, err := st.Info(context.Background())
		return err == nil && info.State.Msgs == 1
	})
	// The batch is terminated right after its letter is stored.
	bustest.Eventually(t, 30*time.Second, "poison batch off the queue", func() bool {
		return pendingOn(t, conn, events.IngestStream) == 0
	})
}
