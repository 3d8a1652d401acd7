package bench

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/stats"
)

// Ms is a duration in milliseconds, written to JSON with 6 decimals (seed
// 003 §11).
type Ms float64

// MarshalJSON writes the value with six decimals.
func (m Ms) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(m), 'f', 6, 64)), nil
}

// Rate is a throughput per second, written with 3 decimals.
type Rate float64

// MarshalJSON writes the value with three decimals.
func (r Rate) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(r), 'f', 3, 64)), nil
}

// Seconds is a duration in seconds, written with 6 decimals.
type Seconds float64

// MarshalJSON writes the value with six decimals.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(s), 'f', 6, 64)), nil
}

// Ratio is a dimensionless ratio, written with 3 decimals.
type Ratio float64

// MarshalJSON writes the value with three decimals.
func (r Ratio) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(r), 'f', 3, 64)), nil
}

// Latency is a stats.Summary in milliseconds, and where it was measured.
type Latency struct {
	Count int `json:"count"`
	P50   Ms  `json:"p50_ms"`
	P90   Ms  `json:"p90_ms"`
	P95   Ms  `json:"p95_ms"`
	P99   Ms  `json:"p99_ms"`
	Min   Ms  `json:"min_ms"`
	Max   Ms  `json:"max_ms"`
	// Corpus is "main" (the generated corpus, no embeddings) or
	// "embedded" (the smaller corpus with the built-in model's vectors).
	Corpus string `json:"corpus"`
	Note   string `json:"note,omitempty"`
}

func latencyOf(s *stats.LatencySummary, corpus, note string) *Latency {
	sum := s.Summary()
	return &Latency{Count: sum.Count, P50: Ms(sum.P50), P90: Ms(sum.P90), P95: Ms(sum.P95), P99: Ms(sum.P99),
		Min: Ms(sum.Min), Max: Ms(sum.Max), Corpus: corpus, Note: note}
}

// Report is what a run measured; docs/bench.md documents every field.
type Report struct {
	Version    string     `json:"version"`
	StartedAt  time.Time  `json:"started_at"`
	WallSecond Seconds    `json:"wall_seconds"`
	Machine    Machine    `json:"machine"`
	Settings   Settings   `json:"settings"`
	Corpus     CorpusInfo `json:"corpus"`
	Ingest     *Ingest    `json:"ingest,omitempty"`
	// Latency is keyed by figure name (LatencyOrder lists them).
	Latency    map[string]*Latency `json:"latency"`
	Embedding  *Embedding          `json:"embedding,omitempty"`
	Embedded   *EmbeddedCorpus     `json:"embedded_corpus,omitempty"`
	Extraction *Extraction         `json:"extraction,omitempty"`
	Ripgrep    *Ripgrep            `json:"ripgrep,omitempty"`
	// Skipped names each figure not measured, and why.
	Skipped []Skip `json:"skipped,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	// LoadStart and LoadEnd are the one-minute load average when the run
	// began and ended (-1 where unknown): other work on the machine skews
	// every figure.
	LoadStart float64 `json:"load_avg_start"`
	LoadEnd   float64 `json:"load_avg_end"`
}

// Settings are the run's parameters.
type Settings struct {
	Size  string `json:"size"`
	Files int    `json:"files"`
	Seed  uint64 `json:"seed"`
	// Transport is how the tools were called: "nats-query", the NATS
	// query service `cue mcp` uses, through internal/query's client.
	Transport string `json:"transport"`
	Warmup    int    `json:"warmup"`
	Samples   int    `json:"samples"`
	// QuerySamples is the samples per keyword query (read_context keyword
	// and ripgrep alike).
	QuerySamples int    `json:"query_samples"`
	Limit        int    `json:"read_context_limit"`
	EmbedModel   string `json:"main_embed_model"`
	DebounceMs   Ms     `json:"ingest_debounce_ms"`
	RateLimits   string `json:"rate_limits"`
}

// CorpusInfo counts the generated files.
type CorpusInfo struct {
	Root   string         `json:"root,omitempty"`
	Files  int            `json:"files"`
	Bytes  int64          `json:"bytes"`
	ByKind map[string]int `json:"by_kind"`
	Cards  int            `json:"cards"`
	// Queries are the keyword queries of read_context and ripgrep.
	Queries []string `json:"queries"`
}

// Ingest is the time from the daemon's start to every file searchable.
type Ingest struct {
	Files int `json:"files"`
	// StoredSeconds is until the indexer had stored a record of every
	// file; Seconds until each file was found through the tools.
	StoredSeconds Seconds `json:"stored_seconds"`
	Seconds       Seconds `json:"seconds"`
	FilesPerSec   Rate    `json:"files_per_s"`
}

// Embedding is the built-in model's throughput, embedding chunks of the
// corpus directly (internal/embed/builtin).
type Embedding struct {
	Model      string  `json:"model"`
	Chunks     int     `json:"chunks"`
	Batch      int     `json:"batch"`
	Seconds    Seconds `json:"seconds"`
	VectorsPer Rate    `json:"vectors_per_s"`
}

// EmbeddedCorpus is the smaller corpus the semantic modes ran on, and how
// long the daemon took to embed it.
type EmbeddedCorpus struct {
	Files       int     `json:"files"`
	Model       string  `json:"model"`
	Seconds     Seconds `json:"seconds"`
	FilesPerSec Rate    `json:"files_per_s"`
}

// Extraction is the rule path's throughput: transcript batches published
// to the daemon until each has its extraction record stored.
type Extraction struct {
	Path       string  `json:"path"`
	Batches    int     `json:"batches"`
	Seconds    Seconds `json:"seconds"`
	BatchesPer Rate    `json:"batches_per_s"`
}

// Ripgrep compares `rg -l -i -F QUERY ROOT` with read_context keyword for
// the same queries.
type Ripgrep struct {
	Path    string       `json:"path"`
	Version string       `json:"version"`
	Queries []QueryRatio `json:"queries"`
	// MedianRatio is the median of the queries' ratios.
	MedianRatio Ratio `json:"median_ratio"`
}

// QueryRatio is one query's p50 both ways. Ratio is rg_p50 /
// read_context_p50: above 1, read_context answered faster.
type QueryRatio struct {
	Query          string `json:"query"`
	Samples        int    `json:"samples"`
	RgP50          Ms     `json:"rg_p50_ms"`
	ReadContextP50 Ms     `json:"read_context_keyword_p50_ms"`
	Ratio          Ratio  `json:"ratio"`
	RgFiles        int    `json:"rg_files"`
	Hits           int    `json:"read_context_hits"`
}

// Skip is a figure left out.
type Skip struct {
	Figure string `json:"figure"`
	Reason string `json:"reason"`
}

// LatencyOrder lists the latency figures in the order they are printed.
var LatencyOrder = []string{
	"read_context_keyword", "read_context_keyword_embedded", "read_context_semantic", "read_context_hybrid", "read_context_rrf",
	"read_doc", "read_doc_anchor", "list_tasks", "update_task", "get_scene", "hook_round_trip", "freshness",
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "cue bench: %d files (%s, seed %d), tools called over %s on the laptop daemon; %d CPUs, load %.2f → %.2f\n",
		r.Corpus.Files, byteSize(r.Corpus.Bytes), r.Settings.Seed, r.Settings.Transport, r.Machine.CPUs, r.Machine.LoadStart, r.Machine.LoadEnd)
	fmt.Fprintln(tw, "figure\tn\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tmin ms\tmax ms\tcorpus\t")
	for _, name := range LatencyOrder {
		l := r.Latency[name]
		if l == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", name, l.Count, l.P50, l.P90, l.P95, l.P99, l.Min, l.Max, l.Corpus)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if in := r.Ingest; in != nil {
		fmt.Fprintf(w, "ingest        %d files searchable in %.2f s (stored in %.2f s): %.1f files/s\n", in.Files, in.Seconds, in.StoredSeconds, float64(in.FilesPerSec))
	}
	if e := r.Embedded; e != nil {
		fmt.Fprintf(w, "embedded      %d files embedded by %s in %.2f s: %.1f files/s (semantic modes ran on these)\n", e.Files, e.Model, e.Seconds, float64(e.FilesPerSec))
	}
	if e := r.Embedding; e != nil {
		fmt.Fprintf(w, "embedding     %s: %d chunks in %.2f s: %.1f vectors/s\n", e.Model, e.Chunks, e.Seconds, float64(e.VectorsPer))
	}
	if x := r.Extraction; x != nil {
		fmt.Fprintf(w, "extraction    %s path: %d batches in %.2f s: %.1f batches/s\n", x.Path, x.Batches, x.Seconds, float64(x.BatchesPer))
	}
	if rg := r.Ripgrep; rg != nil {
		fmt.Fprintf(w, "\nripgrep (%s) vs read_context keyword, p50 of %d runs each; ratio = rg / read_context\n", rg.Version, r.Settings.QuerySamples)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "query\trg ms\tread_context ms\tratio\trg files\thits\t")
		for _, q := range rg.Queries {
			fmt.Fprintf(tw, "%q\t%.3f\t%.3f\t%.1f\t%d\t%d\t\n", q.Query, q.RgP50, q.ReadContextP50, q.Ratio, q.RgFiles, q.Hits)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "median ratio %.1f\n", rg.MedianRatio)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Figure, s.Reason)
	}
	_, err := fmt.Fprintf(w, "wall time %.1f s\n", r.WallSecond)
	return err
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
