package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bench"
)

// writeTinyRepo writes a small Go repository with the cases ingest's
// rules decide: a nested .gitignore, vendor/ and node_modules/ (default
// excludes), a binary file (published as a skip) and doc comments to
// derive queries from. It returns the files ingest will publish.
func writeTinyRepo(t *testing.T, root string) int {
	t.Helper()
	publish := 0
	put := func(rel, content string, published bool) {
		writeFile(t, root, rel, content)
		if published {
			publish++
		}
	}
	put("README.md", "# Ledger\n\n## Reconciling invoices\n\nHow the monthly ledger reconciles invoices.\n", true)
	put(".gitignore", "/build/\n*.tmp\n", true)
	put("build/out.go", "package out\n", false)
	put("scratch.tmp", "scratch\n", false)
	put("vendor/lib/lib.go", "package lib\n", false)
	put("web/node_modules/x/index.js", "module.exports = 1\n", false)
	put("internal/.gitignore", "generated_*.go\n", true)
	put("internal/generated_tables.go", "package internal\n", false)
	put("assets/logo.bin", "\x00\x01\x02binary\x00", true)
	for i := range 8 {
		put(fmt.Sprintf("internal/ledger/part%d.go", i), fmt.Sprintf(`package ledger

// ReconcileInvoices%d matches the period's invoices against payments received.
func ReconcileInvoices%d(period string) error { return nil }

// SettlementWindow%d holds the days a payment may arrive after its invoice.
type SettlementWindow%d struct{ Days int }
`, i, i, i, i), true)
	}
	return publish
}

// TestBenchRepoReportsEveryFigure runs `cue bench --repo` through the
// front on a tiny generated repository with no embedding model, and
// checks the report's figures are there and consistent. No speed is
// asserted.
func TestBenchRepoReportsEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon twice")
	}
	src := t.TempDir()
	publish := writeTinyRepo(t, src)
	out := t.TempDir()
	cmd := exec.Command(bin("cue"), "bench", "--repo", src, "--model", "none", "--queries", "4", "--json", "-", "--out", out, "--index-timeout", "3m")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("cue bench --repo: %v\n%s", err, stderr.String())
	}
	var rep bench.RepoReport
	if err := json.Unmarshal(stdout, &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout)
	}
	for _, want := range []string{"bench: index to keyword-searchable", "bench: cue down", "searchable ", "restart ", "all queries"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if rep.Repo.Source != src || rep.Repo.Files != publish || rep.Repo.SourceFiles != publish || !rep.Repo.GitInit && hasGit() {
		t.Errorf("repo: %+v, want %d files copied from %s", rep.Repo, publish, src)
	}
	if rep.Settings.Model != "none" || rep.Settings.ModelID != "" || rep.Settings.Transport != "nats-query" || rep.Settings.QuerySamples < 30 {
		t.Errorf("settings: %+v", rep.Settings)
	}
	// The copy is a workspace: cue init's .gitignore line is in the
	// copied .gitignore, which ingest publishes; the binary is skipped.
	ix := rep.Index
	if ix == nil || ix.Files != publish || ix.Indexed != publish-1 || ix.Skipped != 1 || ix.Unexpected != 0 ||
		ix.EdgeDocs != ix.Files || ix.EdgeSkipped != ix.Skipped || ix.Seconds <= 0 || ix.StoredSeconds > ix.Seconds || ix.FilesPerSec <= 0 || ix.Tokens <= 0 {
		t.Errorf("index: %+v, want %d files, one skipped", ix, publish)
	}
	if rep.Embed != nil || !skippedRepo(rep, "embed", "--model none") || !skippedRepo(rep, "read_context_hybrid", "--model none") {
		t.Errorf("with --model none: embed %+v, skipped %+v", rep.Embed, rep.Skipped)
	}
	m := rep.Memory
	if runtime.GOOS == "linux" && (m.PeakRSSSearchable <= 0 || m.PeakRSS < m.PeakRSSSearchable || m.RestartPeakRSS <= 0) {
		t.Errorf("memory: %+v", m)
	}
	if m.CPUSeconds <= 0 {
		t.Errorf("cpu: %+v", m)
	}
	if d := rep.Disk; d == nil || d.CacheBytes <= 0 || d.CacheAllocatedBytes <= 0 || d.SourceBytes <= 0 || d.Ratio <= 0 {
		t.Errorf("disk: %+v", rep.Disk)
	} else {
		var sum int64
		names := map[string]bool{}
		for _, p := range d.Parts {
			sum += p.AllocatedBytes
			names[p.Name] = true
		}
		if sum != d.CacheAllocatedBytes || !names["KV_cue_docs"] || !names["state/edge"] {
			t.Errorf("disk parts %+v: sum %d of %d, want KV_cue_docs and state/edge among them", d.Parts, sum, d.CacheAllocatedBytes)
		}
	}
	c := rep.Lifecycle
	if c.StopSeconds <= 0 || c.RestartDetachSeconds <= 0 || c.RestartReadySeconds < c.RestartDetachSeconds ||
		c.RestartAnswerSeconds < c.RestartReadySeconds || c.RestartStopSeconds <= 0 {
		t.Errorf("lifecycle: %+v", c)
	}
	if len(rep.Queries) != 4 {
		t.Fatalf("queries: %+v", rep.Queries)
	}
	_, rgErr := exec.LookPath("rg")
	for _, q := range rep.Queries {
		if q.Source == "" || (q.Kind != bench.QueryIdentifier && q.Kind != bench.QueryPhrase) {
			t.Errorf("query %+v", q)
		}
		content, err := os.ReadFile(src + "/" + q.Source)
		if err != nil || !strings.Contains(string(content), q.Text) {
			t.Errorf("query %q is not in its source %s (%v)", q.Text, q.Source, err)
		}
		// Each query's own file has it, and the index holds every file.
		if q.KeywordP50 <= 0 || q.KeywordP50 > q.KeywordP99 || q.Hits == 0 || !q.SourceFound || q.HybridP50 != 0 {
			t.Errorf("query timings %+v", q)
		}
		if rgErr == nil && (q.RgP50 <= 0 || q.RgFiles == 0) {
			t.Errorf("ripgrep on %+v", q)
		}
	}
	for _, name := range []string{"read_context_keyword", "read_context_keyword_cached"} {
		l := rep.Latency[name]
		if l == nil || l.Count != 4*rep.Settings.QuerySamples || l.Min <= 0 || l.P50 > l.P99 {
			t.Errorf("%s: %+v", name, l)
		}
	}
	if l := rep.Latency["read_context_keyword"]; l != nil && strings.Contains(l.Note, "hit it") {
		t.Errorf("calls meant to miss the answer cache hit it: %s", l.Note)
	}
	if rgErr != nil && (rep.Ripgrep != nil || !skippedRepo(rep, "ripgrep", "apt-get install ripgrep")) {
		t.Errorf("without rg: %+v %+v", rep.Ripgrep, rep.Skipped)
	}
	// Without --keep the copy is gone; nothing runs on it any more.
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 1 || entries[0].Name() != "up.log" {
		t.Errorf("left in --out: %v %v", entries, err)
	}
}

func hasGit() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

func skippedRepo(rep bench.RepoReport, figure, reason string) bool {
	for _, s := range rep.Skipped {
		if s.Figure == figure && strings.Contains(s.Reason, reason) {
			return true
		}
	}
	return false
}

func TestBenchRepoBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--repo", dir, "--size", "1k"}, "--size is for the generated corpus"},
		{[]string{"--repo", dir, "--savings"}, "--savings is for the generated corpus"},
		{[]string{"--size", "1k", "--limit", "5"}, "--limit goes with --repo DIR"},
		{[]string{"--size", "1k", "--model", "none"}, "--model goes with --repo DIR"},
		{[]string{"--repo", dir + "/missing"}, "not a directory"},
		{[]string{"--repo", dir, "--limit", "-1"}, "--limit -1"},
		{[]string{"--repo", dir, "--queries", "0"}, "--queries 0"},
		{[]string{"--repo", dir, "--embed-timeout", "-1m"}, "--embed-timeout -1m0s"},
		{[]string{"--repo", dir, "--model", "bogus"}, "--model"},
		{[]string{"--repo", dir, "--seed", "x"}, `--seed "x"`},
		{[]string{"--repo", dir, "--log-level", "loud"}, "use debug, info, warn or error"},
		{[]string{"--repo", dir, "--json", "/nonexistent-dir/report.json"}, "--json"},
	} {
		err := cmdBench(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cue bench %v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}
