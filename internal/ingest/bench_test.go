package ingest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/ingest"
)

// BenchmarkInitialScan measures the first scan of a repo of 2,000 small
// files: walk, read, hash, publish with acknowledgement and record state,
// against a fresh embedded JetStream each time.
func BenchmarkInitialScan(b *testing.B) {
	const nFiles = 2000
	dir := b.TempDir()
	files := make(map[string]string, nFiles)
	for i := range nFiles {
		files[fmt.Sprintf("pkg%02d/file%04d.md", i%40, i)] = fmt.Sprintf("# File %d\n\nSome text for file %d, as a small doc would have.\n", i, i)
	}
	writeTree(b, dir, files)

	for _, publishers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("publishers=%d", publishers), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				b.StopTimer()
				conn, _ := bustest.Start(b, bus.Settings{})
				svc, err := ingest.New(conn, ingest.Config{
					Repos:      []ingest.RepoConfig{{Name: "bench", Root: dir}},
					StateDir:   b.TempDir(),
					Publishers: publishers,
				}, nil)
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				b.StartTimer()
				began := time.Now()
				go func() { done <- svc.Run(ctx) }()
				select {
				case <-svc.ScanDone():
				case err := <-done:
					b.Fatal(err)
				}
				total += time.Since(began)
				b.StopTimer()
				if st := svc.Stats().Repos[0]; st.Upserted != nFiles {
					b.Fatalf("published %d of %d files", st.Upserted, nFiles)
				}
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(nFiles*b.N)/total.Seconds(), "files/s")
		})
	}
}
