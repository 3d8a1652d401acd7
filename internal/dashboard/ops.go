package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// recentDead is how many dead letters the operations view lists.
const recentDead = 10

// opsTimeout bounds the JetStream reads of one operations answer when the
// request has no earlier deadline.
const opsTimeout = 5 * time.Second

// Ops is what /dashboard/api/ops answers. A part whose source this
// process lacks, or that could not be read, is nil and Errors says why.
type Ops struct {
	// Materialisation is the edge's lag per feed (as /readyz reports it).
	Materialisation *telemetry.Report `json:"materialisation"`
	// Ingest is the backlog of the queues between ingest and the
	// materialised feeds.
	Ingest      []QueueLag   `json:"ingest"`
	DeadLetters *DeadLetters `json:"dead_letters"`
	Budget      *Budget      `json:"budget"`
	// RateLimits counts the calls refused with 429 since the process
	// started, by tool; Calls counts all tool calls by tool.
	RateLimits []ToolCount       `json:"rate_limits"`
	Calls      []ToolCount       `json:"calls"`
	Errors     map[string]string `json:"errors,omitempty"`
	At         time.Time         `json:"at"`
}

// QueueLag is one queue stream: how many events wait, how old the
// oldest is, and each consumer's share.
type QueueLag struct {
	Stream string `json:"stream"`
	// Waiting is the events its consumers have yet to settle (deliver
	// and have acknowledged).
	Waiting uint64 `json:"waiting"`
	// OldestAgeSeconds is the age of the oldest waiting event: how far
	// behind the file system the searchable state is, at most. Absent
	// when nothing waits.
	OldestAgeSeconds *float64      `json:"oldest_age_seconds,omitempty"`
	Consumers        []ConsumerLag `json:"consumers"`
}

// ConsumerLag is one durable consumer's backlog.
type ConsumerLag struct {
	Name        string `json:"name"`
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
}

// DeadLetters counts the dead-letter stream and lists its latest entries
// the caller may see (those of repos it may read).
type DeadLetters struct {
	Count  uint64       `json:"count"`
	Latest []DeadLetter `json:"latest"`
	// Hidden counts latest entries left out because they belong to repos
	// the caller may not read.
	Hidden int `json:"hidden,omitempty"`
}

// DeadLetter is one event a worker gave up on, from its Cue-Dead-*
// headers.
type DeadLetter struct {
	Seq        uint64    `json:"seq"`
	Subject    string    `json:"subject"`
	Repo       string    `json:"repo,omitempty"`
	Consumer   string    `json:"consumer"`
	Stream     string    `json:"stream"`
	SourceSeq  string    `json:"source_seq"`
	Deliveries string    `json:"deliveries"`
	Error      string    `json:"error"`
	At         time.Time `json:"at"`
}

// Budget is today's LLM spend against the daily limit. LimitUSD is nil
// when the limit is unknown (no extractor recorded one and this process
// is not configured with it); 0 means no cap. LimitSource says where the
// limit came from: "bucket" (recorded by the extractors), "config" (this
// process's configuration) or "unknown".
type Budget struct {
	Day          string   `json:"day"`
	SpentUSD     float64  `json:"spent_usd"`
	ReservedUSD  float64  `json:"reserved_usd"`
	LimitUSD     *float64 `json:"limit_usd"`
	LimitSource  string   `json:"limit_source"`
	Calls        int      `json:"calls"`
	Refused      int      `json:"refused"`
	AlertsFired  []int    `json:"alerts_fired,omitempty"`
	Recorded     bool     `json:"recorded"`
	UsedFraction *float64 `json:"used_fraction,omitempty"`
}

// ToolCount is a count for one tool.
type ToolCount struct {
	Tool  string  `json:"tool"`
	Count float64 `json:"count"`
}

func (a *api) ops(w http.ResponseWriter, r *http.Request) {
	ctx, id := identity(r)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opsTimeout)
		defer cancel()
	}
	out := Ops{Ingest: []QueueLag{}, RateLimits: []ToolCount{}, Calls: []ToolCount{}, Errors: map[string]string{}, At: time.Now().UTC()}
	if a.opts.Monitor != nil {
		rep := a.opts.Monitor.Report()
		out.Materialisation = &rep
	} else {
		out.Errors["materialisation"] = "this process has no lag monitor"
	}
	if js := a.opts.JetStream; js != nil {
		for _, name := range []string{events.IngestStream, events.EmbedStream} {
			q, err := queueLag(ctx, js, name, queueConsumers[name])
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				continue
			}
			if err != nil {
				a.log.Warn("dashboard: reading a queue", "stream", name, "err", err)
				out.Errors["ingest"] = "cannot read stream " + name + ": " + err.Error()
				continue
			}
			out.Ingest = append(out.Ingest, q)
		}
		if d, err := deadLetters(ctx, js, id); err != nil {
			a.log.Warn("dashboard: reading dead letters", "err", err)
			out.Errors["dead_letters"] = "cannot read stream " + events.DeadLetterStream + ": " + err.Error()
		} else {
			out.DeadLetters = d
		}
		if b, err := a.budget(ctx, js); err != nil {
			a.log.Warn("dashboard: reading the budget", "err", err)
			out.Errors["budget"] = "cannot read bucket " + events.BudgetBucket + ": " + err.Error()
		} else {
			out.Budget = b
		}
	} else {
		msg := "this process has no JetStream handle"
		out.Errors["ingest"], out.Errors["dead_letters"], out.Errors["budget"] = msg, msg, msg
	}
	if a.opts.Metrics != nil {
		out.RateLimits, out.Calls = toolCounts(a.opts.Metrics)
	} else {
		out.Errors["rate_limits"] = "this process has no metrics"
	}
	writeJSON(w, http.StatusOK, out)
}

// queueConsumers are the durable consumers of each queue. They are
// read by name: an edge's NATS user may read consumer info but not list
// consumers (deployments/nats/accounts.conf).
var queueConsumers = map[string][]string{
	events.IngestStream: {events.ExtractorConsumer, events.IndexerConsumer},
	events.EmbedStream:  {events.EmbedderConsumer},
}

func queueLag(ctx context.Context, js JetStream, name string, consumers []string) (QueueLag, error) {
	q := QueueLag{Stream: name, Consumers: []ConsumerLag{}}
	s, err := js.Stream(ctx, name)
	if err != nil {
		return q, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return q, err
	}
	// The queues keep settled events until their workers trim them: what
	// waits is what the consumers have not settled, and the oldest of it
	// is no older than the event just above the lowest ack floor.
	floor, waiting := uint64(math.MaxUint64), false
	for _, name := range consumers {
		c, err := s.Consumer(ctx, name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue // that role has not started yet
		}
		if err != nil {
			return q, err
		}
		ci := c.CachedInfo()
		q.Consumers = append(q.Consumers, ConsumerLag{Name: ci.Name, Pending: ci.NumPending, AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered})
		if backlog := ci.NumPending + uint64(ci.NumAckPending); backlog > 0 {
			q.Waiting += backlog
			floor, waiting = min(floor, ci.AckFloor.Stream), true
		}
	}
	if !waiting {
		return q, nil
	}
	oldest := info.State.FirstTime
	if m, err := s.GetMsg(ctx, max(floor+1, info.State.FirstSeq)); err == nil {
		oldest = m.Time
	}
	if !oldest.IsZero() {
		age := math.Max(time.Since(oldest).Seconds(), 0)
		q.OldestAgeSeconds = &age
	}
	return q, nil
}

// deadLetters counts the dead-letter stream and reads its latest entries,
// newest first, keeping those id may see. A stream not provisioned yet
// holds none.
func deadLetters(ctx context.Context, js JetStream, id access.Identity) (*DeadLetters, error) {
	d := &DeadLetters{Latest: []DeadLetter{}}
	s, err := js.Stream(ctx, events.DeadLetterStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return d, nil
	}
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	d.Count = info.State.Msgs
	// Walk back from the head; a restricted caller may skip many, so the
	// walk is bounded too.
	for seq, read := info.State.LastSeq, 0; seq >= info.State.FirstSeq && seq > 0 && len(d.Latest) < recentDead && read < 20*recentDead; seq-- {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		read++
		subj := m.Header.Get(events.HeaderDeadSubject)
		dl := DeadLetter{
			Seq: m.Sequence, Subject: subj, Repo: repoOfSubject(subj), Consumer: m.Header.Get(events.HeaderDeadConsumer),
			Stream: m.Header.Get(events.HeaderDeadStream), SourceSeq: m.Header.Get(events.HeaderDeadSeq),
			Deliveries: m.Header.Get(events.HeaderDeadDeliver), Error: m.Header.Get(events.HeaderDeadError), At: m.Time.UTC(),
		}
		if id.Restricted() && (dl.Repo == "" || !id.MayRead(dl.Repo)) {
			d.Hidden++
			continue
		}
		d.Latest = append(d.Latest, dl)
	}
	return d, nil
}

// repoOfSubject is the repo an event's subject names: every CueDeck
// subject is a prefix and the repo ("cue.ingest.file.app"); repo names
// hold no dots.
func repoOfSubject(subj string) string {
	if !strings.HasPrefix(subj, "cue.") {
		return ""
	}
	i := strings.LastIndexByte(subj, '.')
	repo := subj[i+1:]
	if events.ValidateRepo(repo) != nil {
		return ""
	}
	return repo
}

// budget reads today's BudgetState. Without one, nothing was spent today;
// the limit is then the configured one, if known.
func (a *api) budget(ctx context.Context, js JetStream) (*Budget, error) {
	now := a.opts.Now().UTC()
	b := &Budget{Day: now.Format(time.DateOnly), LimitSource: "unknown"}
	kv, err := js.KeyValue(ctx, events.BudgetBucket)
	if err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, err
	}
	var st events.BudgetState
	if kv != nil {
		e, err := kv.Get(ctx, events.BudgetKey(now))
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return nil, err
		default:
			if err := json.Unmarshal(e.Value(), &st); err != nil {
				return nil, errors.New("today's budget record does not decode: " + err.Error())
			}
			b.Recorded = true
		}
	}
	b.SpentUSD, b.ReservedUSD = float64(st.SpentMicros)/1e6, float64(st.ReservedOpen)/1e6
	b.Calls, b.Refused, b.AlertsFired = st.Calls, st.Refused, st.AlertsFired
	switch {
	case st.LimitMicros > 0:
		l := float64(st.LimitMicros) / 1e6
		b.LimitUSD, b.LimitSource = &l, "bucket"
	case a.opts.DailyLimitUSD != nil:
		l := max(*a.opts.DailyLimitUSD, 0)
		b.LimitUSD, b.LimitSource = &l, "config"
	case b.Recorded:
		// The extractor that wrote today's record enforced no cap.
		l := 0.0
		b.LimitUSD, b.LimitSource = &l, "bucket"
	}
	if b.LimitUSD != nil && *b.LimitUSD > 0 {
		f := b.SpentUSD / *b.LimitUSD
		b.UsedFraction = &f
	}
	return b, nil
}

// toolCounts reads the rate-limit refusals and the tool calls from the
// registry, by tool, most first.
func toolCounts(m *telemetry.Metrics) (refused, calls []ToolCount) {
	refused, calls = []ToolCount{}, []ToolCount{}
	families, err := m.Registry.Gather()
	if err != nil && len(families) == 0 {
		return refused, calls
	}
	byTool := map[string]float64{}
	for _, f := range families {
		switch f.GetName() {
		case "cue_tool_rate_limited_total":
			for _, mt := range f.GetMetric() {
				refused = append(refused, ToolCount{Tool: label(mt.GetLabel(), "tool"), Count: mt.GetCounter().GetValue()})
			}
		case "cue_tool_calls_total":
			for _, mt := range f.GetMetric() {
				byTool[label(mt.GetLabel(), "tool")] += mt.GetCounter().GetValue()
			}
		}
	}
	for t, n := range byTool {
		calls = append(calls, ToolCount{Tool: t, Count: n})
	}
	for _, s := range [][]ToolCount{refused, calls} {
		sort.Slice(s, func(i, j int) bool {
			if s[i].Count != s[j].Count {
				return s[i].Count > s[j].Count
			}
			return s[i].Tool < s[j].Tool
		})
	}
	return refused, calls
}

func label(pairs []*dto.LabelPair, name string) string {
	for _, p := range pairs {
		if p.GetName() == name {
			return p.GetValue()
		}
	}
	return ""
}
