package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// BenchmarkReadContextWhileEmbedding times keyword read_context calls,
// each a query not asked before, while the daemon embeds a repository of
// prose with the built-in model, for each share of the cores embedding may
// take, beside the same calls with no model at all. A call goes the way an
// agent's does (nats-query into the daemon, which counts it as foreground
// work). Calls come 150 ms apart, as an agent's do, longer than the quiet
// period after which embedding resumes: a query arrives while embedding
// runs, not in a burst that keeps it paused.
//
//	go test -run '^$' -bench ReadContextWhileEmbedding -benchtime 60x ./internal/daemon
func BenchmarkReadContextWhileEmbedding(b *testing.B) {
	root := b.TempDir()
	const files = 400
	words := strings.Fields("anchor ballast cargo dock engine ferry gauge harbour inlet jetty keel ledger mooring nautical offshore pilot quay rudder sextant tide vessel wharf yard zenith")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range files {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Notes %d\n\n", i)
		for s := range 6 {
			fmt.Fprintf(&sb, "## Section %d of %d\n\n", s, i)
			for range 120 {
				sb.WriteString(words[rng.IntN(len(words))])
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "marker%dx%d\n\n", i, s)
		}
		write(b, root, fmt.Sprintf("docs/n%03d.md", i), sb.String())
	}
	for _, run := range []struct {
		name  string
		model string
		cores int
	}{{"model=none", "none", 0}, {"embedding/cores=1", "builtin", 1}, {"embedding/cores=2", "builtin", 2}} {
		b.Run(run.name, func(b *testing.B) {
			n := startNode(b, root, func(c *workspace.Config) {
				c.Embed.Model, c.Embed.Cores = run.model, run.cores
			})
			b.Cleanup(func() { n.stop() })
			bustest.Eventually(b, 2*time.Minute, "every file keyword-searchable", func() bool {
				return n.finds(b, fmt.Sprintf("marker%dx5", files-1), fmt.Sprintf("docs/n%03d.md", files-1))
			})
			embedded := func() int {
				rep, err := status.CollectWith(context.Background(), n.conn.JS, status.Options{EmbedModel: "builtin:use-lite"})
				if err != nil || rep.Embeddings == nil {
					return 0
				}
				return rep.Embeddings.Vectors
			}
			before, start := embedded(), time.Now()
			var lat []time.Duration
			b.ResetTimer()
			for i := range b.N {
				q := fmt.Sprintf("marker%dx%d", (i*7)%files, i%6)
				args, _ := json.Marshal(tools.ReadContextArgs{Query: q, Limit: 10, Mode: "keyword"})
				t0 := time.Now()
				if _, err := n.caller.Call(context.Background(), tools.ReadContext, args); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				time.Sleep(150 * time.Millisecond)
			}
			b.StopTimer()
			after := embedded()
			if run.model != "none" && after >= files {
				b.Logf("every file was embedded before the calls ended: some calls met no embedding")
			}
			reportLatency(b, lat)
			b.ReportMetric(float64(after-before)/time.Since(start).Seconds(), "files-embedded/s")
		})
	}
}
