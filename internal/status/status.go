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
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/humanize"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Report is the state of the pipeline.
type Report struct {
	// Files is how far indexing got over every repo, with its rate and
	// estimated time to go.
	Files       *FileProgress `json:"files,omitempty"`
	Repos       []RepoReport  `json:"repos"`
	Consumers   []ConsumerLag `json:"consumers"`
	IngestQueue uint64        `json:"ingest_queue"`
	DeadLetters uint64        `json:"dead_letters"`
	RecentDead  []DeadLetter  `json:"recent_dead,omitempty"`
	Undecodable []string      `json:"undecodable_records,omitempty"`
	Embeddings  *EmbedReport  `json:"embeddings,omitempty"`
	Memories    *MemoryReport `json:"memories,omitempty"`
	// Edge compares the edge's documents with cue_docs, when an edge was
	// asked (EdgeUnreached says why it could not be).
	Edge          *EdgeAgreement `json:"edge,omitempty"`
	EdgeUnreached string         `json:"edge_unreached,omitempty"`
	// FileCheck compares the workspace's files with cue_docs, when the
	// caller could read them (FileCheckSkipped says why not).
	FileCheck        *FilesAgreement `json:"file_check,omitempty"`
	FileCheckSkipped string          `json:"file_check_skipped,omitempty"`
	CollectedAt      time.Time       `json:"collected_at"`
	Extra            map[string]any  `json:"extra,omitempty"`
}

// FileProgress is how far indexing got: the files ingest found, those
// indexed or skipped, and those still to come.
type FileProgress struct {
	// Seen is the files ingest's latest scans found (at least those
	// indexed and skipped since), plus what is recorded of repos without
	// a scan report; without any scan report, the files indexed, skipped
	// and pending.
	Seen    int `json:"seen"`
	Indexed int `json:"indexed"`
	Skipped int `json:"skipped"`
	// Pending is what a running scan found and has not published, plus
	// the file events waiting for or in the hands of the indexers.
	Pending int `json:"pending"`
	// Scanning is true while a repo's scan is still publishing, Listing
	// while one is still listing its repo (Seen is then short).
	Scanning bool `json:"scanning,omitempty"`
	Listing  bool `json:"listing,omitempty"`
	// Rate is the files indexed per second over the last RateWindow
	// seconds, measured on the indexer consumer, and ETASeconds Pending at
	// that rate; absent when not measured (nothing pending, or
	// Options.RateWindow 0) or, for the ETA, when nothing moved.
	Rate       *float64 `json:"rate_per_second,omitempty"`
	ETASeconds *float64 `json:"eta_seconds,omitempty"`
	RateWindow float64  `json:"rate_window_seconds,omitempty"`
}

// RepoReport counts one repo's documents.
type RepoReport struct {
	Repo string `json:"repo"`
	// Seen is the files ingest's latest scan of the repo found, 0 when no
	// scan reported; Scanning is true while that scan publishes.
	Seen     int            `json:"seen,omitempty"`
	Scanning bool           `json:"scanning,omitempty"`
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

	// done counts the messages the consumer's workers finished when it
	// was read, at; rates compare two readings.
	done uint64
	at   time.Time
}

func consumerLag(stream string, ci *jetstream.ConsumerInfo, at time.Time) ConsumerLag {
	c := ConsumerLag{Stream: stream, Name: ci.Name, Pending: ci.NumPending,
		AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered, at: at}
	if d, held := ci.Delivered.Consumer, uint64(ci.NumAckPending); d > held {
		c.done = d - held
	}
	return c
}

// backlog is what the consumer has yet to deliver plus what its workers
// hold.
func (c ConsumerLag) backlog() int { return int(c.Pending) + c.AckPending }

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
	// LeftOut is how many of Vectors hold no vectors: the workers embed
	// prose only ([embed] files) and left those files (code, data) to
	// keyword search.
	LeftOut int `json:"left_out,omitempty"`
	// Rate is the requests done per second over the last RateWindow
	// seconds, ETASeconds Pending at that rate, as FileProgress's.
	Rate       *float64 `json:"rate_per_second,omitempty"`
	ETASeconds *float64 `json:"eta_seconds,omitempty"`
	RateWindow float64  `json:"rate_window_seconds,omitempty"`
	// ByModel counts vector records per model id.
	ByModel map[string]int `json:"by_model,omitempty"`
	// Cost is what embedding with Model has cost so far, every embed
	// worker's together (events.EmbedCostBucket); nil when nothing was
	// recorded.
	Cost *events.EmbedCost `json:"cost,omitempty"`
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
	// RateWindow, when positive and something is pending, is how long
	// the indexer and embedder consumers are watched for the rates and
	// ETAs: the report takes at least that long.
	RateWindow time.Duration
	// CountLeftOut has EmbedReport.LeftOut counted, which reads every
	// vector record of the model (the keys do not say): for a person's
	// `cue status`, not for a loop that polls while a daemon embeds.
	CountLeftOut bool
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
		// The queue keeps settled events until its workers trim them:
		// what waits is what its consumers have not settled.
		lister := s.ListConsumers(ctx)
		for ci := range lister.Info() {
			c := consumerLag(events.IngestStream, ci, time.Now())
			r.Consumers = append(r.Consumers, c)
			r.IngestQueue += uint64(c.backlog())
		}
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return r, fmt.Errorf("status: %w", err)
	}
	if err := collectDocs(ctx, js, &r); err != nil {
		return r, err
	}
	if err := collectScans(ctx, js, &r); err != nil {
		return r, err
	}
	if err := collectEmbeddings(ctx, js, &r, opts.EmbedModel, opts.CountLeftOut); err != nil {
		return r, err
	}
	if err := collectMemories(ctx, js, &r); err != nil {
		return r, err
	}
	if err := collectDead(ctx, js, &r, 10); err != nil {
		return r, err
	}
	if opts.RateWindow > 0 {
		if err := measureRates(ctx, js, &r, opts.RateWindow); err != nil {
			return r, err
		}
	}
	return r, nil
}

// consumer is the report's reading of a durable consumer, or nil.
func (r *Report) consumer(stream, name string) *ConsumerLag {
	for i := range r.Consumers {
		if r.Consumers[i].Stream == stream && r.Consumers[i].Name == name {
			return &r.Consumers[i]
		}
	}
	return nil
}

// collectScans reads ingest's scan reports and sums up r.Files; it needs
// the documents and consumers read first.
func collectScans(ctx context.Context, js jetstream.JetStream, r *Report) error {
	scans := map[string]events.ScanProgress{}
	kv, err := js.KeyValue(ctx, events.ScansBucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
	case err != nil:
		return fmt.Errorf("status: %w", err)
	default:
		w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
		if err != nil {
			return fmt.Errorf("status: watch %s: %w", events.ScansBucket, err)
		}
		defer w.Stop()
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
			var p events.ScanProgress
			if json.Unmarshal(e.Value(), &p) != nil {
				continue
			}
			// A running scan not reported on for long was left by an
			// ingest that stopped: it publishes nothing more.
			if p.Scanning && time.Since(e.Created()) > events.ScanStaleAfter {
				p.Scanning = false
			}
			scans[e.Key()] = p
		}
	}
	f := &FileProgress{}
	for repo, p := range scans {
		i := slices.IndexFunc(r.Repos, func(rr RepoReport) bool { return rr.Repo == repo })
		if i < 0 {
			r.Repos = append(r.Repos, RepoReport{Repo: repo, ByKind: map[string]int{}})
			i = len(r.Repos) - 1
		}
		r.Repos[i].Seen, r.Repos[i].Scanning = p.Files, p.Scanning
		f.Pending += p.Unpublished()
		f.Scanning = f.Scanning || p.Scanning
		f.Listing = f.Listing || (p.Scanning && p.Listing)
	}
	sort.Slice(r.Repos, func(i, j int) bool { return r.Repos[i].Repo < r.Repos[j].Repo })
	if c := r.consumer(events.IngestStream, events.IndexerConsumer); c != nil {
		f.Pending += c.backlog()
	}
	for i := range r.Repos {
		rr := &r.Repos[i]
		f.Indexed += rr.Indexed
		f.Skipped += len(rr.Skipped)
		if _, ok := scans[rr.Repo]; ok {
			// Files added since the scan are indexed as they come and
			// counted by the next scan only: never fewer seen than known.
			rr.Seen = max(rr.Seen, rr.Indexed+len(rr.Skipped))
			f.Seen += rr.Seen
		} else {
			f.Seen += rr.Indexed + len(rr.Skipped)
		}
	}
	if len(scans) == 0 {
		f.Seen += f.Pending
	}
	r.Files = f
	return nil
}

// measureRates reads the indexer and embedder consumers again RateWindow
// after the first reading and sets the rates and ETAs, when anything is
// pending.
func measureRates(ctx context.Context, js jetstream.JetStream, r *Report, window time.Duration) error {
	type target struct {
		stream, name string
		pending      int
		set          func(rate float64, eta *float64)
	}
	var targets []target
	if f := r.Files; f != nil && f.Pending > 0 {
		targets = append(targets, target{events.IngestStream, events.IndexerConsumer, f.Pending, func(rate float64, eta *float64) {
			f.Rate, f.ETASeconds, f.RateWindow = &rate, eta, window.Seconds()
		}})
	}
	if e := r.Embeddings; e != nil && e.Pending > 0 {
		targets = append(targets, target{events.EmbedStream, events.EmbedderConsumer, int(e.Pending), func(rate float64, eta *float64) {
			e.Rate, e.ETASeconds, e.RateWindow = &rate, eta, window.Seconds()
		}})
	}
	for _, tg := range targets {
		first := r.consumer(tg.stream, tg.name)
		if first == nil {
			continue
		}
		if wait := time.Until(first.at.Add(window)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		c, err := js.Consumer(ctx, tg.stream, tg.name)
		if err != nil {
			return fmt.Errorf("status: read consumer %s again: %w", tg.name, err)
		}
		second := consumerLag(tg.stream, c.CachedInfo(), time.Now())
		elapsed := second.at.Sub(first.at).Seconds()
		if elapsed <= 0 {
			continue
		}
		var done uint64
		if second.done > first.done {
			done = second.done - first.done
		}
		rate := float64(done) / elapsed
		var eta *float64
		if rate > 0 {
			s := float64(tg.pending) / rate
			eta = &s
		}
		tg.set(rate, eta)
	}
	return nil
}

// collectEmbeddings fills r.Embeddings when the embed stream exists.
func collectEmbeddings(ctx context.Context, js jetstream.JetStream, r *Report, model string, countLeftOut bool) error {
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
		r.Consumers = append(r.Consumers, consumerLag(events.EmbedStream, ci, time.Now()))
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
	if er.Model != "" {
		if er.Cost, err = embedCost(ctx, js, er.Model); err != nil {
			return err
		}
	}
	if countLeftOut && er.Vectors > 0 {
		if er.LeftOut, err = leftOutRecords(ctx, kv, er.Model); err != nil {
			return err
		}
	}
	r.Embeddings = er
	return nil
}

// embedCost is model's record in events.EmbedCostBucket, nil if there is
// none (or no bucket: written by a release before it).
func embedCost(ctx context.Context, js jetstream.JetStream, model string) (*events.EmbedCost, error) {
	kv, err := js.KeyValue(ctx, events.EmbedCostBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	c, rev, err := bus.ReadEmbedCost(ctx, kv, model)
	if err != nil {
		return nil, fmt.Errorf("status: read %s: %w", events.EmbedCostBucket, err)
	}
	if rev == 0 {
		return nil, nil
	}
	return &c, nil
}

// leftOutRecords counts model's vector records that hold no vectors because
// their files are not prose (events.VectorRecord.LeftOut). It reads every
// record of the model: the keys do not say.
func leftOutRecords(ctx context.Context, kv jetstream.KeyValue, model string) (int, error) {
	w, err := kv.Watch(ctx, events.VectorKeyPrefix(model), jetstream.IgnoreDeletes())
	if err != nil {
		return 0, fmt.Errorf("status: read %s: %w", events.VectorsBucket, err)
	}
	defer w.Stop()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case e, ok := <-w.Updates():
			if !ok || e == nil {
				return n, nil // the records there were when asked
			}
			// Only the flag is decoded: a record's vectors are most of it.
			var rec struct {
				Data struct {
					LeftOut bool `json:"left_out"`
				} `json:"data"`
			}
			if json.Unmarshal(e.Value(), &rec) == nil && rec.Data.LeftOut {
				n++
			}
		}
	}
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

// collectDocs counts cue_docs by repo from its entries' summary headers
// (ingest.ReadAllDocSummaries), reading whole only the entries whose
// headers lack what it counts. Reading every record, as it once did, made
// the NATS server push the whole bucket to it (16 MB for 5,000 files),
// which grew the daemon's memory by tens of MB for each `cue status`. A
// record damaged under intact headers is the edge's to find: it decodes
// every record it applies.
func collectDocs(ctx context.Context, js jetstream.JetStream, r *Report) error {
	if _, err := js.KeyValue(ctx, events.DocsBucket); errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	sums, undecodable, err := ingest.ReadAllDocSummaries(ctx, js)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	r.Undecodable = append(r.Undecodable, undecodable...)
	repos := map[string]*RepoReport{}
	for key, sum := range sums {
		repo, path, err := events.ParseDocKey(key)
		if err != nil {
			r.Undecodable = append(r.Undecodable, key+": "+err.Error())
			continue
		}
		rr := repos[repo]
		if rr == nil {
			rr = &RepoReport{Repo: repo, ByKind: map[string]int{}}
			repos[repo] = rr
		}
		switch {
		case sum.Deleted:
			rr.Deleted++
		case sum.Skip != "":
			rr.Skipped = append(rr.Skipped, PathNote{Path: path, Reason: string(sum.Skip), Detail: sum.SkipDetail})
		default:
			rr.Indexed++
			rr.ByKind[string(sum.Kind)]++
			rr.Tokens += sum.Tokens
			for _, warn := range sum.Warnings {
				rr.Warnings = append(rr.Warnings, PathNote{Path: path, Reason: warn})
			}
		}
	}
	sort.Strings(r.Undecodable)
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

// PrintOptions choose how much Print writes.
type PrintOptions struct {
	// Verbose lists every skipped file, warning and undecodable record;
	// otherwise they are counted by reason with the first few paths.
	Verbose bool
}

// firstFew is how many paths a summary line names.
const firstFew = 3

// Print writes the report for people: the totals, rates and ETAs first,
// then each repo, then the workers.
func (r Report) Print(w io.Writer, opts PrintOptions) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	elided := false
	if f := r.Files; f != nil {
		line := fmt.Sprintf("%s seen, %s indexed, %s skipped, %s pending", humanize.Thousands(f.Seen),
			humanize.Thousands(f.Indexed), humanize.Thousands(f.Skipped), humanize.Thousands(f.Pending))
		switch {
		case f.Listing:
			line += " (a scan is still listing its repository)"
		case f.Scanning:
			line += " (a scan is still publishing)"
		}
		fmt.Fprintf(tw, "files\t%s\n", line)
		fmt.Fprintf(tw, "indexing\t%s\n", rateLine(f.Pending, f.Rate, f.ETASeconds, f.RateWindow, "files"))
	}
	if e := r.Embeddings; e != nil && e.Model == "" && len(e.ByModel) == 0 {
		fmt.Fprintln(tw, "vectors\tnone: no embedding model has written any")
	} else if e != nil {
		model := e.Model
		if model == "" {
			model = "no model chosen among " + strconv.Itoa(len(e.ByModel))
		}
		line := fmt.Sprintf("%s of %s documents (%s)", humanize.Thousands(e.Vectors), humanize.Thousands(e.Docs), humanize.Percent(e.Vectors, e.Docs))
		if e.LeftOut > 0 {
			line += fmt.Sprintf(", %s of them not embedded (not prose: found by keyword search alone; [embed] files = \"all\" embeds them)", humanize.Thousands(e.LeftOut))
		}
		if e.Pending == 0 {
			line += ", none pending"
		} else {
			line += fmt.Sprintf(", %s pending: %s", humanize.Thousands(e.Pending), rateLine(int(e.Pending), e.Rate, e.ETASeconds, e.RateWindow, "documents"))
		}
		fmt.Fprintf(tw, "vectors\t%s (%s)\n", line, model)
		if e.Cost != nil {
			fmt.Fprintf(tw, "embedding cost\t%s\n", costLine(*e.Cost))
		}
	}
	if len(r.Repos) == 0 {
		fmt.Fprintln(tw, "repos\tno documents indexed yet")
	}
	for _, rr := range r.Repos {
		kinds := make([]string, 0, len(rr.ByKind))
		for k, n := range rr.ByKind {
			if k == "" {
				k = "other"
			}
			kinds = append(kinds, k+" "+humanize.Thousands(n))
		}
		sort.Strings(kinds)
		line := humanize.Thousands(rr.Indexed) + " indexed"
		if len(kinds) > 0 {
			line += " (" + strings.Join(kinds, ", ") + ")"
		}
		if rr.Seen > 0 {
			line = humanize.Thousands(rr.Seen) + " seen, " + line
		}
		fmt.Fprintf(tw, "repo %s\t%s, %s tokens, %s skipped, %s with warnings\n",
			rr.Repo, line, humanize.Thousands(rr.Tokens), humanize.Thousands(len(rr.Skipped)), humanize.Thousands(countPaths(rr.Warnings)))
		if opts.Verbose {
			for _, s := range rr.Skipped {
				fmt.Fprintf(tw, "  skipped\t%s\t%s\t%s\n", s.Path, s.Reason, s.Detail)
			}
			for _, s := range rr.Warnings {
				fmt.Fprintf(tw, "  warning\t%s\t%s\n", s.Path, s.Reason)
			}
			continue
		}
		for _, g := range groupNotes(rr.Skipped, func(n PathNote) string { return n.Reason }) {
			fmt.Fprintf(tw, "  skipped\t%s\n", g.line())
			elided = elided || len(g.paths) > firstFew
		}
		for _, g := range groupNotes(rr.Warnings, warningKind) {
			fmt.Fprintf(tw, "  warnings\t%s\n", g.line())
			elided = elided || len(g.paths) > firstFew
		}
	}
	printEdge(tw, r.Edge, r.EdgeUnreached)
	printFiles(tw, r.FileCheck, r.FileCheckSkipped)
	if m := r.Memories; m != nil {
		repos := make([]string, 0, len(m.ByRepo))
		for repo, n := range m.ByRepo {
			repos = append(repos, repo+" "+strconv.Itoa(n))
		}
		sort.Strings(repos)
		byRepo := ""
		if len(repos) > 0 {
			byRepo = " (" + strings.Join(repos, ", ") + ")"
		}
		fmt.Fprintf(tw, "memories\t%d%s, %d transcript batches pending\n", m.Total, byRepo, m.Pending)
		if b := m.Budget; b != nil {
			limit := "no daily cap"
			if b.LimitMicros > 0 {
				limit = fmt.Sprintf("of $%.2f (%.0f%%)", float64(b.LimitMicros)/1e6, 100*float64(b.SpentMicros)/float64(b.LimitMicros))
			}
			fmt.Fprintf(tw, "LLM spend today\t$%.4f %s, %d calls, %d refused by the budget\n", float64(b.SpentMicros)/1e6, limit, b.Calls, b.Refused)
		}
	}
	fmt.Fprintf(tw, "ingest queue\t%s events waiting\n", humanize.Thousands(r.IngestQueue))
	for _, c := range r.Consumers {
		fmt.Fprintf(tw, "consumer %s\t%s pending, %d in flight, %d redelivered\n", c.Name, humanize.Thousands(c.Pending), c.AckPending, c.Redelivered)
	}
	fmt.Fprintf(tw, "dead letters\t%s\n", humanize.Thousands(r.DeadLetters))
	for _, d := range r.RecentDead {
		fmt.Fprintf(tw, "  dead\t#%d %s (source seq %s, %s deliveries)\t%s\n", d.Seq, d.Subject, d.SourceSeq, d.Deliveries, d.Error)
	}
	undecodable := r.Undecodable
	if !opts.Verbose && len(undecodable) > firstFew {
		undecodable, elided = undecodable[:firstFew], true
		fmt.Fprintf(tw, "undecodable records\t%s, the first %d:\n", humanize.Thousands(len(r.Undecodable)), firstFew)
	}
	for _, u := range undecodable {
		fmt.Fprintf(tw, "  undecodable record\t%s\n", u)
	}
	tw.Flush()
	if elided {
		fmt.Fprintln(w, "(cue status --verbose lists every skipped file and warning; --json has everything)")
	}
}

// costLine says what embedding has cost: the CPU time where the model
// ran on this machine's cores, else the time spent waiting on its server.
func costLine(c events.EmbedCost) string {
	line := humanize.Thousands(int(c.Chunks)) + " chunks embedded"
	if c.Texts > c.Chunks {
		// Long chunks are embedded in windows the model can read whole.
		line += " (" + humanize.Thousands(int(c.Texts)) + " windows)"
	}
	if !c.Since.IsZero() {
		line += " since " + c.Since.Local().Format("2006-01-02 15:04")
	}
	if per, ok := c.CPUPer10kChunks(); ok {
		line += fmt.Sprintf(": %s CPU s (%s CPU s per 10,000 chunks)", oneDecimal(c.CPUSeconds), oneDecimal(per))
		if c.MeteredChunks < c.Chunks {
			line += fmt.Sprintf(", %s chunks embedded by a model server, %s s waiting on it", humanize.Thousands(int(c.Chunks-c.MeteredChunks)), oneDecimal(c.CallSeconds))
		}
		return line
	}
	return line + fmt.Sprintf(": %s s waiting on the model, whose CPU time is its server's", oneDecimal(c.CallSeconds))
}

func oneDecimal(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// rateLine says how fast pending items of what go and when they will be
// done.
func rateLine(pending int, rate, eta *float64, window float64, what string) string {
	switch {
	case pending == 0:
		return "caught up"
	case rate == nil:
		return "rate not measured"
	case *rate == 0:
		return fmt.Sprintf("none done in the last %s", humanize.Duration(time.Duration(window*float64(time.Second))))
	}
	line := fmt.Sprintf("%s %s/s over the last %s", strconv.FormatFloat(*rate, 'f', 1, 64), what,
		humanize.Duration(time.Duration(window*float64(time.Second))))
	if eta != nil {
		line += ", ETA " + humanize.Duration(time.Duration(*eta*float64(time.Second)))
	}
	return line
}

// noteGroup is the notes of one reason or kind.
type noteGroup struct {
	key   string
	paths []string
}

// line is "binary 440: a.png, b.png, c.png and 437 more".
func (g noteGroup) line() string {
	shown := g.paths[:min(len(g.paths), firstFew)]
	line := fmt.Sprintf("%s %s: %s", g.key, humanize.Thousands(len(g.paths)), strings.Join(shown, ", "))
	if rest := len(g.paths) - len(shown); rest > 0 {
		line += " and " + humanize.Thousands(rest) + " more"
	}
	return line
}

// groupNotes groups notes by key, the largest group first, each with its
// distinct paths in order.
func groupNotes(notes []PathNote, key func(PathNote) string) []noteGroup {
	byKey := map[string]*noteGroup{}
	var out []*noteGroup
	for _, n := range notes {
		k := key(n)
		g := byKey[k]
		if g == nil {
			g = &noteGroup{key: k}
			byKey[k] = g
			out = append(out, g)
		}
		if len(g.paths) == 0 || g.paths[len(g.paths)-1] != n.Path {
			g.paths = append(g.paths, n.Path)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].paths) > len(out[j].paths) })
	groups := make([]noteGroup, len(out))
	for i, g := range out {
		groups[i] = *g
	}
	return groups
}

// warningKind is what a warning is about: its text before ": " when that
// is a short label ("frontmatter", "task card not read"), else the whole.
func warningKind(n PathNote) string {
	if k, _, ok := strings.Cut(n.Reason, ": "); ok && len(k) <= 40 {
		return k
	}
	return n.Reason
}

func countPaths(notes []PathNote) int {
	seen := map[string]bool{}
	for _, n := range notes {
		seen[n.Path] = true
	}
	return len(seen)
}

// printEdge says whether the edge serves what cue_docs holds.
func printEdge(w io.Writer, a *EdgeAgreement, unreached string) {
	switch {
	case unreached != "":
		fmt.Fprintf(w, "edge\tnot compared with cue_docs: %s\n", unreached)
	case a == nil:
	case a.Moving:
		fmt.Fprintln(w, "edge\tnot compared with cue_docs: indexing kept changing it; run again once caught up")
	case len(a.Disagreeing()) == 0:
		docs := 0
		for _, r := range a.Repos {
			docs += r.Bucket
		}
		fmt.Fprintf(w, "edge\tserves the %s documents cue_docs holds (revision %d)\n", humanize.Thousands(docs), a.Revision)
	default:
		for _, r := range a.Disagreeing() {
			fmt.Fprintf(w, "edge\tERROR repo %s: %s\n", r.Repo, r.Problem())
		}
		fmt.Fprintf(w, "  remedy\t%s\n", EdgeRemedy)
	}
}
