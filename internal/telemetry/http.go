package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Paths of the operations endpoints and of MCP.
const (
	PathHealth  = "/healthz"
	PathReady   = "/readyz"
	PathMetrics = "/metrics"
	PathMCP     = "/mcp"
)

// Mux serves mcp at /mcp beside the operations endpoints:
//
//   - /healthz answers 200 "ok" while the process serves HTTP at all.
//   - /readyz answers mon's Report as JSON: 503 until every feed that gates
//     readiness has replayed, 200 afterwards, even while lagging (the body
//     says which feed trails its head and by how much, or that the head
//     cannot be read): a cut-off edge still answers from its local copy,
//     which beats no answer, and /metrics carries the lag for alerts.
//   - /metrics serves metrics' registry.
//
// A nil mcp leaves /mcp unmounted; a nil mon makes /readyz answer like
// /healthz; a nil metrics leaves /metrics unmounted.
func Mux(mcp http.Handler, metrics *Metrics, mon *Monitor) *http.ServeMux {
	mux := http.NewServeMux()
	if mcp != nil {
		mux.Handle(PathMCP, mcp)
	}
	mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET "+PathReady, func(w http.ResponseWriter, _ *http.Request) {
		r := Report{Ready: true, Feeds: []FeedReport{}}
		if mon != nil {
			r = mon.Report()
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !r.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(r)
	})
	if metrics != nil {
		mux.Handle("GET "+PathMetrics, metrics.Handler())
	}
	return mux
}

// FetchReport asks the server whose MCP endpoint is mcpURL for /readyz:
// its Report, and whether it answered ready (200).
func FetchReport(ctx context.Context, mcpURL string) (Report, bool, error) {
	var r Report
	url := strings.TrimSuffix(mcpURL, PathMCP) + PathReady
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return r, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return r, false, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return r, false, fmt.Errorf("telemetry: %s: %w", url, err)
	}
	return r, resp.StatusCode == http.StatusOK, nil
}

// Applied is the revision the report's feed has applied, 0 when it has no
// such feed.
func (r Report) Applied(feed string) uint64 {
	for _, f := range r.Feeds {
		if f.Feed == feed {
			return f.Applied
		}
	}
	return 0
}
