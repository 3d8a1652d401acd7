package edge

import (
	"testing"

	"github.com/cuedeck/cuedeck/pkg/events"
)

const (
	tailSamplingEN = `---
title: Tail sampling processor
---

The tail sampling processor decides whether to keep a trace after all of
its spans have arrived, by policies evaluated on the whole trace, and it
buffers the spans of every trace in memory until it decides.

## Configure the tail sampling processor

Add tail_sampling to the processors of a traces pipeline and list its
policies, each with a name and a type, in the order they are evaluated.

### decision_wait

How long the processor buffers the spans of a trace before it evaluates
the policies: long enough for the slowest service of the trace to report.
`
	tailSamplingJA = `---
title: テールサンプリングプロセッサー
---

## 設定

decision_wait は、ポリシーを評価する前にスパンを待つ時間です。decision_wait を長くするとメモリを使います。
`
)

func originDocs() []events.DocRecord {
	return []events.DocRecord{
		mdRecord("site", "content/en/docs/tail-sampling.md", tailSamplingEN, map[string]any{"title": "Tail sampling processor"}),
		mdRecord("site", "content/ja/docs/tail-sampling.md", tailSamplingJA, map[string]any{"title": "テールサンプリングプロセッサー"}),
		mdRecord("site", "content/en/docs/memory-limiter.md", "# Memory limiter\n\nRefuses data when the heap passes a limit.\n", nil),
		mdRecord("site", "content/en/docs/install.md", "# Install\n\nRun the image.\n", nil),
		mdRecord("site", "content/en/blog/2023/decision-cache.md", "# Faster tail sampling\n\nThe buffers now keep each trace's decision.\n", nil),
		mdRecord("site", "README.md", "# The site\n\nBuild it with Hugo.\n", nil),
		// A repo written in Japanese: its English page is the translation.
		mdRecord("jp", "docs/guide.md", "# ガイド\n\n設定の方法。\n", map[string]any{"lang": "ja"}),
		mdRecord("jp", "docs/setup.md", "# セットアップ\n\n設定する。\n", map[string]any{"lang": "ja"}),
		mdRecord("jp", "docs/guide.en.md", "# Guide\n\nHow to configure it.\n", nil),
	}
}

// A translation that matches as well as its page ranks below it, unless
// the query is in its language.
func TestReadContextPrefersThePageToItsTranslation(t *testing.T) {
	h := newHarness(t)
	rev := h.putAll(originDocs())
	r := h.start("")
	r.wait(rev)

	hits := r.search(map[string]any{"query": "decision_wait", "mode": "keyword"})
	if len(hits) < 2 || hits[0].Path != "content/en/docs/tail-sampling.md" || hits[1].Path != "content/ja/docs/tail-sampling.md" {
		t.Fatalf("decision_wait: %v, want the English page first, then its translation", paths(hits))
	}
	hits = r.search(map[string]any{"query": "decision_wait の設定", "mode": "keyword"})
	if len(hits) == 0 || hits[0].Path != "content/ja/docs/tail-sampling.md" {
		t.Fatalf("a Japanese query: %v, want the Japanese page first", paths(hits))
	}
}

func TestPriorWeighsTranslationsAndPostsUnlessAskedFor(t *testing.T) {
	h := newHarness(t)
	rev := h.putAll(originDocs())
	r := h.start("")
	r.wait(rev)

	key := events.DocKey
	for _, c := range []struct {
		query, repo, path string
		want              float64
	}{
		{"tail sampling", "site", "content/en/docs/tail-sampling.md", 1},
		{"tail sampling", "site", "README.md", 1},
		{"tail sampling", "site", "content/ja/docs/tail-sampling.md", TranslationPrior},
		{"the japanese tail sampling page", "site", "content/ja/docs/tail-sampling.md", 1},
		{"tail sampling translations", "site", "content/ja/docs/tail-sampling.md", 1},
		{"tail sampling", "site", "content/en/blog/2023/decision-cache.md", PostPrior},
		{"tail sampling blog post", "site", "content/en/blog/2023/decision-cache.md", 1},
		// In a Japanese repo, its English page is the translation.
		{"設定", "jp", "docs/guide.md", 1},
		{"設定", "jp", "docs/guide.en.md", TranslationPrior},
		{"configure", "jp", "docs/guide.en.md", 1},
	} {
		if got := r.m.priorFor(c.query, true)(key(c.repo, c.path)); got != c.want {
			t.Errorf("prior of %s/%s for %q = %v, want %v", c.repo, c.path, c.query, got, c.want)
		}
	}

	// The fused modes leave posts unweighed.
	if got := r.m.priorFor("tail sampling", false)(key("site", "content/en/blog/2023/decision-cache.md")); got != 1 {
		t.Errorf("fused prior of a post = %v, want 1", got)
	}

	// Deleting the translations leaves nothing to weigh.
	for _, rec := range originDocs() {
		if rec.Path == "content/ja/docs/tail-sampling.md" || rec.Path == "content/en/blog/2023/decision-cache.md" || rec.Repo == "jp" {
			rev = h.put(tombstone(rec.Repo, rec.Path))
		}
	}
	r.wait(rev)
	if p := r.m.priorFor("tail sampling", true); p != nil {
		t.Fatalf("prior without translations or posts: %v for the page", p(key("site", "content/en/docs/tail-sampling.md")))
	}
}
