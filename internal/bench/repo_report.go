package bench

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report for people.
func (r *RepoReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "cue bench --repo: %d files (%s) copied from %s", r.Repo.Files, byteSize(r.Repo.Bytes), r.Repo.Source)
	if r.Settings.Limit > 0 {
		fmt.Fprintf(w, " (--limit %d of %d)", r.Settings.Limit, r.Repo.SourceFiles)
	}
	fmt.Fprintf(w, "; model %s; %s; %d CPUs, load %.2f → %.2f\n", r.Settings.Model, r.Settings.Daemon, r.Machine.CPUs, r.Machine.LoadStart, r.Machine.LoadEnd)
	if ix := r.Index; ix != nil {
		fmt.Fprintf(w, "searchable  %d files keyword-searchable in %.2f s (records stored in %.2f s): %.1f files/s; %d indexed, %d skipped\n",
			ix.Files, ix.Seconds, ix.StoredSeconds, float64(ix.FilesPerSec), ix.Indexed, ix.Skipped)
	}
	if e := r.Embed; e != nil {
		if e.Complete {
			fmt.Fprintf(w, "embedded    %d documents with %s vectors in %.2f s: %.1f files/s\n", e.Docs, e.Model, e.Seconds, float64(e.FilesPerSec))
		} else {
			fmt.Fprintf(w, "embedded    %d of %d documents with %s vectors when the wait stopped at %.0f s (--embed-timeout): %.1f files/s\n", e.Vectors, e.Docs, e.Model, e.Seconds, float64(e.FilesPerSec))
		}
		if c := e.Cost; c != nil {
			if per, ok := c.CPUPer10kChunks(); ok {
				fmt.Fprintf(w, "            %d chunks embedded in %.1f CPU s: %.1f CPU s per 10,000 chunks\n", c.Chunks, c.CPUSeconds, per)
			} else {
				fmt.Fprintf(w, "            %d chunks embedded, %.1f s waiting on the model's server\n", c.Chunks, c.CallSeconds)
			}
		}
	}
	m := r.Memory
	fmt.Fprintf(w, "memory      peak RSS %s when searchable", rssText(m.PeakRSSSearchable))
	if r.Embed != nil {
		fmt.Fprintf(w, ", %s when embedded", rssText(m.PeakRSSEmbedded))
	}
	fmt.Fprintf(w, ", %s at the end; %.1f CPU s\n", rssText(m.PeakRSS), float64(m.CPUSeconds))
	if d := r.Disk; d != nil {
		fmt.Fprintf(w, "disk        .cuedeck/.cache %s on disk (%s apparent) for %s of indexed source: %.2f×\n",
			byteSize(d.CacheAllocatedBytes), byteSize(d.CacheBytes), byteSize(d.SourceBytes), float64(d.Ratio))
		if len(d.Parts) > 0 {
			fmt.Fprintf(w, "            of which %s\n", diskPartsText(d.Parts, 6))
		}
	}
	c := r.Lifecycle
	fmt.Fprintf(w, "stop        cue down %.2f s\n", c.StopSeconds)
	fmt.Fprintf(w, "restart     cue up --detach %.2f s, ready %.2f s, answering %.2f s; peak RSS %s; cue down %.2f s\n",
		c.RestartDetachSeconds, c.RestartReadySeconds, c.RestartAnswerSeconds, rssText(m.RestartPeakRSS), c.RestartStopSeconds)

	fmt.Fprintf(w, "\nqueries: p50/p99 ms of %d calls each, every read_context call computed (none from the answer cache);\nhits of read_context's %d; src: the query's own file among them\n", r.Settings.QuerySamples, r.Settings.ReadContextLimit)
	var rows bytes.Buffer
	tw := tabwriter.NewWriter(&rows, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tkind\tkeyword p50\tp99\thits\tsrc\thybrid p50\tp99\tsrc\tcue search p50\tp99\trg p50\tp99\trg files\t")
	for _, q := range r.Queries {
		fmt.Fprintf(tw, "%q\t%s\t%.2f\t%.2f\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", q.Text, q.Kind, q.KeywordP50, q.KeywordP99, q.Hits, yes(q.SourceFound),
			msText(q.HybridP50), msText(q.HybridP99), ifMeasured(q.HybridP50, yes(q.HybridSourceFound)),
			msText(q.CueSearchP50), msText(q.CueSearchP99),
			msText(q.RgP50), msText(q.RgP99), ifMeasured(q.RgP50, fmt.Sprint(q.RgFiles)))
	}
	all := func(name string) (string, string) {
		if l := r.Latency[name]; l != nil {
			return msText(l.P50), msText(l.P99)
		}
		return "-", "-"
	}
	k50, k99 := all("read_context_keyword")
	h50, h99 := all("read_context_hybrid")
	c50, c99 := all("cue_search")
	g50, g99 := all("ripgrep")
	fmt.Fprintf(tw, "all queries\t\t%s\t%s\t\t\t%s\t%s\t\t%s\t%s\t%s\t%s\t\t\n", k50, k99, h50, h99, c50, c99, g50, g99)
	k50, k99 = all("read_context_keyword_cached")
	h50, h99 = all("read_context_hybrid_cached")
	fmt.Fprintf(tw, "repeated, from the answer cache\t\t%s\t%s\t\t\t%s\t%s\t\t\t\t\t\t\t\n", k50, k99, h50, h99)
	if err := tw.Flush(); err != nil {
		return err
	}
	// Empty cells at the end of a row leave trailing spaces.
	for _, line := range strings.SplitAfter(rows.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(line, " \n"))
		if strings.HasSuffix(line, "\n") {
			fmt.Fprintln(w)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Figure, s.Reason)
	}
	_, err := fmt.Fprintf(w, "wall time %.1f s\n", r.WallSecond)
	return err
}

func rssText(b int64) string {
	if b == 0 {
		return "n/a"
	}
	return byteSize(b)
}

func msText(m Ms) string {
	if m == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", m)
}

func ifMeasured(m Ms, s string) string {
	if m == 0 {
		return "-"
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// diskPartsText lists the first n parts with their sizes and the rest as
// one sum.
func diskPartsText(parts []DiskPart, n int) string {
	var b strings.Builder
	var rest int64
	for i, p := range parts {
		if i >= n {
			rest += p.AllocatedBytes
			continue
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", p.Name, byteSize(p.AllocatedBytes))
	}
	if rest > 0 {
		fmt.Fprintf(&b, ", %d more %s", len(parts)-n, byteSize(rest))
	}
	return b.String()
}
