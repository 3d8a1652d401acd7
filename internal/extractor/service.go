package extractor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/llm"
	"github.com/cuedeck/cuedeck/internal/memstore"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/prune"
	"github.com/cuedeck/cuedeck/pkg/core/resilience"
	"github.com/cuedeck/cuedeck/pkg/core/transcript"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Stats counts what a Service did since New.
type Stats struct {
	// Batches is the batches handled to the end (memories stored, acked).
	Batches uint64
	// Reused is the batches whose ExtractionRecord was already stored (a
	// redelivery); Discarded the extractions made here that lost the race
	// to store it to another worker's, DiscardedLLM those of them that
	// had called the LLM.
	Reused, Discarded, DiscardedLLM uint64
	// Poison is the batches dead-lettered because they cannot be read.
	Poison uint64
	// Paths counts the extractions stored by this worker per path
	// ("llm", "rules", "empty"); RulesWhy the rule path's reasons.
	Paths    map[events.ExtractionPath]uint64
	RulesWhy map[string]uint64
	// LLMCalls is the calls made; BudgetRefused those the budget turned
	// away; SettleFailed the settlements left charged at their estimate.
	LLMCalls, BudgetRefused, SettleFailed uint64
	// PromptTokens, OutputTokens and SpentMicros sum this worker's calls.
	PromptTokens, OutputTokens, SpentMicros uint64
	// Invalid is the candidate memories that failed validation (the LLM's
	// and the redaction's), counted in their ExtractionRecord too.
	Invalid uint64
	// CallsSuperseded and TokensSaved sum the supersede passes.
	CallsSuperseded, TokensSaved uint64
	// BudgetAlerts counts the 70, 90 and 100 % alerts this worker fired.
	BudgetAlerts [3]uint64
	// Store counts the memory writes.
	Store memstore.StoreStats
}

// Service is the extractor role.
type Service struct {
	conn   *bus.Conn
	llm    llm.Extractor
	cfg    Config
	logger *slog.Logger

	selector    *memory.Selector
	pruners     map[string]*prune.Pruner
	breaker     *resilience.CircuitBreaker
	budget      *SharedBudget
	projector   *SharedProjector
	depth       *depthCache
	store       *memstore.Store
	extractions jetstream.KeyValue

	mu    sync.Mutex
	stats Stats

	// afterRecord, when set (by tests), runs once a batch's
	// ExtractionRecord is stored, before its memories are.
	afterRecord func(events.TranscriptBatch)
}

// New builds an extractor on conn, whose topology must be provisioned.
// ext is the LLM; nil extracts by rules only. If cfg is invalid the error
// wraps ErrInvalidConfig.
func New(conn *bus.Conn, ext llm.Extractor, cfg Config, logger *slog.Logger) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{conn: conn, llm: ext, cfg: cfg, logger: logger.With("role", "extractor")}
	var err error
	if s.selector, err = memory.NewSelector(cfg.Salience, cfg.RNG); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	s.pruners = map[string]*prune.Pruner{}
	for format, tools := range map[string]prune.Tools{events.TranscriptClaudeCode: prune.ClaudeCodeTools(), events.TranscriptChatJSONL: prune.SeedTools()} {
		p, err := prune.New(prune.Config{Tools: tools})
		if err != nil {
			return nil, fmt.Errorf("extractor: pruner for %s: %w", format, err)
		}
		s.pruners[format] = p
	}
	s.breaker = resilience.NewCircuitBreaker(cfg.Breaker, cfg.Clock)
	ctx := context.Background()
	budgetKV, err := conn.JS.KeyValue(ctx, events.BudgetBucket)
	if err != nil {
		return nil, fmt.Errorf("extractor: bucket %s: %w (provision the topology first)", events.BudgetBucket, err)
	}
	if s.budget, err = NewSharedBudget(budgetKV, cfg.DailyUSD, cfg.Clock, s.logger); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	s.budget.durable = conn.Durable
	provider := ""
	if ext != nil {
		provider = ext.Provider()
	}
	s.projector = NewSharedProjector(budgetKV, provider, cfg.TokensPerMinute[provider], cfg.TokenWindow, cfg.Clock)
	s.depth = &depthCache{ttl: cfg.QueueDepthTTL, clk: cfg.Clock, fetch: s.queueDepth}
	memKV, err := conn.JS.KeyValue(ctx, events.MemoriesBucket)
	if err != nil {
		return nil, fmt.Errorf("extractor: bucket %s: %w (provision the topology first)", events.MemoriesBucket, err)
	}
	s.store = memstore.NewStore(memKV, cfg.Clock)
	if s.extractions, err = conn.JS.KeyValue(ctx, events.ExtractionsBucket); err != nil {
		return nil, fmt.Errorf("extractor: bucket %s: %w (provision the topology first)", events.ExtractionsBucket, err)
	}
	s.stats.Paths = map[events.ExtractionPath]uint64{}
	s.stats.RulesWhy = map[string]uint64{}
	return s, nil
}

// Budget is the shared budget the service charges.
func (s *Service) Budget() *SharedBudget { return s.budget }

// Store is the memory store the service writes.
func (s *Service) Store() *memstore.Store { return s.store }

// Stats returns the counters.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	st := s.stats
	st.Paths = maps.Clone(s.stats.Paths)
	st.RulesWhy = maps.Clone(s.stats.RulesWhy)
	s.mu.Unlock()
	st.BudgetAlerts = s.budget.Alerts()
	st.Store = s.store.Stats()
	return st
}

func (s *Service) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// Run extracts until ctx is cancelled, then drains its consumer: batches
// in hand are finished and acked before it returns.
func (s *Service) Run(ctx context.Context) error {
	w := bus.NewWorker(s.conn, bus.WorkerConfig{
		Stream:      s.cfg.Stream,
		Consumer:    s.cfg.Consumer,
		Concurrency: s.cfg.Concurrency,
		MaxDeliver:  s.cfg.MaxDeliver,
		RetryDelay:  s.cfg.RetryDelay,
		Logger:      s.logger,
	}, s.Handle)
	s.logger.Info("extractor running", "consumer", s.cfg.Consumer, "llm", s.describeLLM(), "daily_budget_micros", s.budget.LimitMicros())
	return w.Run(ctx)
}

func (s *Service) describeLLM() string {
	if s.llm == nil {
		return "none"
	}
	return s.llm.Provider() + ":" + s.llm.Model()
}

// Handle handles one TranscriptBatch: the stored ExtractionRecord of the
// batch if there is one, else a new extraction stored first; then every
// memory of it is put. It is idempotent: a redelivered batch reuses its
// record, and its puts change nothing. A batch that cannot be read is
// permanent (dead-lettered); bucket errors are retried.
func (s *Service) Handle(ctx context.Context, env events.Envelope) error {
	b, ok := env.Event.(events.TranscriptBatch)
	if !ok {
		s.count(func(st *Stats) { st.Poison++ })
		return bus.Permanent(fmt.Errorf("extractor: unexpected %s event on %s", env.Event.EventKind(), env.Subject))
	}
	batchID := events.TranscriptBatchMsgID(b.Repo, b.StreamKey(), b.StartOffset)
	key := ExtractionKeyOf(b)
	rec, found, err := s.loadExtraction(ctx, key)
	if err != nil {
		return err
	}
	if found {
		s.count(func(st *Stats) { st.Reused++ })
	} else {
		conv, err := transcript.Parse(b.Format, b.Lines, b.Offsets)
		if err != nil {
			s.count(func(st *Stats) { st.Poison++ })
			return bus.Permanent(fmt.Errorf("extractor: batch %s: %w", batchID, err))
		}
		if conv.Session == "" {
			conv.Session = b.Session
		}
		fresh, err := s.extract(ctx, b, batchID, conv)
		if err != nil {
			return err
		}
		stored, created, err := s.storeExtraction(ctx, key, fresh)
		if err != nil {
			return err
		}
		rec = stored
		s.count(func(st *Stats) {
			if created {
				st.Paths[fresh.Path]++
				if fresh.Why != "" {
					st.RulesWhy[fresh.Why]++
				}
				st.Invalid += uint64(fresh.Invalid)
				st.CallsSuperseded += uint64(fresh.CallsSuperseded)
				st.TokensSaved += uint64(fresh.TokensSaved)
				return
			}
			st.Discarded++
			if fresh.Path == events.PathLLM || fresh.SpentMicros > 0 || fresh.PromptTokens > 0 {
				st.DiscardedLLM++
			}
		})
		if s.afterRecord != nil {
			s.afterRecord(b)
		}
	}
	for _, m := range rec.Memories {
		r := events.MemoryRecord{Memory: m, Agent: b.Agent, Batch: batchID, Outcome: rec.Outcome, ErrorFiles: rec.ErrorFiles}
		if len(r.ErrorFiles) > 0 {
			r.ErrorSeen = rec.ExtractedAt
		}
		if _, err := s.store.Put(ctx, r); err != nil {
			if errors.Is(err, events.ErrMalformed) || errors.Is(err, events.ErrInvalidRepo) {
				// finish validated it; a record that fails now is
				// counted and left, not retried forever.
				s.count(func(st *Stats) { st.Invalid++ })
				s.logger.Error("memory not storable", "repo", b.Repo, "batch", batchID, "err", err)
				continue
			}
			return err
		}
	}
	s.count(func(st *Stats) { st.Batches++ })
	return nil
}

// loadExtraction reads a batch's stored ExtractionRecord.
func (s *Service) loadExtraction(ctx context.Context, key string) (events.ExtractionRecord, bool, error) {
	e, err := s.extractions.Get(ctx, key)
	if isNotFound(err) {
		return events.ExtractionRecord{}, false, nil
	}
	if err != nil {
		return events.ExtractionRecord{}, false, fmt.Errorf("extractor: get extraction %s: %w", key, err)
	}
	rec, err := events.DecodeExtractionRecord(e.Value())
	if err != nil {
		if errors.Is(err, events.ErrUnsupportedVersion) {
			return rec, false, fmt.Errorf("extractor: extraction %s was written by a newer release: upgrade this extractor: %w", key, err)
		}
		// Unreadable: extract again and replace it.
		s.logger.Warn("unreadable extraction record; extracting again", "key", key, "err", err)
		return rec, false, nil
	}
	return rec, true, nil
}

// storeExtraction creates the record of a batch; if another worker stored
// one first, that one is returned (created false) so every worker writes
// the same memories.
func (s *Service) storeExtraction(ctx context.Context, key string, rec events.ExtractionRecord) (events.ExtractionRecord, bool, error) {
	data, err := events.Encode(rec)
	if err != nil {
		return rec, false, fmt.Errorf("extractor: encode extraction %s: %w", rec.Batch, err)
	}
	for range maxCASAttempts {
		_, err := s.extractions.Create(ctx, key, data)
		if err == nil {
			return rec, true, nil
		}
		if !isConflict(err) {
			return rec, false, fmt.Errorf("extractor: create extraction %s: %w", rec.Batch, err)
		}
		e, gerr := s.extractions.Get(ctx, key)
		if isNotFound(gerr) {
			continue
		}
		if gerr != nil {
			return rec, false, fmt.Errorf("extractor: get extraction %s: %w", rec.Batch, gerr)
		}
		stored, derr := events.DecodeExtractionRecord(e.Value())
		if derr != nil {
			if _, err := s.extractions.Update(ctx, key, data, e.Revision()); err == nil {
				return rec, true, nil
			} else if !isConflict(err) {
				return rec, false, fmt.Errorf("extractor: replace extraction %s: %w", rec.Batch, err)
			}
			continue
		}
		return stored, false, nil
	}
	return rec, false, fmt.Errorf("%w: extraction %s", errCASExhausted, rec.Batch)
}

// queueDepth is the consumer's backlog: what is waiting and what other
// workers hold.
func (s *Service) queueDepth(ctx context.Context) (int, error) {
	cons, err := s.conn.JS.Consumer(ctx, s.cfg.Stream, s.cfg.Consumer)
	if err != nil {
		return 0, err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return 0, err
	}
	return int(info.NumPending) + info.NumAckPending, nil
}

// ExtractionKeyOf is the ExtractionsBucket key of a batch. It names the
// lines as well as the batch: a transcript rewritten from the start brings
// other content at the same offsets, which must not reuse the old
// content's extraction, while the same lines published again do.
func ExtractionKeyOf(b events.TranscriptBatch) string {
	return events.ExtractionKey(events.TranscriptBatchMsgID(b.Repo, b.StreamKey(), b.StartOffset) + "@" + linesDigest(b.Lines))
}

// linesDigest is the hex SHA-256 of a batch's lines, each compacted and
// HTML-escaped as encoding/json writes a RawMessage (so the publisher's
// copy and the worker's hash alike) and length-prefixed (so no two different
// line lists hash alike).
func linesDigest(lines []json.RawMessage) string {
	h := sha256.New()
	var n [8]byte
	var compact, buf bytes.Buffer
	for _, l := range lines {
		compact.Reset()
		buf.Reset()
		if json.Compact(&compact, l) != nil {
			compact.Reset()
			compact.Write(l)
		}
		json.HTMLEscape(&buf, compact.Bytes())
		binary.BigEndian.PutUint64(n[:], uint64(buf.Len()))
		h.Write(n[:])
		h.Write(buf.Bytes())
	}
	return hex.EncodeToString(h.Sum(nil))
}
