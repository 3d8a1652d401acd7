package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuedeck/cuedeck/internal/edge"
)

// RegisterEdgeCache adds the edge's answer cache, by level (L1 to L4): hits,
// misses, hit ratio, evictions by reason, entries and bytes, with the cap
// and the peak, read at each scrape. An edge without a cache adds nothing.
func (m *Metrics) RegisterEdgeCache(e *edge.Edge) {
	if _, ok := e.CacheStats(); !ok {
		return
	}
	m.Registry.MustRegister(&cacheCollector{e: e})
}

var (
	cacheHitsDesc    = prometheus.NewDesc("cue_edge_cache_hits_total", "Tool calls the edge answered from its cache, by level.", []string{"level"}, nil)
	cacheMissesDesc  = prometheus.NewDesc("cue_edge_cache_misses_total", "Cache lookups that found no answer (computed, then cached), by level.", []string{"level"}, nil)
	cacheRatioDesc   = prometheus.NewDesc("cue_edge_cache_hit_ratio", "Hits over lookups since start, by level; 0 before any lookup.", []string{"level"}, nil)
	cacheEvictDesc   = prometheus.NewDesc("cue_edge_cache_evictions_total", "Entries dropped, by level and reason: cap (least recently used, to stay under the cap), idle (unread for the idle time), invalidated (their document or board changed).", []string{"level", "reason"}, nil)
	cacheEntriesDesc = prometheus.NewDesc("cue_edge_cache_entries", "Entries held, by level.", []string{"level"}, nil)
	cacheBytesDesc   = prometheus.NewDesc("cue_edge_cache_bytes", "Bytes held (keys, values and per-entry bookkeeping), by level.", []string{"level"}, nil)
	cacheMaxDesc     = prometheus.NewDesc("cue_edge_cache_max_bytes", "The cache's cap across levels.", nil, nil)
	cachePeakDesc    = prometheus.NewDesc("cue_edge_cache_peak_bytes", "The most bytes the cache has held at once since start.", nil, nil)
)

// cacheCollector reads an Edge's CacheStats at scrape time.
type cacheCollector struct{ e *edge.Edge }

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cacheHitsDesc, cacheMissesDesc, cacheRatioDesc, cacheEvictDesc, cacheEntriesDesc, cacheBytesDesc, cacheMaxDesc, cachePeakDesc} {
		ch <- d
	}
}

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.e.CacheStats()
	if !ok {
		return
	}
	for _, l := range st.Levels {
		name := l.Level.String()
		ch <- prometheus.MustNewConstMetric(cacheHitsDesc, prometheus.CounterValue, float64(l.Hits), name)
		ch <- prometheus.MustNewConstMetric(cacheMissesDesc, prometheus.CounterValue, float64(l.Misses), name)
		ch <- prometheus.MustNewConstMetric(cacheRatioDesc, prometheus.GaugeValue, l.HitRate(), name)
		ch <- prometheus.MustNewConstMetric(cacheEvictDesc, prometheus.CounterValue, float64(l.Evicted), name, "cap")
		ch <- prometheus.MustNewConstMetric(cacheEvictDesc, prometheus.CounterValue, float64(l.Expired), name, "idle")
		ch <- prometheus.MustNewConstMetric(cacheEvictDesc, prometheus.CounterValue, float64(l.Invalidated), name, "invalidated")
		ch <- prometheus.MustNewConstMetric(cacheEntriesDesc, prometheus.GaugeValue, float64(l.Entries), name)
		ch <- prometheus.MustNewConstMetric(cacheBytesDesc, prometheus.GaugeValue, float64(l.Bytes), name)
	}
	ch <- prometheus.MustNewConstMetric(cacheMaxDesc, prometheus.GaugeValue, float64(st.MaxBytes))
	ch <- prometheus.MustNewConstMetric(cachePeakDesc, prometheus.GaugeValue, float64(st.PeakBytes))
}
