package telemetry

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/tasks"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// StreamHead reads the last sequence of a stream: the head revision of a
// KeyValue bucket when stream is "KV_" + bucket.
func StreamHead(js jetstream.StreamManager, stream string) func(ctx context.Context) (uint64, error) {
	return func(ctx context.Context) (uint64, error) {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return 0, fmt.Errorf("read the head of stream %s: %w", stream, err)
		}
		info := s.CachedInfo()
		if info.State.Msgs == 0 || info.State.NumDeleted == 0 {
			return info.State.LastSeq, nil
		}
		// Deleted messages may be a lost tail: the head is the last one
		// still held, or the lag never closes.
		return bus.LastMessage(ctx, s, info, ">"), nil
	}
}

// EdgeProgress is the progress of an edge: the buckets its materialiser
// follows and, when board is not nil, the task board's CUE_TASKS stream.
// Heads are read through js. The vectors feed, filtered to one model's
// keys, has no head and so no lag (it never gates readiness).
func EdgeProgress(js jetstream.StreamManager, mat *edge.Materialiser, board *tasks.Board) func() []Progress {
	tasksHead := StreamHead(js, events.TasksStream)
	return func() []Progress {
		feeds := mat.Feeds()
		out := make([]Progress, 0, len(feeds)+1)
		for _, f := range feeds {
			p := Progress{Feed: f.Bucket, Applied: f.Revision, LastApplied: f.LastApplied, Replayed: f.Replayed, GatesReady: f.GatesReady}
			if f.Keys == ">" {
				p.Head = StreamHead(js, "KV_"+f.Bucket)
			}
			out = append(out, p)
		}
		if board != nil {
			replayed := false
			select {
			case <-board.Ready():
				replayed = true
			default:
			}
			out = append(out, Progress{Feed: events.TasksStream, Applied: board.Applied(), Replayed: replayed, GatesReady: true, Head: tasksHead})
		}
		return out
	}
}

// RegisterMonitor adds the lag of mon's feeds to the registry: gauges read
// at each scrape from mon's last report.
func (m *Metrics) RegisterMonitor(mon *Monitor) {
	m.Registry.MustRegister(&feedCollector{mon: mon})
}

var (
	readyDesc   = prometheus.NewDesc("cue_ready", "1 once every feed that gates readiness has replayed (what /readyz answers 200 for), else 0.", nil, nil)
	appliedDesc = prometheus.NewDesc("cue_feed_applied_revision", "Last revision (stream sequence) the process applied, by feed.", []string{"feed"}, nil)
	headDesc    = prometheus.NewDesc("cue_feed_head_revision", "Last head revision read from the cluster, by feed; absent until read.", []string{"feed"}, nil)
	lagDesc     = prometheus.NewDesc("cue_feed_lag_revisions", "Revisions the process trails the last head read, by feed: an upper bound on entries still to apply.", []string{"feed"}, nil)
	headAgeDesc = prometheus.NewDesc("cue_feed_head_age_seconds", "Age of the last successful head reading, by feed: it grows while the cluster is unreachable.", []string{"feed"}, nil)
	headErrDesc = prometheus.NewDesc("cue_feed_head_unreadable", "1 while the last attempt to read the feed's head failed, else 0.", []string{"feed"}, nil)
	ageDesc     = prometheus.NewDesc("cue_feed_last_applied_age_seconds", "Seconds since the feed last applied a batch or finished its replay, by feed.", []string{"feed"}, nil)
	replayDesc  = prometheus.NewDesc("cue_feed_replayed", "1 once the feed's initial replay is done, else 0.", []string{"feed"}, nil)
)

// feedCollector turns a Monitor's report into gauges at scrape time.
type feedCollector struct{ mon *Monitor }

func (c *feedCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{readyDesc, appliedDesc, headDesc, lagDesc, headAgeDesc, headErrDesc, ageDesc, replayDesc} {
		ch <- d
	}
}

func (c *feedCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.mon.Report()
	ch <- prometheus.MustNewConstMetric(readyDesc, prometheus.GaugeValue, bool01(r.Ready))
	for _, f := range r.Feeds {
		ch <- prometheus.MustNewConstMetric(appliedDesc, prometheus.GaugeValue, float64(f.Applied), f.Feed)
		ch <- prometheus.MustNewConstMetric(replayDesc, prometheus.GaugeValue, bool01(f.Replayed), f.Feed)
		if f.LastAppliedAgeSeconds != nil {
			ch <- prometheus.MustNewConstMetric(ageDesc, prometheus.GaugeValue, *f.LastAppliedAgeSeconds, f.Feed)
		}
		if f.HeadKnown {
			ch <- prometheus.MustNewConstMetric(headDesc, prometheus.GaugeValue, float64(f.Head), f.Feed)
			ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, float64(f.Behind), f.Feed)
			ch <- prometheus.MustNewConstMetric(headAgeDesc, prometheus.GaugeValue, f.HeadAgeSeconds, f.Feed)
		}
		if f.HeadKnown || f.HeadError != "" {
			ch <- prometheus.MustNewConstMetric(headErrDesc, prometheus.GaugeValue, bool01(f.HeadError != ""), f.Feed)
		}
	}
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// RegisterEdge adds what mat has materialised: documents, memories and
// documents with vectors, read at each scrape.
func (m *Metrics) RegisterEdge(mat *edge.Materialiser) {
	m.Registry.MustRegister(&edgeCollector{mat: mat})
}

var (
	docsDesc       = prometheus.NewDesc("cue_edge_docs", "Documents the edge has materialised (skipped ones included).", nil, nil)
	skippedDesc    = prometheus.NewDesc("cue_edge_docs_skipped", "Materialised documents ingest did not index (too large, binary, unreadable).", nil, nil)
	memoriesDesc   = prometheus.NewDesc("cue_edge_memories", "Memories the edge has materialised.", nil, nil)
	vectorDocsDesc = prometheus.NewDesc("cue_edge_vector_docs", "Documents whose current content has vectors of the edge's model.", nil, nil)
	undecodDesc    = prometheus.NewDesc("cue_edge_undecodable_total", "Entries dropped since start because they did not decode, by feed.", []string{"feed"}, nil)
	damagedDesc    = prometheus.NewDesc("cue_edge_store_damaged", "1 from a read that found the edge's store damaged while it ran until the store is emptied to be rebuilt from cue_docs.", nil, nil)
)

// edgeCollector reads a Materialiser's Status at scrape time.
type edgeCollector struct{ mat *edge.Materialiser }

func (c *edgeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{docsDesc, skippedDesc, memoriesDesc, vectorDocsDesc, undecodDesc, damagedDesc} {
		ch <- d
	}
}

func (c *edgeCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.mat.Status()
	ch <- prometheus.MustNewConstMetric(docsDesc, prometheus.GaugeValue, float64(st.Docs))
	ch <- prometheus.MustNewConstMetric(skippedDesc, prometheus.GaugeValue, float64(st.Skipped))
	ch <- prometheus.MustNewConstMetric(memoriesDesc, prometheus.GaugeValue, float64(st.Memories))
	ch <- prometheus.MustNewConstMetric(vectorDocsDesc, prometheus.GaugeValue, float64(st.VectorDocs))
	ch <- prometheus.MustNewConstMetric(undecodDesc, prometheus.CounterValue, float64(st.Undecodable), events.DocsBucket)
	ch <- prometheus.MustNewConstMetric(undecodDesc, prometheus.CounterValue, float64(st.MemoriesUndecodable), events.MemoriesBucket)
	damaged := 0.0
	if st.StoreDamaged {
		damaged = 1
	}
	ch <- prometheus.MustNewConstMetric(damagedDesc, prometheus.GaugeValue, damaged)
}
