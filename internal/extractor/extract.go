package extractor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/llm"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
	"github.com/cuedeck/cuedeck/pkg/core/importance"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/prune"
	"github.com/cuedeck/cuedeck/pkg/core/transcript"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Why the rule path was taken (ExtractionRecord.Why).
const (
	WhyNoLLM           = "no_llm"
	WhyBreakerOpen     = "breaker_open"
	WhyBudgetExhausted = "budget_exhausted"
	WhyThrottled       = "throttled"
	WhyInvalidOutput   = "invalid_output"
	WhyUnavailable     = "llm_unavailable"
	WhyRefused         = "llm_refused"
)

// ProviderRules names rule-based extraction in a memory's provenance.
const ProviderRules = "rules"

// maxInvalidReasons is how many reasons an ExtractionRecord keeps.
const maxInvalidReasons = 5

// extract turns a parsed batch into its ExtractionRecord: supersede,
// salience, then the LLM or the rules. Errors are the shared guards'
// bucket errors; the batch is retried.
func (s *Service) extract(ctx context.Context, b events.TranscriptBatch, batchID string, conv transcript.Conversation) (events.ExtractionRecord, error) {
	now := s.cfg.Clock.Now().UTC()
	rec := events.ExtractionRecord{Batch: batchID, Repo: b.Repo, Session: b.Session, ExtractedAt: now}
	rec.ErrorFiles = errorFiles(conv)

	// Supersede: the batch is history by the time it is extracted, so no
	// turn of it is "current".
	pr := s.pruners[b.Format]
	sup := pr.Supersede(conv.Calls, conv.Turns+1).Stats.Total()
	rec.CallsSuperseded, rec.TokensSaved = sup.Count, sup.Tokens

	rec.MessagesIn = len(conv.Messages)
	prose := proseMessages(conv)
	if len(prose) == 0 {
		rec.Path = events.PathEmpty
		return rec, nil
	}
	msgs := make([]memory.Message, len(conv.Messages))
	for i, m := range conv.Messages {
		id := m.ID
		if id == "" {
			id = strconv.FormatInt(m.Offset, 10)
		}
		msgs[i] = memory.Message{ID: id, Content: string(m.Role) + ": " + m.Text}
	}
	sel := s.selector.Select(msgs, transcript.Signals(conv))
	rec.MessagesSelected = len(sel.Messages)

	exps, expMsg := s.graft(b, conv, prose)
	if b.Final {
		rec.Outcome = conv.Outcome()
		if rec.Outcome == "" && len(exps) > 0 {
			rec.Outcome = exps[0].Outcome
		}
	}
	span := selectedSpan(b, conv, sel)
	why, err := s.tryLLM(ctx, b, conv, sel, span, now, &rec)
	if err != nil {
		return rec, err
	}
	if why == "" {
		return rec, nil
	}
	rec.Path, rec.Why = events.PathRules, why
	rec.Provider, rec.Model = ProviderRules, ""
	var cands []memory.Memory
	for i, e := range exps {
		m := e.Memory(b.Repo)
		m.Source = lineSpan(b, conv.Messages[expMsg[i]].Offset)
		cands = append(cands, m)
	}
	rec.Memories = s.finish(b, cands, now, &rec)
	return rec, nil
}

// errorFiles are the files named by stack frames and diagnostics in the
// output of the batch's failed tool calls, or of calls whose output reads
// as an error (a test run exits 0 as often as not with a panic in it),
// redacted like FilesTouched.
func errorFiles(conv transcript.Conversation) []string {
	var out []string
	for _, c := range conv.Calls {
		if c.Status != prune.StatusError && !importance.LooksLikeError(c.Output) {
			continue
		}
		for _, p := range importance.StackPaths(c.Output, conv.Cwd) {
			p, _ = guard.Redact(p)
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out[:min(len(out), events.MaxErrorFiles)]
}

// proseMessages are the indices of what a person or the model wrote.
func proseMessages(conv transcript.Conversation) []int {
	var out []int
	for i, m := range conv.Messages {
		if !m.Synthetic && (m.Role == transcript.RoleUser || m.Role == transcript.RoleAssistant) && strings.TrimSpace(m.Text) != "" {
			out = append(out, i)
		}
	}
	return out
}

// graft runs experience grafting over the assistant's own prose, joined so
// that a rationale in the next message still reaches its decision, and
// returns beside each experience the message it came from. Decisions are
// sentence-local and messages are joined at line breaks (which end a
// sentence), so grafting each message alone yields the same decisions in
// the same order: counting them attributes each to its message.
func (s *Service) graft(b events.TranscriptBatch, conv transcript.Conversation, prose []int) ([]memory.Experience, []int) {
	var texts []string
	var owners []int
	for _, i := range prose {
		if conv.Messages[i].Role == transcript.RoleAssistant {
			texts = append(texts, conv.Messages[i].Text)
			owners = append(owners, i)
		}
	}
	if len(texts) == 0 {
		return nil, nil
	}
	t := memory.Transcript{AgentID: b.Agent, SessionID: b.Session, Text: strings.Join(texts, "\n"), FilesModified: conv.FilesModified, Outcome: conv.Outcome()}
	exps := memory.ExtractExperiences(t, s.cfg.Rules, s.cfg.Clock)
	owner := make([]int, 0, len(exps))
	for k, text := range texts {
		n := len(memory.ExtractExperiences(memory.Transcript{Text: text}, s.cfg.Rules, s.cfg.Clock))
		for range n {
			owner = append(owner, owners[k])
		}
	}
	for len(owner) < len(exps) { // cannot happen; never index out of range
		owner = append(owner, owners[len(owners)-1])
	}
	return exps, owner[:len(exps)]
}

// tryLLM runs the LLM path when the gates allow it, filling rec. It
// returns why it did not (the rule path's reason), "" when rec holds the
// LLM's memories.
func (s *Service) tryLLM(ctx context.Context, b events.TranscriptBatch, conv transcript.Conversation, sel memory.Selection, span memory.Span, now time.Time, rec *events.ExtractionRecord) (string, error) {
	if s.llm == nil {
		return WhyNoLLM, nil
	}
	if !s.breaker.CanExecute() {
		return WhyBreakerOpen, nil
	}
	if s.projector.Limited() {
		depth, err := s.depth.get(ctx)
		if err != nil {
			return "", fmt.Errorf("extractor: queue depth: %w", err)
		}
		p, err := s.projector.Project(ctx, depth)
		if err != nil {
			return "", err
		}
		// Throttling takes the rule path rather than naking the batch
		// with a delay: the projection multiplies the queue's depth, so
		// batches put back would keep it over the threshold and the queue
		// would only grow; the rule path drains it, and the record says
		// which batches a later re-extraction could improve.
		if p.ShouldThrottle {
			return WhyThrottled, nil
		}
	}
	req := llm.Request{Repo: b.Repo, Session: b.Session, Messages: sel.Messages, Files: conv.FilesModified}
	promptEst, outMax := s.llm.Estimate(req)
	res, dec, err := s.budget.Reserve(ctx, s.cfg.CostMicros(promptEst, outMax))
	if err != nil {
		return "", err
	}
	if !dec.Allowed {
		s.count(func(st *Stats) { st.BudgetRefused++ })
		return WhyBudgetExhausted, nil
	}
	out, callErr := s.callLLM(ctx, req)
	s.count(func(st *Stats) { st.LLMCalls++ })
	// The provider's counts are the cost. A call that failed before the
	// provider reported any (unreachable, timed out) is settled at 0: a
	// local model charges nothing for it, and for a paid one the request
	// was most likely not billed either.
	actual := s.cfg.CostMicros(out.PromptTokens, out.OutputTokens)
	if err := s.budget.Settle(ctx, res, actual); err != nil {
		// The reservation stays charged: the day is over-counted, never
		// overspent. Failing the batch would pay for the call again.
		s.logger.Warn("budget settle failed; the reservation stays charged", "repo", b.Repo, "err", err)
		s.count(func(st *Stats) { st.SettleFailed++ })
	}
	if tok := int64(out.PromptTokens + out.OutputTokens); tok > 0 {
		if err := s.projector.Record(ctx, tok); err != nil {
			s.logger.Warn("token usage not recorded", "err", err)
		}
	}
	rec.PromptTokens, rec.OutputTokens, rec.SpentMicros = out.PromptTokens, out.OutputTokens, actual
	s.count(func(st *Stats) {
		st.PromptTokens += uint64(max(out.PromptTokens, 0))
		st.OutputTokens += uint64(max(out.OutputTokens, 0))
		st.SpentMicros += uint64(actual)
	})
	switch {
	case callErr == nil:
		s.breaker.RecordSuccess()
	case errors.Is(callErr, llm.ErrInvalidOutput):
		s.breaker.RecordSuccess() // the model answered; its answer was unusable
		s.logger.Warn("LLM output unusable; extracting by rules", "repo", b.Repo, "session", b.Session, "err", callErr)
		return WhyInvalidOutput, nil
	case errors.Is(callErr, llm.ErrRefused):
		s.logger.Warn("LLM refused the request; extracting by rules", "repo", b.Repo, "err", callErr)
		return WhyRefused, nil
	default:
		s.breaker.RecordFailure()
		s.logger.Warn("LLM unavailable; extracting by rules", "repo", b.Repo, "err", callErr)
		return WhyUnavailable, nil
	}
	rec.Path, rec.Provider, rec.Model = events.PathLLM, s.llm.Provider(), s.llm.Model()
	rec.Invalid, rec.InvalidReasons = out.Invalid, append([]string(nil), out.InvalidReasons...)
	cands := make([]memory.Memory, len(out.Memories))
	for i, m := range out.Memories {
		m.Source = span
		m.Provider, m.Model = rec.Provider, rec.Model
		cands[i] = m
	}
	rec.Memories = s.finish(b, cands, now, rec)
	return "", nil
}

// callLLM makes the call under CallTimeout, telling the server the batch
// is still in hand every ProgressEvery so that it is not given to another
// worker meanwhile.
func (s *Service) callLLM(ctx context.Context, req llm.Request) (llm.Result, error) {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.cfg.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := bus.InProgress(ctx); err != nil {
					s.logger.Debug("progress not reported", "err", err)
				}
			}
		}
	})
	out, err := s.llm.Extract(cctx, req)
	close(done)
	wg.Wait()
	if err != nil && cctx.Err() != nil && !errors.Is(err, llm.ErrUnavailable) {
		err = fmt.Errorf("%w: no answer within %s: %w", llm.ErrUnavailable, s.cfg.CallTimeout, err)
	}
	return out, err
}

// finish completes the candidates into storable memories: provenance,
// times, secrets redacted (before anything is persisted), validated (the
// invalid counted in rec), and one per content hash, the most confident.
func (s *Service) finish(b events.TranscriptBatch, cands []memory.Memory, now time.Time, rec *events.ExtractionRecord) []memory.Memory {
	var out []memory.Memory
	at := map[string]int{}
	for _, m := range cands {
		m.Repo, m.Session = b.Repo, b.Session
		m.CreatedAt, m.UpdatedAt = now, now
		m.Content, _ = guard.Redact(strings.TrimSpace(m.Content))
		m.Rationale, _ = guard.Redact(m.Rationale)
		for i, f := range m.FilesTouched {
			m.FilesTouched[i], _ = guard.Redact(f)
		}
		h := memory.Hash(m.Content)
		if err := (events.MemoryRecord{Memory: m, Hash: h}).Validate(); err != nil {
			rec.Invalid++
			if len(rec.InvalidReasons) < maxInvalidReasons {
				rec.InvalidReasons = append(rec.InvalidReasons, err.Error())
			}
			continue
		}
		if j, ok := at[h]; ok {
			if m.Confidence > out[j].Confidence {
				out[j] = m
			}
			continue
		}
		at[h] = len(out)
		out = append(out, m)
	}
	return out
}

// lineSpan is the span of the batch line at offset: up to the next line's
// offset, or the batch's end.
func lineSpan(b events.TranscriptBatch, offset int64) memory.Span {
	end := b.EndOffset
	for _, o := range b.Offsets {
		if o > offset {
			end = min(end, o)
			break
		}
	}
	return memory.Span{Start: offset, End: max(end, offset)}
}

// selectedSpan covers the messages shown to the LLM.
func selectedSpan(b events.TranscriptBatch, conv transcript.Conversation, sel memory.Selection) memory.Span {
	if len(sel.Scores) == 0 {
		return memory.Span{Start: b.StartOffset, End: b.EndOffset}
	}
	first := conv.Messages[sel.Scores[0].Index].Offset
	last := conv.Messages[sel.Scores[len(sel.Scores)-1].Index].Offset
	return memory.Span{Start: first, End: lineSpan(b, last).End}
}
