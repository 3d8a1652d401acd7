package extractor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/core/clock"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/prune"
	"github.com/cuedeck/cuedeck/pkg/core/stats"
	"github.com/cuedeck/cuedeck/pkg/core/transcript"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// codingConversation is n messages shaped like a coding session: prompts,
// prose with and without decisions, tool results, some of them failures.
func codingConversation(n int) transcript.Conversation {
	c := transcript.Conversation{Session: "bench"}
	for i := range n {
		m := transcript.Message{Index: i, ID: fmt.Sprint(i), Offset: int64(i) * 300, Turn: i / 10}
		switch i % 10 {
		case 0:
			m.Role, m.Text = transcript.RoleUser, fmt.Sprintf("The tests in internal/pkg%d fail again, fix the retry logic please.", i%97)
		case 3:
			m.Role, m.Text = transcript.RoleAssistant, fmt.Sprintf("I decided to use a bounded queue in internal/pkg%d/queue.go because the producer outpaces the consumer.", i%97)
		case 5:
			m.Role, m.Text, m.ToolError = transcript.RoleTool, "--- FAIL: TestRetry (0.01s)\n    retry_test.go:42: got 3 attempts, want 2", i%20 == 5
		case 7:
			m.Role, m.Text = transcript.RoleTool, "ok  \tapp/internal/client\t0.31s"
		default:
			m.Role, m.Text = transcript.RoleAssistant, "Let me read the file and check how the worker pool is wired before changing anything."
		}
		c.Messages = append(c.Messages, m)
		c.Calls = append(c.Calls, prune.ToolCall{ID: m.ID, Tool: "Bash", Params: map[string]any{"command": "go test ./..."}, Turn: m.Turn, Status: prune.StatusCompleted})
	}
	c.Turns = n / 10
	c.FilesModified = []string{"internal/pkg5/queue.go"}
	return c
}

func BenchmarkSalienceSelect10k(b *testing.B) {
	conv := codingConversation(10_000)
	msgs := make([]memory.Message, len(conv.Messages))
	for i, m := range conv.Messages {
		msgs[i] = memory.Message{ID: m.ID, Content: string(m.Role) + ": " + m.Text}
	}
	signals := transcript.Signals(conv)
	sel, err := memory.NewSelector(memory.DefaultSalienceConfig(), clock.NewDeterministicRNG(7))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if s := sel.Select(msgs, signals); len(s.Messages) == 0 {
			b.Fatal("nothing selected")
		}
	}
}

// BenchmarkRulePathBatchLatency measures a batch from publish to its
// memory stored (watched on the bucket), on a server that fsyncs every
// write as `cue up` does. One batch is in flight at a time.
func BenchmarkRulePathBatchLatency(b *testing.B) {
	conn, _ := bustest.StartDurable(b, bus.Settings{})
	s := newService(b, conn, nil, Config{Concurrency: 2})
	run(b, s)
	kv, err := conn.JS.KeyValue(context.Background(), events.MemoriesBucket)
	if err != nil {
		b.Fatal(err)
	}
	w, err := kv.WatchAll(context.Background(), jetstream.UpdatesOnly())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var lat stats.LatencySummary
	i := 0
	for b.Loop() {
		bt := decisionBatch(i, 1<<30) // a new memory every batch
		i++
		start := time.Now()
		publishBatch(b, conn, events.TranscriptSubject("app"), bt)
		want := events.MemoryKey("app", memory.Hash(fmt.Sprintf("Use option %d", i-1)))
		for e := range w.Updates() {
			if e != nil && e.Key() == want {
				break
			}
		}
		lat.RecordDuration(time.Since(start))
	}
	sum := lat.Summary()
	b.ReportMetric(sum.P50, "p50-ms")
	b.ReportMetric(sum.P99, "p99-ms")
}

func BenchmarkExtractionRecordStore(b *testing.B) {
	conn, _ := bustest.StartDurable(b, bus.Settings{})
	s := newService(b, conn, nil, Config{})
	rec := events.ExtractionRecord{Repo: "app", Session: "s", Path: events.PathRules, Why: WhyNoLLM,
		Memories: []memory.Memory{{Content: "Use option 1", Kind: memory.KindExperience, Confidence: 0.5, Repo: "app"}}}
	i := 0
	for b.Loop() {
		rec.Batch = fmt.Sprint("app/s@", i)
		i++
		if _, created, err := s.storeExtraction(context.Background(), events.ExtractionKey(rec.Batch), rec); err != nil || !created {
			b.Fatal(err, created)
		}
	}
}
