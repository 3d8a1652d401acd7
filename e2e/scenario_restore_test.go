package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestClusterDocsBucketRecreated: the cluster loses cue_docs while the
// team's roles run (a NATS store lost, a restore onto a new cluster) and
// the bucket is recreated empty, with its old configuration. Files are
// edited meanwhile.
//
// Each edge must stop serving the lost bucket (its store is ahead of the
// new incarnation) and, restarted by Docker as compose restarts it, rebuild
// from the new one; ingest, told by the server that the bucket was
// created again, compares the files with it once it settles and publishes
// again what it lost (its periodic comparison, every 10 minutes, is too
// late for this test); in the end the recreated bucket holds every file's current
// version once, and both edges serve exactly that.
func TestClusterDocsBucketRecreated(t *testing.T) {
	files := Corpus(11, "b1", scenarioRepos, 300)
	root := t.TempDir()
	dirs := writeRepos(t, root, files)
	s := StartScenario(t, 6*time.Minute, ClusterOptions{Indexers: 1, Edges: 2, Repos: dirs, EdgeRestart: true})
	ctx, c, nc, js := s.Ctx, s.C, s.NC, s.JS
	for _, f := range files {
		s.Acked.Ack(f.Version())
	}
	waitWrites(ctx, t, s.Writes, len(files), 2*time.Minute)
	for i := range c.Edges {
		waitEdgeServes(ctx, t, c, nc, i, markdown(files), 2*time.Minute)
	}
	s.CheckWrites()
	t.Logf("%d files indexed and served by both edges %s after the start", len(files), s.Elapsed())

	stream, err := js.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	if err := js.DeleteStream(ctx, cfg.Name); err != nil {
		t.Fatalf("delete %s: %v", cfg.Name, err)
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatalf("recreate %s: %v", cfg.Name, err)
	}
	recreated := time.Now()
	writes := WatchDocsWrites(ctx, t, js)
	t.Logf("%s (last sequence %d) deleted and recreated empty", cfg.Name, info.State.LastSeq)

	// Edits while the bucket is being refilled reach it at their new
	// version.
	var edited []File
	for i, f := range markdown(files) {
		if i%10 == 0 {
			f.Content += "\n\nAfter the restore: " + words[i%len(words)] + "."
			edited = append(edited, f)
		}
	}
	writeRepos(t, root, edited)
	latest := map[string]File{}
	for _, f := range append(append([]File(nil), files...), edited...) {
		latest[f.Repo+"/"+f.Path] = f
	}
	want := make([]File, 0, len(latest))
	chk := NewChecker()
	for _, f := range latest {
		want = append(want, f)
		chk.Ack(f.Version())
	}
	waitWrites(ctx, t, writes, len(want), 3*time.Minute)
	refilled := time.Since(recreated)
	for i := range c.Edges {
		waitEdgeServes(ctx, t, c, nc, i, markdown(want), 3*time.Minute)
	}
	served := time.Since(recreated)
	writes.ObserveInto(chk)
	r := chk.Report()
	t.Logf("checker recreated cue_docs writes: %s", r)
	if !r.OK() || len(r.Unexpected) > 0 {
		t.Errorf("recreated cue_docs writes: %s", r)
	}
	for i, n := range c.Edges {
		checkEdge(ctx, t, c, nc, i, chk, markdown(want))
		waitReplayedInPlace(ctx, t, c, n)
	}
	republished := ""
	for _, l := range strings.Split(containerLog(ctx, c.Ingest), "\n") {
		if strings.Contains(l, "compared the state with cue_docs") && !strings.Contains(l, " republish=0 ") {
			republished = l[max(strings.Index(l, "time="), 0):]
			break
		}
	}
	if republished == "" {
		t.Errorf("ingest never found files to publish again: the bucket was refilled some other way")
	}
	t.Logf("ingest: %s", republished)
	t.Logf("after the recreation: %d files back in cue_docs in %s, served by both edges in %s", len(want), refilled.Round(time.Millisecond), served.Round(time.Millisecond))
	s.Done()
}
