package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/guard"
)

// Outcomes of a tool call besides the code of a *tools.Error.
const (
	OutcomeOK       = "ok"
	OutcomeInternal = "internal"
	// ToolUnknown labels calls of a name that is not a tool, so that
	// arbitrary client input cannot grow the label set.
	ToolUnknown = "unknown"
)

// durationBuckets span a cached read (tens of microseconds) to a slow
// semantic search or scene (seconds).
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics is a process's registry: Go and process collectors, the guard's
// redaction total and the tool-call metrics Instrument records. Register
// more (RegisterMonitor, RegisterEdge) before serving Handler.
type Metrics struct {
	Registry    *prometheus.Registry
	calls       *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
}

// NewMetrics builds a registry of its own: tests and two edges in one
// process never share the global default.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cue_tool_calls_total",
			Help: "Tool calls answered, by tool and outcome (ok, the tool error code such as 429 or 1001, or internal).",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cue_tool_call_duration_seconds",
			Help:    "Latency of tool calls, by tool and outcome.",
			Buckets: durationBuckets,
		}, []string{"tool", "outcome"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cue_tool_rate_limited_total",
			Help: "Tool calls rejected by rate limiting (tool error 429), by tool.",
		}, []string{"tool"}),
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.calls, m.duration, m.rateLimited,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "cue_guard_redactions_total",
			Help: "Secrets the guard redacted in this process: from tool results, and in cue up also from memories the extractor writes.",
		}, func() float64 { return float64(guard.Redactions()) }),
	)
	return m
}

// Instrument returns a Caller that times each call of next and counts it
// by tool and outcome. Wrap the outermost caller the MCP server and the
// query service use, outside rate limiting, so that its 429 rejections
// are counted too.
func (m *Metrics) Instrument(next tools.Caller) tools.Caller {
	return tools.CallerFunc(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		start := time.Now()
		out, err := next.Call(ctx, tool, args)
		took := time.Since(start).Seconds()
		name := tool
		if tools.Lookup(tool) == nil {
			name = ToolUnknown
		}
		outcome := OutcomeOK
		if err != nil {
			outcome = OutcomeInternal
			var te *tools.Error
			if errors.As(err, &te) {
				outcome = strconv.Itoa(te.Code)
				if te.Code == tools.CodeRateLimit {
					m.rateLimited.WithLabelValues(name).Inc()
				}
			}
		}
		m.calls.WithLabelValues(name, outcome).Inc()
		m.duration.WithLabelValues(name, outcome).Observe(took)
		return out, err
	})
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
