package transcripts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
)

// BenchmarkTail measures lines from append to acknowledged publish: each
// iteration appends 10,000 Claude Code lines (about 300 bytes each) to a
// session and waits until the tailer has published them all.
func BenchmarkTail(b *testing.B) {
	for _, durable := range []bool{false, true} {
		b.Run(fmt.Sprintf("fsync=%v", durable), func(b *testing.B) {
			start := bustest.Start
			if durable {
				start = bustest.StartDurable
			}
			conn, _ := start(b, bus.Settings{})
			root := b.TempDir()
			claude, repo := filepath.Join(root, "claude"), filepath.Join(root, "app")
			path := filepath.Join(claude, "p", "bench.jsonl")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			tl, err := New(conn, Config{
				Repos: []RepoRoot{{Name: "app", Root: repo}}, ClaudeDirs: []string{claude},
				StateDir: filepath.Join(root, "state"), FlushInterval: time.Millisecond, PollInterval: time.Second,
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tl.Run(ctx) }()
			defer func() { cancel(); <-done }()

			const n = 10_000
			var chunk strings.Builder
			for i := range n {
				chunk.WriteString(ccLine(repo, "bench", fmt.Sprintf("line %d %s", i, strings.Repeat("x", 150))))
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ResetTimer()
			var want int64
			for b.Loop() {
				if _, err := f.WriteString(chunk.String()); err != nil {
					b.Fatal(err)
				}
				want += n
				bustest.Eventually(b, time.Minute, "published", func() bool { return tl.Stats().Lines >= want })
			}
			b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "lines/s")
		})
	}
}
