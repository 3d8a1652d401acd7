// Package status reads what the pipeline holds, from JetStream alone: what
// is indexed, skipped and warned about per repo, how far the workers lag,
// and which events were dead-lettered. `cue status` and `cue doctor` print
// it; it works against the embedded server and a team cluster alike.
package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// Report is the state of the pipeline.
type Report struct {
	Repos       []RepoReport   `json:"repos"`
	Consumers   []ConsumerLag  `json:"consumers"`
	IngestQueue uint64         `json:"ingest_queue"`
	DeadLetters uint64         `json:"dead_letters"`
	RecentDead  []DeadLetter   `json:"recent_dead,omitempty"`
	Undecodable []string       `json:"undecodable_records,omitempty"`
	Embeddings  *EmbedReport   `json:"embeddings,omitempty"`
	Memories    *MemoryReport  `json:"memories,omitempty"`
	CollectedAt time.Time      `json:"collected_at"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// RepoReport counts one repo's documents.
type RepoReport struct {
	Repo     string         `json:"repo"`
	Indexed  int            `json:"indexed"`
	Deleted  int            `json:"deleted"`
	ByKind   map[string]int `json:"by_kind"`
	Tokens   int            `json:"tokens"`
	Skipped  []PathNote     `json:"skipped,omitempty"`
	Warnings []PathNote     `json:"warnings,omitempty"`
}

// PathNote is a remark about one file.
type PathNote struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// ConsumerLag is how far a durable consumer is behind.
type ConsumerLag struct {
	Stream      string `json:"stream"`
	Name        string `json:"name"`
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
}

// EmbedReport is how far the embeddings trail the documents. Keyword
// search has every indexed document already; semantic search has those
// with vectors of the model it queries with.
type EmbedReport struct {
	// Model is the configured model id, or the only one with vectors when
	// none was given; empty if that is unknown.
	Model string `json:"model,omitempty"`
	// Pending is the embed requests not yet done: waiting for the embed
	// workers plus in their hands (retried while the model is
	// unavailable).
	Pending uint64 `json:"pending"`
	// Docs is the indexed documents; Vectors those with a vector record of
	// Model.
	Docs    int `json:"docs"`
	Vectors int `json:"vectors"`
	// ByModel counts vector records per model id.
	ByModel map[string]int `json:"by_model,omitempty"`
}

// MemoryReport is what extraction has kept, and how far it trails the
// transcripts.
type MemoryReport struct {
	// ByRepo counts memories per repo.
	ByRepo map[string]int `json:"by_repo"`
	Total  int            `json:"total"`
	// Pending is the transcript batches waiting for or in the hands of the
	// extractor workers.
	Pending uint64 `json:"pending"`
	// Budget is today's shared LLM spend, when any extractor recorded one.
	Budget *events.BudgetState `json:"budget,omitempty"`
}

// Options narrow what Collect reports.
type Options struct {
	// EmbedModel is the model id whose embedding backlog is reported
	// (e.g. "builtin:use-lite"); empty: the only model with vectors.
	EmbedModel string
}

// DeadLetter describes one event a worker gave up on.
type DeadLetter struct {
	Seq        uint64    `json:"seq"`
	Subject    string    `json:"subject"`
	Consumer   string    `json:"consumer"`
	SourceSeq  string    `json:"source_seq"`
	Deliveries string    `json:"deliveries"`
	Error      string    `json:"error"`
	At         time.Time `json:"at"`
}

// Collect reads the report. It needs only read access to the streams,
// consumers and the docs and vectors buckets.
func Collect(ctx context.Context, js jetstream.JetStream) (Report, error) {
	return CollectWith(ctx, js, Options{})
}

// CollectWith is Collect with options.
func CollectWith(ctx context.Context, js jetstream.JetStream, opts Options) (Report, error) {
	r := Report{CollectedAt: time.Now().UTC()}
	if s, err := js.Stream(ctx, events.IngestStream); err == nil {
		if info, err := s.Info(ctx); err == nil {
			r.IngestQueue = info.State.Msgs
		}
		lister := s.ListConsumers(ctx)
		for ci := range lister.Info() {
			r.Consumers = append(r.Consumers, ConsumerLag{
				Stream: events.IngestStream, Name: ci.Name, Pending: ci.NumPending,
				AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered,
			})
		}
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return r, fmt.Errorf("status: %w", err)
	}
	if err := collectDocs(ctx, js, &r); err != nil {
		return r, err
	}
	if err := collectEmbeddings(ctx, js, &r, opts.EmbedModel); err != nil {
		return r, err
	}
	if err := collectMemories(ctx, js, &r); err != nil {
		return r, err
	}
	if err := collectDead(ctx, js, &r, 10); err != nil {
		return r, err
	}
	return r, nil
}

// collectEmbeddings fills r.Embeddings when the embed stream exists.
func collectEmbeddings(ctx context.Context, js jetstream.JetStream, r *Report, model string) error {
	s, err := js.Stream(ctx, events.EmbedStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	er := &EmbedReport{Model: model, ByModel: map[string]int{}}
	for _, rr := range r.Repos {
		er.Docs += rr.Indexed
	}
	lister := s.ListConsumers(ctx)
	for ci := range lister.Info() {
		r.Consumers = append(r.Consumers, ConsumerLag{
			Stream: events.EmbedStream, Name: ci.Name, Pending: ci.NumPending,
			AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered,
		})
		if ci.Name == events.EmbedderConsumer {
			er.Pending = ci.NumPending + uint64(ci.NumAckPending)
		}
	}
	kv, err := js.KeyValue(ctx, events.VectorsBucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
	case err != nil:
		return fmt.Errorf("status: %w", err)
	default:
		keys, err := kv.ListKeys(ctx)
		if err != nil {
			return fmt.Errorf("status: list %s: %w", events.VectorsBucket, err)
		}
		for k := range keys.Keys() {
			if m, _, _, err := events.ParseVectorKey(k); err == nil {
				er.ByModel[m]++
			}
		}
	}
	if er.Model == "" && len(er.ByModel) == 1 {
		for m := range er.ByModel {
			er.Model = m
		}
	}
	er.Vectors = er.ByModel[er.Model]
	r.Embeddings = er
	return nil
}

// collectMemories fills r.Memories when the memories bucket exists.
func collectMemories(ctx context.Context, js jetstream.JetStream, r *Report) error {
	kv, err := js.KeyValue(ctx, events.MemoriesBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	mr := &MemoryReport{ByRepo: map[string]int{}}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("status: list %s: %w", events.MemoriesBucket, err)
	}
	for k := range keys.Keys() {
		if repo, _, err := events.ParseMemoryKey(k); err == nil {
			mr.ByRepo[repo]++
			mr.Total++
		}
	}
	for _, c := range r.Consumers {
		if c.Stream == events.IngestStream && c.Name == events.ExtractorConsumer {
			mr.Pending = c.Pending + uint64(c.AckPending)
		}
	}
	if bkv, err := js.KeyValue(ctx, events.BudgetBucket); err == nil {
		if e, err := bkv.Get(ctx, events.BudgetKey(r.CollectedAt)); err == nil {
			var st events.BudgetState
			if json.Unmarshal(e.Value(), &st) == nil {
				mr.Budget = &st
			}
		}
	}
	r.Memories = mr
	return nil
}

func collectDocs(ctx context.Context, js jetstream.JetStream, r *Report) error {
	kv, err := js.KeyValue(ctx, events.DocsBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("status: watch %s: %w", events.DocsBucket, err)
	}
	defer w.Stop()
	repos := map[string]*RepoReport{}
	for {
		var e jetstream.KeyValueEntry
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e = <-w.Updates():
		}
		if e == nil {
			break // the initial values are all delivered
		}
		rec, err := events.DecodeDocRecord(e.Value())
		if err != nil {
			r.Undecodable = append(r.Undecodable, e.Key()+": "+err.Error())
			continue
		}
		rr := repos[rec.Repo]
		if rr == nil {
			rr = &RepoReport{Repo: rec.Repo, ByKind: map[string]int{}}
			repos[rec.Repo] = rr
		}
		switch {
		case rec.Deleted:
			rr.Deleted++
		case rec.Skip != nil:
			rr.Skipped = append(rr.Skipped, PathNote{Path: rec.Path, Reason: string(rec.Skip.Reason), Detail: rec.Skip.Detail})
		default:
			rr.Indexed++
			rr.ByKind[string(rec.Kind)]++
			rr.Tokens += rec.Tokens
			for _, warn := range rec.Warnings {
				rr.Warnings = append(rr.Warnings, PathNote{Path: rec.Path, Reason: warn})
			}
		}
	}
	for _, rr := range repos {
		sort.Slice(rr.Skipped, func(i, j int) bool { return rr.Skipped[i].Path < rr.Skipped[j].Path })
		sort.Slice(rr.Warnings, func(i, j int) bool { return rr.Warnings[i].Path < rr.Warnings[j].Path })
		r.Repos = append(r.Repos, *rr)
	}
	sort.Slice(r.Repos, func(i, j int) bool { return r.Repos[i].Repo < r.Repos[j].Repo })
	return nil
}

func collectDead(ctx context.Context, js jetstream.JetStream, r *Report, recent int) error {
	s, err := js.Stream(ctx, events.DeadLetterStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	r.DeadLetters = info.State.Msgs
	for seq := info.State.LastSeq; seq >= info.State.FirstSeq && seq > 0 && len(r.RecentDead) < recent; seq-- {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		r.RecentDead = append(r.RecentDead, DeadLetter{
			Seq: m.Sequence, Subject: m.Header.Get(events.HeaderDeadSubject), Consumer: m.Header.Get(events.HeaderDeadConsumer),
			SourceSeq: m.Header.Get(events.HeaderDeadSeq), Deliveries: m.Header.Get(events.HeaderDeadDeliver),
			Error: m.Header.Get(events.HeaderDeadError), At: m.Time,
		})
	}
	return nil
}

// Print writes the report for people.
func (r Report) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Repos) == 0 {
		fmt.Fprintln(tw, "No documents indexed yet.")
	}
	for _, rr := range r.Repos {
		kinds := make([]string, 0, len(rr.ByKind))
		for k, n := range rr.ByKind {
			kinds = append(kinds, k+" "+strconv.Itoa(n))
		}
		sort.Strings(kinds)
		fmt.Fprintf(tw, "repo %s\t%d indexed (%s), %d tokens, %d skipped, %d with warnings\n",
			rr.Repo, rr.Indexed, strings.Join(kinds, ", "), rr.Tokens, len(rr.Skipped), countPaths(rr.Warnings))
		for _, s := range rr.Skipped {
			fmt.Fprintf(tw, "  skipped\t%s\t%s\t%s\n", s.Path, s.Reason, s.Detail)
		}
		for _, s := range rr.Warnings {
			fmt.Fprintf(tw, "  warning\t%s\t%s\n", s.Path, s.Reason)
		}
	}
	fmt.Fprintf(tw, "ingest queue\t%d events waiting\n", r.IngestQueue)
	for _, c := range r.Consumers {
		fmt.Fprintf(tw, "consumer %s\t%d pending, %d in flight, %d redelivered\n", c.Name, c.Pending, c.AckPending, c.Redelivered)
	}
	if e := r.Embeddings; e != nil {
		model := e.Model
		if model == "" {
			model = "no model"
		}
		fmt.Fprintf(tw, "embeddings (%s)\t%d of %d documents have vectors, %d requests pending\n", model, e.Vectors, e.Docs, e.Pending)
	}
	if m := r.Memories; m != nil {
		repos := make([]string, 0, len(m.ByRepo))
		for repo, n := range m.ByRepo {
			repos = append(repos, repo+" "+strconv.Itoa(n))
		}
		sort.Strings(repos)
		fmt.Fprintf(tw, "memories\t%d (%s), %d transcript batches pending\n", m.Total, strings.Join(repos, ", "), m.Pending)
		if b := m.Budget; b != nil {
			limit := "no daily cap"
			if b.LimitMicros > 0 {
				limit = fmt.Sprintf("of $%.2f (%.0f%%)", float64(b.LimitMicros)/1e6, 100*float64(b.SpentMicros)/float64(b.LimitMicros))
			}
			fmt.Fprintf(tw, "LLM spend today\t$%.4f %s, %d calls, %d refused by the budget\n", float64(b.SpentMicros)/1e6, limit, b.Calls, b.Refused)
		}
	}
	fmt.Fprintf(tw, "dead letters\t%d\n", r.DeadLetters)
	for _, d := range r.RecentDead {
		fmt.Fprintf(tw, "  dead\t#%d %s (source seq %s, %s deliveries)\t%s\n", d.Seq, d.Subject, d.SourceSeq, d.Deliveries, d.Error)
	}
	for _, u := range r.Undecodable {
		fmt.Fprintf(tw, "  undecodable record\t%s\n", u)
	}
	tw.Flush()
}

func countPaths(notes []PathNote) int {
	seen := map[string]bool{}
	for _, n := range notes {
		seen[n.Path] = true
	}
	return len(seen)
}
