package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/extractor"
	"github.com/cuedeck/cuedeck/pkg/core/memory"
	"github.com/cuedeck/cuedeck/pkg/core/tokens"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Scenario 6's prices and budget. At 1 $ per million prompt tokens and 4 $
// per million output tokens (a small hosted model's ratio), a call of
// about 400 prompt tokens and 200 output tokens costs ~1,200 µ$ once
// settled, and reserves ~4,400 µ$ before it is made (its prompt estimate
// plus the 1,024 output tokens the client allows). 14,000 µ$ lets three
// calls hold reservations at once (so both extractors, two workers each,
// have calls in flight) and pays for about ten in all: the 40 batches
// would cost about three times the limit.
const (
	budgetPriceIn   = 1.0
	budgetPriceOut  = 4.0
	budgetDailyUSD  = 0.014
	budgetBursts    = 8
	budgetBurst     = 5
	budgetSessions  = 8
	budgetModel     = "qwen2.5:7b-instruct"
	budgetCallDelay = 500 * time.Millisecond
	// maxOutputTokens is what the extractor's Ollama client reserves for
	// the answer (llm.OllamaConfig.MaxOutputTokens' default).
	maxOutputTokens = 1024
)

// budgetPrices is the extractors' pricing, to compute what each answered
// call cost exactly as they do.
var budgetPrices = extractor.Config{PriceInPerMTok: budgetPriceIn, PriceOutPerMTok: budgetPriceOut}

// modelCall is one chat the fake model received: who asked, what the
// answer billed (if it was sent), and what the asker had reserved for it.
type modelCall struct {
	Client                string // remote IP
	PromptTokens, Output  int
	CostMicros, EstMicros int64
	// Answered: the whole answer, token counts included, was written.
	Answered bool
}

// fakeModel is an Ollama chat endpoint on the host, reachable from the
// extractor containers at host.docker.internal. Every chat takes delay
// and bills realistic token counts: the prompt's cl100k_base tokens plus
// four per message for the chat template (within the 10 % margin the
// client estimates with), and the answer's tokens plus one for the end of
// sequence. It answers with memories naming the batch's option, so that
// each batch's memories are its own.
type fakeModel struct {
	srv   *http.Server
	ln    net.Listener
	delay time.Duration

	mu          sync.Mutex
	calls       []modelCall
	inFlight    map[string]int // client -> chats in progress
	maxInFlight int
	maxClients  int // most distinct clients with a chat in progress at once
	// together closes once two clients had chats in progress at once.
	// Until then every answer waits for it (at most rendezvousWait), so
	// that however the machine schedules the extractors, both contend
	// for the budget before it runs out.
	together chan struct{}
}

const rendezvousWait = 30 * time.Second

func startFakeModel(t *testing.T, delay time.Duration) *fakeModel {
	t.Helper()
	// 0.0.0.0: the containers reach the host through their network's
	// gateway, not through loopback.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeModel{ln: ln, delay: delay, inFlight: map[string]int{}, together: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", f.chat)
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// Port is the port the model listens on, on every host address.
func (f *fakeModel) Port() int { return f.ln.Addr().(*net.TCPAddr).Port }

var optionRE = regexp.MustCompile(`option (\d+)`)

func (f *fakeModel) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	client, _, _ := net.SplitHostPort(r.RemoteAddr)
	call := modelCall{Client: client}
	f.enter(client)
	defer f.leave(client)

	var system, user string
	for _, m := range req.Messages {
		call.PromptTokens += tokens.Count(m.Content) + 4
		switch m.Role {
		case "system":
			system = m.Content
		case "user":
			user = m.Content
		}
	}
	// What the extractor reserved: llm's prompt estimate and the most
	// output tokens it lets the model write.
	n := tokens.Count(system) + tokens.Count(user)
	call.EstMicros = budgetPrices.CostMicros(n+n/10+32, maxOutputTokens)

	// Three memories of about 60 tokens each, as a model answers a short
	// exchange with a decision in it.
	var ms []map[string]any
	if m := optionRE.FindStringSubmatch(user); m != nil {
		n := m[1]
		files := []string{"services/svc" + n + "/cache.go", "services/svc" + n + "/cache_test.go"}
		ms = append(ms,
			map[string]any{"content": fmt.Sprintf("The cache of service %s uses option %s, chosen over a shared remote cache and over no cache at all", n, n),
				"kind": "decision", "rationale": fmt.Sprintf("Option %s keeps reads on the local node, so a cache hit costs no network round trip and the service keeps answering when the network is slow", n),
				"files_touched": files, "confidence": 0.9},
			map[string]any{"content": fmt.Sprintf("A shared remote cache was rejected for service %s because every read would cross the network", n),
				"kind": "rationale", "rationale": "Reads dominate the service's traffic and must stay fast under load", "files_touched": files, "confidence": 0.8},
			map[string]any{"content": fmt.Sprintf("Reads of service %s's cache stay on the node that serves the request; only invalidations travel between nodes", n),
				"kind": "fact", "rationale": "", "files_touched": files[:1], "confidence": 0.7})
	}
	answer, _ := json.Marshal(map[string]any{"memories": ms})
	call.Output = tokens.Count(string(answer)) + 1
	call.CostMicros = budgetPrices.CostMicros(call.PromptTokens, call.Output)

	rendezvous := time.NewTimer(rendezvousWait)
	defer rendezvous.Stop()
	select {
	case <-f.together:
	case <-rendezvous.C:
	case <-r.Context().Done():
		f.record(call)
		return
	}
	timer := time.NewTimer(f.delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.Context().Done():
		f.record(call)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	now := time.Now().UTC()
	err := enc.Encode(map[string]any{"model": req.Model, "created_at": now,
		"message": map[string]string{"role": "assistant", "content": string(answer)}, "done": false})
	if err == nil {
		http.NewResponseController(w).Flush()
		err = enc.Encode(map[string]any{"model": req.Model, "created_at": now,
			"message": map[string]string{"role": "assistant", "content": ""}, "done": true, "done_reason": "stop",
			"total_duration": f.delay.Nanoseconds(), "prompt_eval_count": call.PromptTokens, "eval_count": call.Output})
	}
	call.Answered = err == nil
	f.record(call)
}

func (f *fakeModel) enter(client string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inFlight[client]++
	total, clients := 0, 0
	for _, n := range f.inFlight {
		total += n
		if n > 0 {
			clients++
		}
	}
	f.maxInFlight = max(f.maxInFlight, total)
	if clients >= 2 && f.maxClients < 2 {
		close(f.together)
	}
	f.maxClients = max(f.maxClients, clients)
}

func (f *fakeModel) leave(client string) {
	f.mu.Lock()
	f.inFlight[client]--
	f.mu.Unlock()
}

func (f *fakeModel) record(c modelCall) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
}

// Concurrency is the most chats in progress at once, and the most
// distinct clients with a chat in progress at once.
func (f *fakeModel) Concurrency() (chats, clients int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxInFlight, f.maxClients
}

// Calls is every chat answered or abandoned so far.
func (f *fakeModel) Calls() []modelCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// budgetBatch is transcript batch i of the scenario: a task and the
// assistant's decision for it, in one of budgetSessions sessions, as the
// transcript tailer cuts a chat-jsonl file (whole lines, their offsets).
func budgetBatch(i int) events.TranscriptBatch {
	session := fmt.Sprintf("budget-s%d", i%budgetSessions)
	lines := []string{
		fmt.Sprintf(`{"role":"user","content":"Task %d: pick a cache option for service %d.","session":%q}`, i, i, session),
		fmt.Sprintf(`{"role":"assistant","content":"I decided to use option %d because it keeps reads local."}`, i),
	}
	start := int64(i/budgetSessions) * 10_000
	b := events.TranscriptBatch{Repo: "alpha", Session: session, Source: "/home/dev/.chats/" + session + ".jsonl",
		Format: events.TranscriptChatJSONL, StartOffset: start}
	off := start
	for _, l := range lines {
		b.Lines = append(b.Lines, json.RawMessage(l))
		b.Offsets = append(b.Offsets, off)
		off += int64(len(l)) + 1
	}
	b.EndOffset = off
	return b
}

func batchMsgID(b events.TranscriptBatch) string {
	return events.TranscriptBatchMsgID(b.Repo, b.StreamKey(), b.StartOffset)
}

// batchVersion names a batch for the checker: its repo, its Nats-Msg-Id
// and its cue_extractions key (which also names its lines).
func batchVersion(b events.TranscriptBatch) Version {
	return Version{Repo: b.Repo, Path: batchMsgID(b), Hash: extractor.ExtractionKeyOf(b)}
}

// memoryVersion names one memory of one batch for the checker: each is
// its own key, so that every one must be seen, not only a batch's last.
func memoryVersion(repo, batch, hash string) Version {
	return Version{Repo: repo, Path: batch + "/" + hash, Hash: hash}
}

// kvWrites records every write to a KV bucket's stream, in order, through
// an ordered consumer started before the writes.
type kvWrites struct {
	mu     sync.Mutex
	msgs   []jetstream.Msg
	stream jetstream.Stream
	prefix string
}

func watchKVWrites(ctx context.Context, t *testing.T, js jetstream.JetStream, bucket string) *kvWrites {
	t.Helper()
	stream, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		t.Fatalf("%s stream: %v", bucket, err)
	}
	w := &kvWrites{stream: stream, prefix: "$KV." + bucket + "."}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		w.mu.Lock()
		w.msgs = append(w.msgs, m)
		w.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return w
}

// caughtUp says whether every write the stream has taken was seen.
func (w *kvWrites) caughtUp(ctx context.Context) error {
	info, err := w.stream.Info(ctx)
	if err != nil {
		return err
	}
	w.mu.Lock()
	n := len(w.msgs)
	w.mu.Unlock()
	if uint64(n) != info.State.LastSeq {
		return fmt.Errorf("%s: seen %d of %d writes", info.Config.Name, n, info.State.LastSeq)
	}
	return nil
}

// each calls f with every write's key and value; deletes and purges are
// counted, not passed.
func (w *kvWrites) each(f func(key string, value []byte)) (deletes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.msgs {
		if op := m.Headers().Get("KV-Operation"); op != "" {
			deletes++
			continue
		}
		f(strings.TrimPrefix(m.Subject(), w.prefix), m.Data())
	}
	return deletes
}

func containerLog(ctx context.Context, n *Node) string {
	r, err := n.C.Logs(ctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

// TestClusterExtractorsShareBudget is scenario 6: two extractors with a
// shared daily budget never exceed it together.
//
// A fake model on the host answers every chat slowly, so calls of both
// extractors are in flight at once, and bills realistic token counts;
// both extractors run with the same small daily budget, which pays for
// about ten of the 40 transcript batches published (as the transcript
// tailer publishes them, in bursts of five). Once every batch is handled:
// the day's BudgetState and the fake's own bill agree to the micro-dollar
// and stay within the limit, both extractors called the model, the budget
// turned batches away to the rule path, and the set checker finds every
// acknowledged batch extracted once and each of its memories stored once.
func TestClusterExtractorsShareBudget(t *testing.T) {
	model := startFakeModel(t, budgetCallDelay)
	s := StartScenario(t, 6*time.Minute, ClusterOptions{Extractors: 2, ExtractorArgs: []string{
		"--llm", "ollama:" + budgetModel,
		"--ollama-host", fmt.Sprintf("http://host.docker.internal:%d", model.Port()),
		"--daily-budget-usd", fmt.Sprint(budgetDailyUSD),
		"--price-in", fmt.Sprint(budgetPriceIn), "--price-out", fmt.Sprint(budgetPriceOut),
		"--workers", "2",
	}})
	ctx, c, js := s.Ctx, s.C, s.JS
	clients := map[string]string{} // container IP -> extractor
	for _, n := range c.Extractors {
		ips, err := n.C.ContainerIPs(ctx)
		if err != nil || len(ips) == 0 {
			t.Fatalf("%s address: %v %v", n.Name, ips, err)
		}
		for _, ip := range ips {
			clients[ip] = n.Name
		}
	}
	extractions := watchKVWrites(ctx, t, js, events.ExtractionsBucket)
	memories := watchKVWrites(ctx, t, js, events.MemoriesBucket)

	cons, err := js.Consumer(ctx, events.IngestStream, events.ExtractorConsumer)
	if err != nil {
		t.Fatal(err)
	}
	// drained: every batch published so far handled and acked (an
	// extractor acks once the batch's memories are stored). The ack floor
	// must reach the last published sequence: in a cluster the consumer's
	// leader may not yet hold a message the stream's quorum acknowledged,
	// and then counts it neither pending nor delivered.
	drained := func(lastSeq uint64) func() error {
		return func() error {
			info, err := cons.Info(ctx)
			if err != nil {
				return err
			}
			if info.NumPending > 0 || info.NumAckPending > 0 {
				return fmt.Errorf("pending %d, ack pending %d, redelivered %d", info.NumPending, info.NumAckPending, info.NumRedelivered)
			}
			if info.AckFloor.Stream < lastSeq {
				return fmt.Errorf("acked up to stream seq %d of %d", info.AckFloor.Stream, lastSeq)
			}
			return nil
		}
	}

	// Publish as the tailer does (bus.PublishEvent: Nats-Msg-Id and
	// Cue-Kind), in bursts of budgetBurst batches published at once, as
	// several sessions flush together: the workers of both extractors
	// reserve at the same moment, so their compare-and-set updates of the
	// day's state race. Each burst is drained before the next, so every
	// burst starts with no reservation open and the budget runs out
	// whatever the machine's speed.
	batches := make([]events.TranscriptBatch, budgetBursts*budgetBurst)
	acked := NewChecker()
	var ackMu sync.Mutex
	var lastSeq uint64
	start := time.Now()
	for burst := range budgetBursts {
		var wg sync.WaitGroup
		for i := burst * budgetBurst; i < (burst+1)*budgetBurst; i++ {
			b := budgetBatch(i)
			batches[i] = b
			wg.Go(func() {
				ack, err := bus.PublishEvent(ctx, js, events.TranscriptSubject(b.Repo), batchMsgID(b), b)
				if err != nil {
					t.Errorf("publish %s: %v", batchMsgID(b), err)
					return
				}
				if ack.Duplicate {
					t.Errorf("publish %s: JetStream took it for a duplicate", batchMsgID(b))
					return
				}
				ackMu.Lock()
				acked.Ack(batchVersion(b))
				lastSeq = max(lastSeq, ack.Sequence)
				ackMu.Unlock()
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		eventually(ctx, t, 2*time.Minute, fmt.Sprintf("burst %d handled", burst+1), drained(lastSeq))
	}
	elapsed := time.Since(start)
	eventually(ctx, t, time.Minute, "every bucket write seen", func() error {
		return errors.Join(extractions.caughtUp(ctx), memories.caughtUp(ctx))
	})
	t.Logf("%d batches published in %d bursts, all acked; the extractor consumer drained after each, the last %s after the first publish",
		len(batches), budgetBursts, elapsed.Round(time.Millisecond))

	// (b) Every acknowledged batch extracted once: one ExtractionRecord
	// write per batch (cue_extractions' Create), and each of its memories
	// written once, by that batch.
	batchChk := NewChecker()
	for v := range acked.acked {
		batchChk.Ack(v)
	}
	records := map[Version]events.ExtractionRecord{}
	if d := extractions.each(func(key string, value []byte) {
		rec, err := events.DecodeExtractionRecord(value)
		if err != nil {
			t.Errorf("cue_extractions %s: %v", key, err)
			return
		}
		v := Version{Repo: rec.Repo, Path: rec.Batch, Hash: key}
		batchChk.Observe(v)
		records[v] = rec
	}); d > 0 {
		t.Errorf("cue_extractions: %d deletes or purges", d)
	}
	rb := batchChk.Report()
	t.Logf("checker transcript batches (cue_extractions writes): %s", rb)
	if !rb.OK() || len(rb.Unexpected) > 0 {
		t.Errorf("transcript batches: %s", rb)
	}

	memChk := NewChecker()
	for _, rec := range records {
		for _, m := range rec.Memories {
			memChk.Ack(memoryVersion(rec.Repo, rec.Batch, memory.Hash(m.Content)))
		}
	}
	if d := memories.each(func(key string, value []byte) {
		rec, err := events.DecodeMemoryRecord(value)
		if err != nil {
			t.Errorf("cue_memories %s: %v", key, err)
			return
		}
		memChk.Observe(memoryVersion(rec.Repo, rec.Batch, rec.Hash))
	}); d > 0 {
		t.Errorf("cue_memories: %d deletes or purges", d)
	}
	rm := memChk.Report()
	t.Logf("checker memories (cue_memories writes, by source batch): %s", rm)
	if !rm.OK() || len(rm.Unexpected) > 0 {
		t.Errorf("memories: %s", rm)
	}
	if rm.Acknowledged < len(batches) {
		t.Errorf("%d memories for %d batches: every batch holds a decision, by the model or by the rules", rm.Acknowledged, len(batches))
	}

	// (a) The budget. The fake's bill is the truth: what the calls cost at
	// the configured prices.
	calls := model.Calls()
	var billed, maxEst, minCost, maxCost int64
	perClient := map[string]int{}
	unfinished := 0
	for i, cl := range calls {
		name := clients[cl.Client]
		if name == "" {
			name = "unknown " + cl.Client
		}
		perClient[name]++
		maxEst = max(maxEst, cl.EstMicros)
		if !cl.Answered {
			unfinished++ // the extractor settles it at 0
			continue
		}
		billed += cl.CostMicros
		if minCost == 0 || cl.CostMicros < minCost {
			minCost = cl.CostMicros
		}
		maxCost = max(maxCost, cl.CostMicros)
		if cl.CostMicros > cl.EstMicros {
			t.Errorf("call %d cost %d µ$, over its %d µ$ reservation: the fake's token counts are not realistic", i, cl.CostMicros, cl.EstMicros)
		}
	}
	kv, err := js.KeyValue(ctx, events.BudgetBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, events.BudgetKey(time.Now()))
	if err != nil {
		t.Fatalf("budget %s: %v", events.BudgetKey(time.Now()), err)
	}
	var st events.BudgetState
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		t.Fatal(err)
	}
	path := map[string]int{}
	var recSpent int64
	for _, rec := range records {
		p := string(rec.Path)
		if rec.Why != "" {
			p += "/" + rec.Why
		}
		path[p]++
		recSpent += rec.SpentMicros
	}
	inFlight, callers := model.Concurrency()
	t.Logf("model: %d chats (%v), %d unfinished, at most %d in flight from %d extractors at once; each reserved up to %d µ$ and cost %d–%d µ$",
		len(calls), perClient, unfinished, inFlight, callers, maxEst, minCost, maxCost)
	t.Logf("budget %s: spent %d µ$ of %d µ$ (%.1f%%), %d calls, %d refused, %d µ$ still reserved, alerts %v; model billed %d µ$; records spent %d µ$; paths %v",
		events.BudgetKey(time.Now()), st.SpentMicros, st.LimitMicros, 100*float64(st.SpentMicros)/float64(max(st.LimitMicros, 1)),
		st.Calls, st.Refused, st.ReservedOpen, st.AlertsFired, billed, recSpent, path)

	limit := int64(math.Round(budgetDailyUSD * 1e6))
	if st.LimitMicros != limit {
		t.Errorf("budget limit %d µ$, want %d", st.LimitMicros, limit)
	}
	if st.SpentMicros > limit || billed > limit {
		t.Errorf("the extractors together exceeded the budget: the day records %d µ$, the model billed %d µ$, limit %d µ$", st.SpentMicros, billed, limit)
	}
	// Every call was reserved and settled to its actual cost, by one
	// extractor or the other: no update of the day was lost.
	if st.ReservedOpen != 0 || st.SpentMicros != billed || st.Calls != len(calls) {
		t.Errorf("the day's state (spent %d µ$, %d calls, %d µ$ reserved) does not match the model's bill (%d µ$, %d calls)",
			st.SpentMicros, st.Calls, st.ReservedOpen, billed, len(calls))
	}
	if recSpent != billed || path["llm"] != len(calls) {
		t.Errorf("the extraction records (%d µ$, %d by the model) do not match the model's bill (%d µ$, %d calls): a batch paid for twice or a call not recorded",
			recSpent, path["llm"], billed, len(calls))
	}
	for _, n := range c.Extractors {
		if perClient[n.Name] == 0 {
			t.Errorf("%s made no call: the budget was not shared between two callers", n.Name)
		}
	}
	if callers < 2 {
		t.Errorf("the two extractors never had calls in flight at once: the scenario did not contend for the budget")
	}
	refused := path["rules/"+extractor.WhyBudgetExhausted]
	if refused == 0 || st.Refused < refused {
		t.Errorf("budget refusals: %d batches took the rule path for the budget, the day counts %d; want some, counted", refused, st.Refused)
	}
	if want := path["llm"] + refused; want != len(records) {
		t.Errorf("%d batches took a path other than the model or the budget's rule path: %v", len(records)-want, path)
	}
	// The budget ran out: what is left cannot pay for another call's
	// reservation, so the refusals at the end were for money, not only for
	// calls in flight.
	if left := limit - st.SpentMicros; left >= maxEst {
		t.Errorf("%d µ$ of the budget left, enough for another %d µ$ reservation: the budget was never exhausted", left, maxEst)
	}
	// Without the shared budget the batches would have cost more than the
	// limit, or the scenario proves nothing.
	if unbudgeted := int64(len(batches)) * minCost; unbudgeted <= limit {
		t.Errorf("%d batches at %d µ$ cost %d µ$, within the %d µ$ limit: the budget was never the constraint", len(batches), minCost, unbudgeted, limit)
	} else {
		t.Logf("without a budget the %d batches would have cost at least %d µ$ (%.1f× the limit)", len(batches), unbudgeted, float64(unbudgeted)/float64(limit))
	}
	for _, n := range c.Extractors {
		if log := containerLog(ctx, n); strings.Contains(log, "cost more than its estimate") {
			t.Errorf("%s charged a call above its reservation", n.Name)
		}
	}
	s.Done()
}
