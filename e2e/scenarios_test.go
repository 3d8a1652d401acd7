package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/pkg/events"
)

var scenarioRepos = []string{"alpha", "beta", "gamma"}

// markdown is the files read_doc can be asked for: seed 002 limits it to
// .md paths. Code files are checked on cue_docs' writes, and through
// read_context, which finds them.
func markdown(files []File) []File {
	var out []File
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".md") {
			out = append(out, f)
		}
	}
	return out
}

// readDocs asks edge i for every file and returns the version each answer
// names (Hash empty when the edge does not have it yet).
func readDocs(ctx context.Context, c *Cluster, nc *nats.Conn, i int, files []File) ([]Version, error) {
	out := make([]Version, len(files))
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for j := range next {
				f := files[j]
				r, err := c.EdgeCall(ctx, nc, i, "read_doc", map[string]string{"path": f.Repo + "/" + f.Path})
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				// An error answer is named by its message, "!" first, so
				// that it matches no content hash.
				out[j] = Version{Repo: f.Repo, Path: f.Path}
				if r.Error != nil {
					out[j].Hash = "!" + r.Error.Message
				} else {
					var d struct {
						Repo, Path, Hash string
					}
					if err := json.Unmarshal(r.Result, &d); err == nil {
						out[j] = Version{Repo: d.Repo, Path: d.Path, Hash: d.Hash}
					}
				}
			}
		})
	}
	for j := range files {
		next <- j
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return out, err
	default:
		return out, nil
	}
}

// waitEdgeServes polls edge i until it answers read_doc for every file with
// the file's version, asking again only for those it did not have.
func waitEdgeServes(ctx context.Context, t testing.TB, c *Cluster, nc *nats.Conn, i int, files []File, timeout time.Duration) {
	t.Helper()
	remaining := files
	eventually(ctx, t, timeout, fmt.Sprintf("edge%d serves every file", i+1), func() error {
		got, err := readDocs(ctx, c, nc, i, remaining)
		if err != nil {
			return err
		}
		var still []File
		var example string
		for j, f := range remaining {
			if got[j] != f.Version() {
				if example == "" {
					example = fmt.Sprintf("want %s, got %+v", f.Version(), got[j])
				}
				still = append(still, f)
			}
		}
		remaining = still
		if len(still) > 0 {
			return fmt.Errorf("%d files not yet served, e.g. %s", len(still), example)
		}
		return nil
	})
}

// checkEdge runs the set checker on what edge i answers for files, against
// those of files that were acknowledged.
func checkEdge(ctx context.Context, t testing.TB, c *Cluster, nc *nats.Conn, i int, acked *Checker, files []File) Report {
	t.Helper()
	chk := NewChecker()
	for _, f := range files {
		if acked.acked[f.Version()] {
			chk.Ack(f.Version())
		}
	}
	got, err := readDocs(ctx, c, nc, i, files)
	if err != nil {
		t.Fatalf("edge%d read_doc: %v", i+1, err)
	}
	for _, v := range got {
		if v.Hash != "" && v.Hash[0] != '!' {
			chk.Observe(v)
		}
	}
	r := chk.Report()
	t.Logf("checker edge%d read_doc: %s", i+1, r)
	if !r.OK() || len(r.Unexpected) > 0 {
		t.Errorf("edge%d: %s", i+1, r)
	}
	return r
}

func waitWrites(ctx context.Context, t testing.TB, w *DocsWrites, n int, timeout time.Duration) {
	t.Helper()
	eventually(ctx, t, timeout, fmt.Sprintf("%d cue_docs writes", n), func() error {
		if got := w.Total(); got < n {
			return fmt.Errorf("%d written", got)
		}
		return nil
	})
}

// TestClusterIngestEdgesAgree is scenario 1: three repos, 2,000 files in
// all, published as ingest publishes them, are indexed by two indexers on
// a three-node cluster; both edges serve every acknowledged version and
// answer the same searches identically.
func TestClusterIngestEdgesAgree(t *testing.T) {
	s := StartScenario(t, 5*time.Minute, ClusterOptions{Indexers: 2, Edges: 2})
	ctx, c, nc, js, writes, acked := s.Ctx, s.C, s.NC, s.JS, s.Writes, s.Acked

	files := Corpus(1, "b1", scenarioRepos, 2000)
	start := time.Now()
	Publish(ctx, t, js, files, acked)
	published := time.Since(start)
	waitWrites(ctx, t, writes, len(files), 3*time.Minute)
	indexed := time.Since(start)
	docs := markdown(files)
	for i := range c.Edges {
		waitEdgeServes(ctx, t, c, nc, i, docs, time.Minute)
	}
	searchable := time.Since(start)
	t.Logf("%d files: published and acked in %s, indexed in %s, served by both edges in %s (%.0f files/s to searchable)",
		len(files), published.Round(time.Millisecond), indexed.Round(time.Millisecond), searchable.Round(time.Millisecond),
		float64(len(files))/searchable.Seconds())

	// Every acknowledged version was written to cue_docs exactly once.
	s.CheckWrites()
	for i := range c.Edges {
		checkEdge(ctx, t, c, nc, i, acked, docs)
	}

	// The same searches get the same answers from both edges.
	queries := append([]string(nil), words[:16]...)
	for k := 0; k+1 < len(words); k += 5 {
		queries = append(queries, words[k]+" "+words[k+1])
	}
	queries = append(queries, "section falcon harbor", "package handles", "reports")
	compareContexts(ctx, t, c, nc, queries)
	s.Done()
}

// TestClusterIndexerKilledMidStream is scenario 2: while a second batch is
// being indexed, one of the two indexers is killed with SIGKILL and later
// started again. Nothing acknowledged is lost, and nothing is indexed
// twice.
//
// "Indexed twice" is observed on cue_docs' own stream: every write to the
// bucket appends one message, so the watcher, an ordered consumer started
// before any write, sees each write of each version. Every file has one
// version here, so a version seen twice is a second write of the same
// event (a redelivery the indexer did not recognise), and the stream's
// last sequence, which counts writes the watcher could have missed because
// a later write replaced them, must equal the number of acknowledged
// versions.
func TestClusterIndexerKilledMidStream(t *testing.T) {
	s := StartScenario(t, 5*time.Minute, ClusterOptions{Indexers: 2, Edges: 1})
	ctx, c, nc, js, writes, acked := s.Ctx, s.C, s.NC, s.JS, s.Writes, s.Acked

	first := Corpus(2, "b1", scenarioRepos, 500)
	Publish(ctx, t, js, first, acked)
	waitWrites(ctx, t, writes, len(first), 2*time.Minute)

	second := Corpus(3, "b2", scenarioRepos, 1500)
	published := make(chan struct{})
	go func() {
		defer close(published)
		Publish(ctx, t, js, second, acked)
	}()
	// Mid-stream: some of the second batch is written, most is not.
	victim := c.Indexers[0]
	waitWrites(ctx, t, writes, len(first)+150, 2*time.Minute)
	killedAt := writes.Total() - len(first)
	if err := victim.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, events.IngestStream, events.IndexerConsumer)
	if err != nil {
		t.Fatal(err)
	}
	var inFlight int
	if info, err := cons.Info(ctx); err == nil {
		// Delivered and not acknowledged: what the killed indexer held
		// (and what the live one holds) comes back after the ack wait.
		inFlight = info.NumAckPending
	}
	t.Logf("killed %s with SIGKILL after %d of %d second-batch writes; %d messages delivered and unacknowledged", victim.Name, killedAt, len(second), inFlight)
	if killedAt >= len(second) {
		t.Fatalf("the second batch was fully indexed before the kill; the scenario proves nothing")
	}
	<-published
	if t.Failed() {
		return
	}
	restart := time.Now()
	if err := victim.Start(ctx); err != nil {
		t.Fatalf("restart %s: %v", victim.Name, err)
	}
	all := append(append([]File(nil), first...), second...)
	// Messages the killed indexer held come back after the consumer's ack
	// wait (30s); the deadline allows for that.
	waitWrites(ctx, t, writes, len(all), 3*time.Minute)
	t.Logf("all %d writes seen %s after the restart", len(all), time.Since(restart).Round(time.Millisecond))

	// Drained: the indexers' consumer holds nothing, so no redelivery is
	// still to come that could write again.
	eventually(ctx, t, 90*time.Second, "indexer consumer drained", func() error {
		info, err := cons.Info(ctx)
		if err != nil {
			return err
		}
		if info.NumPending > 0 || info.NumAckPending > 0 {
			return fmt.Errorf("pending %d, ack pending %d, redelivered %d", info.NumPending, info.NumAckPending, info.NumRedelivered)
		}
		return nil
	})
	r := s.CheckWrites()
	streamWrites, err := writes.StreamWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cue_docs stream writes: %d", streamWrites)
	if streamWrites != uint64(r.Acknowledged) {
		t.Errorf("cue_docs took %d writes for %d acknowledged versions: some event was indexed twice", streamWrites, r.Acknowledged)
	}
	waitEdgeServes(ctx, t, c, nc, 0, markdown(all), 2*time.Minute)
	checkEdge(ctx, t, c, nc, 0, acked, markdown(all))
	s.Done()
}

// compareContexts asks both edges the same searches and fails on any
// answer that differs, or on searches that find nothing.
func compareContexts(ctx context.Context, t *testing.T, c *Cluster, nc *nats.Conn, queries []string) {
	t.Helper()
	differ := 0
	for _, q := range queries {
		var res [2]json.RawMessage
		for i := range 2 {
			rep, err := c.EdgeCall(ctx, nc, i, "read_context", map[string]any{"query": q, "limit": 10})
			if err != nil || rep.Error != nil {
				t.Fatalf("read_context %q on edge%d: %v %+v", q, i+1, err, rep.Error)
			}
			res[i] = rep.Result
		}
		if !bytes.Equal(res[0], res[1]) {
			differ++
			t.Errorf("read_context %q differs:\nedge1 %s\nedge2 %s", q, res[0], res[1])
		}
		if bytes.Equal(res[0], []byte("[]")) || bytes.Equal(res[0], []byte("null")) {
			t.Errorf("read_context %q found nothing: the comparison proves little", q)
		}
	}
	t.Logf("read_context: %d queries, %d answered differently", len(queries), differ)
}

// writeRepos writes files under one directory per repo, readable by the
// images' user, and returns repo name to directory.
func writeRepos(t *testing.T, root string, files []File) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, f := range files {
		dir := filepath.Join(root, f.Repo)
		dirs[f.Repo] = dir
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.Content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range dirs {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// TestClusterIngestContainer runs the real ingest container on three
// mounted repos: its first scan and a later edit of some files reach the
// edge, every version on disk written to cue_docs once. "Acknowledged"
// here is what was on disk for ingest to publish.
func TestClusterIngestContainer(t *testing.T) {
	files := Corpus(4, "b1", scenarioRepos, 300)
	root := t.TempDir()
	dirs := writeRepos(t, root, files)
	// The watcher reads cue_docs' stream from its start: writes made
	// before it starts are still there, each key having one.
	s := StartScenario(t, 4*time.Minute, ClusterOptions{Indexers: 1, Edges: 1, Repos: dirs})
	ctx, c, nc, writes, acked := s.Ctx, s.C, s.NC, s.Writes, s.Acked
	for _, f := range files {
		acked.Ack(f.Version())
	}
	waitWrites(ctx, t, writes, len(files), 2*time.Minute)
	t.Logf("first scan of %d files indexed %s after start", len(files), s.Elapsed())

	// Edit every tenth markdown file: ingest's watcher publishes the new
	// versions.
	var edited []File
	for i, f := range markdown(files) {
		if i%10 == 0 {
			f.Content += "\n\nEdited: " + words[i%len(words)] + "."
			edited = append(edited, f)
		}
	}
	writeRepos(t, root, edited)
	for _, f := range edited {
		acked.Ack(f.Version())
	}
	waitWrites(ctx, t, writes, len(files)+len(edited), 2*time.Minute)
	latest := map[string]File{}
	for _, f := range append(append([]File(nil), files...), edited...) {
		latest[f.Repo+"/"+f.Path] = f
	}
	var want []File
	for _, f := range latest {
		want = append(want, f)
	}
	waitEdgeServes(ctx, t, c, nc, 0, markdown(want), time.Minute)

	s.CheckWrites()
	checkEdge(ctx, t, c, nc, 0, acked, markdown(want))
	t.Logf("%d files and %d edits through the ingest container", len(files), len(edited))
	s.Done()
}
