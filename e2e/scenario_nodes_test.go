package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestClusterNATSNodeStopped is scenario 3: one NATS node of three, the
// leader of CUE_INGEST, is stopped gracefully while a steady publish and a
// loop of queries against both edges run. Every acknowledged event is
// indexed once, the edges keep answering (correctly) while the node is
// down, and the node, started again, catches up: every stream's replicas
// are current, and the node's own copy of each stream holds what the two
// survivors held while it was away.
//
// Publishes that get no acknowledgement while the stream elects a new
// leader are sent again with the same Nats-Msg-Id, as ingest does: the
// first attempt may have been stored, and the duplicate window drops the
// copy. A version counts as acknowledged only once JetStream acked it.
func TestClusterNATSNodeStopped(t *testing.T) {
	s := StartScenario(t, 10*time.Minute, ClusterOptions{Indexers: 2, Edges: 2})
	ctx, c, nc, js, writes, acked := s.Ctx, s.C, s.NC, s.JS, s.Writes, s.Acked

	// A first batch both edges serve: the query loop asks for these and
	// knows the right answer.
	warm := Corpus(5, "b1", scenarioRepos, 300)
	s.Ingest(warm, 2*time.Minute)
	warmDocs := markdown(warm)

	queries := newQueryLoop(ctx, t, c, len(c.Edges))
	qctx, stopQueries := context.WithCancel(ctx)
	queriesDone := make(chan struct{})
	go func() {
		defer close(queriesDone)
		queries.run(qctx, c, warmDocs)
	}()
	defer func() { stopQueries(); <-queriesDone }()

	main := Corpus(6, "b2", scenarioRepos, 1200)
	var ackMu sync.Mutex
	var mainAcked atomic.Int64
	ackOne := func(f File) {
		ackMu.Lock()
		acked.Ack(f.Version())
		ackMu.Unlock()
		mainAcked.Add(1)
	}
	type published struct {
		stats publishStats
		err   error
	}
	pubDone := make(chan published, 1)
	pubStart := time.Now()
	go func() {
		st, err := publishSteady(ctx, js, main, 40, 3*time.Minute, ackOne)
		pubDone <- published{st, err}
	}()

	// Mid-publish: stop the node that leads CUE_INGEST, where every
	// publish is acknowledged.
	eventually(ctx, t, 2*time.Minute, "200 of the second batch acknowledged", func() error {
		if n := mainAcked.Load(); n < 200 {
			return fmt.Errorf("%d acknowledged", n)
		}
		return nil
	})
	leaders := clusterLeaders(ctx, t, c, js)
	victim := nodeNamed(c, leaders[events.IngestStream])
	if victim == nil {
		t.Fatalf("no NATS node leads %s: %v", events.IngestStream, leaders)
	}
	var roles []string
	for what, name := range leaders {
		if name == victim.Name {
			roles = append(roles, what)
		}
	}
	slices.Sort(roles)
	t.Logf("leaders: %v; stopping %s, leader of %s, after %d of %d second-batch publishes were acknowledged",
		leaders, victim.Name, strings.Join(roles, ", "), mainAcked.Load(), len(main))
	if clients, err := clientsOf(ctx, c, victim); err == nil {
		t.Logf("clients of %s: %s", victim.Name, clients)
	} else {
		t.Logf("clients of %s: %v", victim.Name, err)
	}
	queries.setPhase(phaseDown)
	stopStart := time.Now()
	if err := victim.Stop(ctx); err != nil {
		t.Fatalf("stop %s: %v", victim.Name, err)
	}
	ackedAtStop := mainAcked.Load()
	t.Logf("%s stopped in %s; %d of %d second-batch publishes acknowledged by then",
		victim.Name, time.Since(stopStart).Round(time.Millisecond), ackedAtStop, len(main))
	if ackedAtStop >= int64(len(main)) {
		t.Fatalf("the second batch was acknowledged before the node stopped; the scenario proves nothing")
	}
	eventually(ctx, t, time.Minute, "a new "+events.IngestStream+" leader", func() error {
		l := streamLeader(ctx, js, events.IngestStream)
		if l == "" || l == victim.Name {
			return fmt.Errorf("leader %q", l)
		}
		return nil
	})
	t.Logf("%s has a new leader, %s, %s after the stop began", events.IngestStream,
		streamLeader(ctx, js, events.IngestStream), time.Since(stopStart).Round(time.Millisecond))

	pub := <-pubDone
	if pub.err != nil {
		t.Fatalf("publish: %v", pub.err)
	}
	t.Logf("second batch: %d files acknowledged in %s; %s", len(main), time.Since(pubStart).Round(time.Millisecond), pub.stats)

	// The two survivors index everything before the node comes back, so
	// what it must catch up on is fixed.
	all := append(append([]File(nil), warm...), main...)
	waitWrites(ctx, t, writes, len(all), 3*time.Minute)
	waitConsumerDrained(ctx, t, js)
	before := streamStates(ctx, t, js)
	t.Logf("indexed by the two survivors %s after the stop; %s: %s", time.Since(stopStart).Round(time.Millisecond),
		"KV_"+events.DocsBucket, before["KV_"+events.DocsBucket])

	queries.setPhase(phaseRejoined)
	restart := time.Now()
	if err := victim.Start(ctx); err != nil {
		t.Fatalf("start %s: %v", victim.Name, err)
	}
	eventually(ctx, t, 3*time.Minute, "every stream's replicas current, "+victim.Name+" among them", func() error {
		return replicasCurrent(ctx, js, victim.Name)
	})
	t.Logf("%s rejoined: every replica of %d streams %v current with lag 0 %s after its start",
		victim.Name, len(before), slices.Sorted(maps.Keys(before)), time.Since(restart).Round(time.Millisecond))

	// The node's own copy: its monitoring endpoint reports the streams it
	// stores as it stores them, and a client connected to it alone sees
	// cue_docs as the survivors left it.
	eventually(ctx, t, time.Minute, victim.Name+"'s replicas hold what the survivors held", func() error {
		local, err := localStreamStates(ctx, victim)
		if err != nil {
			return err
		}
		for name, want := range before {
			if got, ok := local[name]; !ok || got != want {
				return fmt.Errorf("%s: %s holds %s, survivors held %s", name, victim.Name, got, want)
			}
		}
		return nil
	})
	t.Logf("%s's own replicas of %d streams match the survivors' (last seq and messages) %s after its start",
		victim.Name, len(before), time.Since(restart).Round(time.Millisecond))
	checkDirect(ctx, t, victim, before["KV_"+events.DocsBucket], all)

	stopQueries()
	<-queriesDone
	queries.report(t)

	s.CheckWrites()
	docs := markdown(all)
	for i := range c.Edges {
		waitEdgeServes(ctx, t, c, nc, i, docs, 2*time.Minute)
		checkEdge(ctx, t, c, nc, i, acked, docs)
	}
	s.Done()
}

// TestClusterEdgeVolumeLost is scenario 5: an edge loses its volume (its
// container, which holds /data/edge, is removed) and a new one starts in
// its place with an empty state directory. It rebuilds from the buckets
// and answers exactly as before, and as the other edge does.
func TestClusterEdgeVolumeLost(t *testing.T) {
	s := StartScenario(t, 6*time.Minute, ClusterOptions{Indexers: 1, Edges: 2})
	ctx, c, nc, acked := s.Ctx, s.C, s.NC, s.Acked

	files := Corpus(7, "b1", scenarioRepos, 600)
	s.Ingest(files, 2*time.Minute)
	docs := markdown(files)
	var sample []File
	for i, f := range docs {
		if i%5 == 0 {
			sample = append(sample, f)
		}
	}
	queries := append([]string(nil), words[:10]...)
	queries = append(queries, "anchor beacon", "harbor tide", "section falcon harbor", "package handles", "reports")
	recorded := edgeAnswers(ctx, t, c, nc, 0, queries, sample)
	for q, a := range recorded {
		if strings.HasPrefix(q, "read_context") && (bytes.Equal(a, []byte("[]")) || bytes.Equal(a, []byte("null"))) {
			t.Errorf("%s found nothing: the comparison proves little", q)
		}
	}
	t.Logf("recorded %d answers of edge1 (%d read_context, %d read_doc)", len(recorded), len(queries), len(sample))

	old := c.Edges[0]
	if err := testcontainers.TerminateContainer(old.C); err != nil {
		t.Fatalf("remove %s: %v", old.Name, err)
	}
	if _, err := c.docker.ContainerInspect(ctx, old.C.GetContainerID(), client.ContainerInspectOptions{}); !errdefs.IsNotFound(err) {
		t.Fatalf("%s's container after removal: inspect says %v, want not found", old.Name, err)
	}
	// The cleanup registered at its start terminates it again: that must
	// be a no-op.
	if err := testcontainers.TerminateContainer(old.C); err != nil {
		t.Fatalf("terminating the removed %s again: %v", old.Name, err)
	}
	t.Logf("%s's container %.12s and its /data/edge removed", old.Name, old.C.GetContainerID())

	rebuild := time.Now()
	if err := c.StartEdge(ctx, 0); err != nil {
		t.Fatal(err)
	}
	fresh := c.Edges[0]
	started := time.Since(rebuild)
	// The store it opened was empty: the materialiser logs what it loaded
	// from its state directory before it serves.
	opened := logLine(ctx, t, fresh, "rebuilt the doc index from the store")
	if !strings.Contains(opened, " docs=0 ") || !strings.Contains(opened, " revision=0 ") {
		t.Fatalf("the new %s did not start from an empty store: %s", fresh.Name, opened)
	}
	t.Logf("new %s (container %.12s) opened an empty store: %s", fresh.Name, fresh.C.GetContainerID(), opened)
	waitEdgeServes(ctx, t, c, nc, 0, docs, 2*time.Minute)
	served := time.Since(rebuild)
	ready := waitReady(ctx, t, c, 0)
	t.Logf("rebuild: container up in %s, every file served %s after the start; /readyz: %s",
		started.Round(time.Millisecond), served.Round(time.Millisecond), ready)

	s.CheckWrites()
	for i := range c.Edges {
		checkEdge(ctx, t, c, nc, i, acked, docs)
	}
	rebuilt := edgeAnswers(ctx, t, c, nc, 0, queries, sample)
	other := edgeAnswers(ctx, t, c, nc, 1, queries, sample)
	var differRecorded, differOther int
	for _, k := range slices.Sorted(maps.Keys(recorded)) {
		if !bytes.Equal(rebuilt[k], recorded[k]) {
			differRecorded++
			t.Errorf("%s: the rebuilt edge1 answers differently from before:\nbefore %s\nnow    %s", k, recorded[k], rebuilt[k])
		}
		if !bytes.Equal(rebuilt[k], other[k]) {
			differOther++
			t.Errorf("%s: the rebuilt edge1 and edge2 differ:\nedge1 %s\nedge2 %s", k, rebuilt[k], other[k])
		}
	}
	t.Logf("answers compared byte for byte: %d, differing from before the loss: %d, differing from edge2: %d",
		len(recorded), differRecorded, differOther)
	s.Done()
}

// edgeAnswers asks edge i every query (read_context) and every file
// (read_doc) and returns the raw results by call; an error fails the test.
func edgeAnswers(ctx context.Context, t *testing.T, c *Cluster, nc *nats.Conn, i int, queries []string, files []File) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	call := func(key, tool string, args any) {
		rep, err := c.EdgeCall(ctx, nc, i, tool, args)
		if err != nil || rep.Error != nil {
			t.Fatalf("%s on edge%d: %v %+v", key, i+1, err, rep.Error)
		}
		out[key] = rep.Result
	}
	for _, q := range queries {
		call("read_context "+q, "read_context", map[string]any{"query": q, "limit": 10})
	}
	for _, f := range files {
		call("read_doc "+f.Repo+"/"+f.Path, "read_doc", map[string]string{"path": f.Repo + "/" + f.Path})
	}
	return out
}

// logLine returns the first line of n's logs that contains s.
func logLine(ctx context.Context, t *testing.T, n *Node, s string) string {
	t.Helper()
	line, err := findLogLine(ctx, n, s)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// findLogLine is the first line of n's log holding s, or an error saying
// there is none yet.
func findLogLine(ctx context.Context, n *Node, s string) (string, error) {
	logs, err := n.C.Logs(ctx)
	if err != nil {
		return "", fmt.Errorf("%s logs: %w", n.Name, err)
	}
	defer logs.Close()
	sc := bufio.NewScanner(logs)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			// Docker's multiplexed stream prefixes each frame with 8 bytes.
			line := sc.Text()
			if i := strings.Index(line, "time="); i >= 0 {
				line = line[i:]
			}
			return line, nil
		}
	}
	return "", fmt.Errorf("%s logged no line with %q", n.Name, s)
}

// bucketReplayed is the edge's line on finding a bucket replaced under
// it, which it then replays while it runs.
const bucketReplayed = "a bucket was replaced under the running edge; discarding what came from it and replaying it from the start"

// waitReplayedInPlace waits until edge n has logged that it replays a
// replaced bucket, and requires that it did so without a restart.
func waitReplayedInPlace(ctx context.Context, t *testing.T, c *Cluster, n *Node) {
	t.Helper()
	var line string
	eventually(ctx, t, 2*time.Minute, n.Name+" replaying the replaced bucket", func() error {
		var err error
		line, err = findLogLine(ctx, n, bucketReplayed)
		return err
	})
	in, err := c.docker.ContainerInspect(ctx, n.C.GetContainerID(), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Container.RestartCount > 0 {
		t.Errorf("%s was restarted %d time(s): it should replay the bucket while it runs", n.Name, in.Container.RestartCount)
	}
	t.Logf("%s, not restarted, logged: %s", n.Name, strings.TrimSpace(line))
}

// waitReady polls edge i's /readyz until it reports ready with no feed
// behind its head, and returns the cue_docs line.
func waitReady(ctx context.Context, t *testing.T, c *Cluster, i int) string {
	t.Helper()
	url := c.EdgeURL(ctx, i) + "/readyz"
	var line string
	eventually(ctx, t, time.Minute, fmt.Sprintf("edge%d ready and not lagging", i+1), func() error {
		var r struct {
			Ready   bool `json:"ready"`
			Lagging bool `json:"lagging"`
			Feeds   []struct {
				Feed      string `json:"feed"`
				Applied   uint64 `json:"applied"`
				Head      uint64 `json:"head"`
				HeadKnown bool   `json:"head_known"`
			} `json:"feeds"`
		}
		if err := getJSON(ctx, url, &r); err != nil {
			return err
		}
		if !r.Ready || r.Lagging {
			return fmt.Errorf("ready %v, lagging %v: %+v", r.Ready, r.Lagging, r.Feeds)
		}
		for _, f := range r.Feeds {
			if f.Feed == events.DocsBucket {
				if !f.HeadKnown {
					return fmt.Errorf("cue_docs head not read yet")
				}
				line = fmt.Sprintf("cue_docs applied %d of head %d", f.Applied, f.Head)
			}
		}
		return nil
	})
	return line
}

func getJSON(ctx context.Context, url string, v any) error {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// publishStats count what a publish met on its way.
type publishStats struct {
	Attempts   int
	Retries    map[string]int // failed attempts by kind
	Duplicates int            // retries JetStream answered as duplicates: the failed attempt had been stored
}

func (p publishStats) String() string {
	kinds := slices.Sorted(maps.Keys(p.Retries))
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, p.Retries[k]))
	}
	return fmt.Sprintf("%d attempts, retried [%s], %d retries acknowledged as duplicates", p.Attempts, strings.Join(parts, " "), p.Duplicates)
}

// publishFailure classifies a failed publish attempt.
func publishFailure(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return "timeout"
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse):
		return "no-responders"
	default:
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) {
			return fmt.Sprintf("api-%d", apiErr.ErrorCode)
		}
		return "other"
	}
}

// publishSteady publishes files as ingest does, at most perSecond a
// second, each until JetStream acknowledges it: an attempt that fails is
// sent again with the same Nats-Msg-Id, since it may have been stored. ack
// runs once per file, when it is acknowledged. It fails if a file is not
// acknowledged within horizon.
func publishSteady(ctx context.Context, js jetstream.JetStream, files []File, perSecond int, horizon time.Duration, ack func(File)) (publishStats, error) {
	var mu sync.Mutex
	stats := publishStats{Retries: map[string]int{}}
	jobs := make(chan File)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for f := range jobs {
				msg := fileMsg(f)
				deadline := time.Now().Add(horizon)
				for retry := false; ; retry = true {
					actx, cancel := context.WithTimeout(ctx, 5*time.Second)
					pa, err := js.PublishMsg(actx, msg)
					cancel()
					mu.Lock()
					stats.Attempts++
					if err != nil {
						stats.Retries[publishFailure(err)]++
					} else if retry && pa.Duplicate {
						stats.Duplicates++
					}
					mu.Unlock()
					if err == nil {
						ack(f)
						break
					}
					if ctx.Err() != nil || time.Now().After(deadline) {
						select {
						case errs <- fmt.Errorf("%s/%s not acknowledged within %s: %w", f.Repo, f.Path, horizon, err):
						default:
						}
						break
					}
					// Let the cluster elect; ingest backs off likewise.
					select {
					case <-ctx.Done():
					case <-time.After(250 * time.Millisecond):
					}
				}
			}
		})
	}
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
feed:
	for _, f := range files {
		select {
		case <-tick.C:
		case <-ctx.Done():
			break feed
		}
		select {
		case jobs <- f:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return stats, err
	default:
	}
	return stats, ctx.Err()
}

// fileMsg is f's FileUpserted event as ingest publishes it.
func fileMsg(f File) *nats.Msg {
	ev := events.FileUpserted{Repo: f.Repo, Path: f.Path, SHA256: events.SHA256Hex([]byte(f.Content)),
		Size: int64(len(f.Content)), ModTime: time.Unix(1700000000, 0), Content: f.Content}
	data, err := events.Encode(ev)
	if err != nil {
		panic(err) // a generated file always encodes
	}
	msg := nats.NewMsg(events.FileSubject(f.Repo))
	msg.Data = data
	msg.Header.Set(jetstream.MsgIDHeader, events.FileUpsertedMsgID(ev.Repo, ev.Path, ev.SHA256, ev.ModTime))
	return msg
}

// Phases of the query loop.
const (
	phaseBefore = iota
	phaseDown
	phaseRejoined
	phases
)

var phaseNames = [phases]string{"before the stop", "node down", "node rejoined"}

// queryLoop asks every edge, ten times a second each, alternately
// read_context and read_doc of a file it serves. It sends its calls over
// three host connections in turn, each connected first to another NATS
// node (and knowing the other two), so that whichever node stops, a third
// of the calls travel through a connection that must move. It counts per
// phase, edge and connection the calls answered correctly, the calls that
// got no answer (timeouts, no responders: a connection, the client's or
// the edge's, moving off the stopped server) and the wrong answers (an
// error result, or another version of the file).
type queryLoop struct {
	conns []*nats.Conn
	via   []string // node each connection first connected to
	phase atomic.Int32
	mu    sync.Mutex
	// [phase][edge][connection]
	ok, fail, wrong [phases][][]int
	// longest run without a correct answer, per edge
	gap      []time.Duration
	examples []string
}

func newQueryLoop(ctx context.Context, t *testing.T, c *Cluster, edges int) *queryLoop {
	t.Helper()
	q := &queryLoop{gap: make([]time.Duration, edges)}
	var urls []string
	for _, n := range c.NATS {
		u, err := n.C.PortEndpoint(ctx, "4222/tcp", "nats")
		if err != nil {
			t.Fatalf("%s client port: %v", n.Name, err)
		}
		urls = append(urls, u)
	}
	for k := range c.NATS {
		pool := append(append([]string(nil), urls[k:]...), urls[:k]...)
		nc, err := nats.Connect(strings.Join(pool, ","), nats.DontRandomize(), nats.IgnoreDiscoveredServers(),
			nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), nats.Name(fmt.Sprintf("e2e-queries-%d", k+1)))
		if err != nil {
			t.Fatalf("connect the query loop: %v", err)
		}
		t.Cleanup(nc.Close)
		q.conns = append(q.conns, nc)
		q.via = append(q.via, nc.ConnectedServerName())
	}
	for p := range phases {
		for _, m := range []*[phases][][]int{&q.ok, &q.fail, &q.wrong} {
			m[p] = make([][]int, edges)
			for i := range edges {
				m[p][i] = make([]int, len(q.conns))
			}
		}
	}
	t.Logf("query loop connections first connected to %v", q.via)
	return q
}

func (q *queryLoop) setPhase(p int) { q.phase.Store(int32(p)) }

func (q *queryLoop) run(ctx context.Context, c *Cluster, files []File) {
	var wg sync.WaitGroup
	for i := range q.gap {
		wg.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			lastOK := time.Now()
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				p := q.phase.Load()
				k := n % len(q.conns)
				nc := q.conns[k]
				var rep ToolReply
				var err error
				var want *Version
				if n%2 == 0 {
					rep, err = c.EdgeCall(ctx, nc, i, "read_context", map[string]any{"query": words[n/2%len(words)], "limit": 5})
				} else {
					f := files[n/2%len(files)]
					v := f.Version()
					want = &v
					rep, err = c.EdgeCall(ctx, nc, i, "read_doc", map[string]string{"path": f.Repo + "/" + f.Path})
				}
				if ctx.Err() != nil {
					return
				}
				var problem string
				switch {
				case err != nil:
					problem = "no answer: " + err.Error()
				case rep.Error != nil:
					problem = "error answer: " + rep.Error.Message
				case want != nil:
					var d struct{ Repo, Path, Hash string }
					if json.Unmarshal(rep.Result, &d) != nil || (Version{d.Repo, d.Path, d.Hash}) != *want {
						problem = fmt.Sprintf("wrong answer: want %s, got %s", want, rep.Result)
					}
				}
				q.mu.Lock()
				switch {
				case problem == "":
					q.ok[p][i][k]++
					lastOK = time.Now()
				case err != nil:
					q.fail[p][i][k]++
				default:
					q.wrong[p][i][k]++
				}
				if problem != "" {
					q.gap[i] = max(q.gap[i], time.Since(lastOK))
					if len(q.examples) < 5 {
						q.examples = append(q.examples, fmt.Sprintf("edge%d via %s, %s: %s", i+1, q.via[k], phaseNames[p], problem))
					}
				}
				q.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// report logs the counts and fails on any wrong answer, on a phase in
// which an edge answered nothing, and on calls left unanswered while every
// node ran: only the stop itself moves connections.
func (q *queryLoop) report(t *testing.T) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	for p := range phases {
		for i := range q.gap {
			var ok, fail, wrong int
			var per []string
			for k := range q.conns {
				ok, fail, wrong = ok+q.ok[p][i][k], fail+q.fail[p][i][k], wrong+q.wrong[p][i][k]
				per = append(per, fmt.Sprintf("via %s %d/%d/%d", q.via[k], q.ok[p][i][k], q.fail[p][i][k], q.wrong[p][i][k]))
			}
			t.Logf("queries edge%d, %s: answered=%d unanswered=%d wrong=%d (%s)", i+1, phaseNames[p], ok, fail, wrong, strings.Join(per, ", "))
			if ok == 0 {
				t.Errorf("edge%d answered no query %s", i+1, phaseNames[p])
			}
			if wrong > 0 {
				t.Errorf("edge%d answered %d queries wrongly %s", i+1, wrong, phaseNames[p])
			}
			if p != phaseDown && fail > 0 {
				t.Errorf("edge%d left %d queries unanswered %s", i+1, fail, phaseNames[p])
			}
		}
	}
	for i, g := range q.gap {
		t.Logf("queries edge%d: longest stretch without a correct answer %s", i+1, g.Round(time.Millisecond))
	}
	for _, e := range q.examples {
		t.Logf("query problem: %s", e)
	}
}

// clientsOf names the roles connected to NATS node n as a client (by their
// container address on the cluster network), and counts the host's
// connections, which come through the network's gateway.
func clientsOf(ctx context.Context, c *Cluster, n *Node) (string, error) {
	byIP := map[string]string{}
	for _, group := range [][]*Node{c.Indexers, c.Edges, c.Extractors} {
		for _, r := range group {
			if ip, err := r.C.ContainerIP(ctx); err == nil {
				byIP[ip] = r.Name
			}
		}
	}
	url, err := n.C.PortEndpoint(ctx, "8222/tcp", "http")
	if err != nil {
		return "", err
	}
	var j struct {
		Conns []struct {
			IP   string `json:"ip"`
			Name string `json:"name"`
		} `json:"connections"`
	}
	if err := getJSON(ctx, url+"/connz?limit=1000", &j); err != nil {
		return "", err
	}
	var names []string
	host := 0
	for _, cn := range j.Conns {
		if r, ok := byIP[cn.IP]; ok {
			names = append(names, r)
		} else {
			host++
		}
	}
	slices.Sort(names)
	return fmt.Sprintf("roles [%s], host connections %d", strings.Join(names, " "), host), nil
}

// clusterLeaders names the meta leader and the leaders of CUE_INGEST and
// cue_docs' stream, by server name.
func clusterLeaders(ctx context.Context, t *testing.T, c *Cluster, js jetstream.JetStream) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{events.IngestStream, "KV_" + events.DocsBucket} {
		out[name] = streamLeader(ctx, js, name)
	}
	var j struct {
		Meta struct {
			Leader string `json:"leader"`
		} `json:"meta_cluster"`
	}
	url, err := c.NATS[0].C.PortEndpoint(ctx, "8222/tcp", "http")
	if err == nil {
		err = getJSON(ctx, url+"/jsz", &j)
	}
	if err != nil {
		t.Fatalf("meta leader from n1's /jsz: %v", err)
	}
	out["meta"] = j.Meta.Leader
	return out
}

func streamLeader(ctx context.Context, js jetstream.JetStream, name string) string {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := js.Stream(sctx, name)
	if err != nil {
		return ""
	}
	info, err := s.Info(sctx)
	if err != nil || info.Cluster == nil {
		return ""
	}
	return info.Cluster.Leader
}

func nodeNamed(c *Cluster, name string) *Node {
	for _, n := range c.NATS {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// waitConsumerDrained waits until the indexer has settled every file event
// and CUE_INGEST holds only what its consumers have yet to settle.
func waitConsumerDrained(ctx context.Context, t *testing.T, js jetstream.JetStream) {
	t.Helper()
	eventually(ctx, t, 2*time.Minute, "indexer consumer drained", func() error {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cons, err := js.Consumer(cctx, events.IngestStream, events.IndexerConsumer)
		if err != nil {
			return err
		}
		info, err := cons.Info(cctx)
		if err != nil {
			return err
		}
		if info.NumPending > 0 || info.NumAckPending > 0 {
			return fmt.Errorf("pending %d, ack pending %d", info.NumPending, info.NumAckPending)
		}
		return nil
	})
	// The workers trim what they acknowledged within a second or so; until
	// then the stream's replicas hold more than they will.
	eventually(ctx, t, time.Minute, events.IngestStream+" trimmed of what its consumers settled", func() error {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		s, err := js.Stream(cctx, events.IngestStream)
		if err != nil {
			return err
		}
		unsettled := uint64(0)
		for _, name := range []string{events.IndexerConsumer, events.ExtractorConsumer} {
			c, err := s.Consumer(cctx, name)
			if errors.Is(err, jetstream.ErrConsumerNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			unsettled += c.CachedInfo().NumPending + uint64(c.CachedInfo().NumAckPending)
		}
		if held := s.CachedInfo().State.Msgs; held != unsettled {
			return fmt.Errorf("holds %d messages, %d of them unsettled", held, unsettled)
		}
		return nil
	})
}

// streamState is what a replica holds of a stream.
type streamState struct {
	LastSeq uint64 `json:"last_seq"`
	Msgs    uint64 `json:"messages"`
}

func (s streamState) String() string {
	return fmt.Sprintf("last seq %d, %d messages", s.LastSeq, s.Msgs)
}

// streamStates is every stream's state as its leader reports it.
func streamStates(ctx context.Context, t *testing.T, js jetstream.JetStream) map[string]streamState {
	t.Helper()
	out := map[string]streamState{}
	eventually(ctx, t, time.Minute, "list the streams", func() error {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		l := js.ListStreams(lctx)
		clear(out)
		for info := range l.Info() {
			out[info.Config.Name] = streamState{LastSeq: info.State.LastSeq, Msgs: info.State.Msgs}
		}
		if err := l.Err(); err != nil {
			return err
		}
		for _, name := range []string{events.IngestStream, "KV_" + events.DocsBucket} {
			if _, ok := out[name]; !ok {
				return fmt.Errorf("stream %s not listed", name)
			}
		}
		return nil
	})
	return out
}

// replicasCurrent says why some stream is not fully replicated on all
// three nodes, node among them, or returns nil.
func replicasCurrent(ctx context.Context, js jetstream.JetStream, node string) error {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l := js.ListStreams(lctx)
	n := 0
	var problem error
	for info := range l.Info() {
		n++
		if problem != nil {
			continue
		}
		cl := info.Cluster
		if cl == nil || cl.Leader == "" {
			problem = fmt.Errorf("%s has no leader", info.Config.Name)
			continue
		}
		peers := []string{cl.Leader}
		for _, r := range cl.Replicas {
			if !r.Current || r.Offline || r.Lag > 0 {
				problem = fmt.Errorf("%s: replica %s current=%v offline=%v lag=%d", info.Config.Name, r.Name, r.Current, r.Offline, r.Lag)
				break
			}
			peers = append(peers, r.Name)
		}
		if problem == nil && (len(peers) != 3 || !slices.Contains(peers, node)) {
			problem = fmt.Errorf("%s: peers %v", info.Config.Name, peers)
		}
	}
	if err := l.Err(); err != nil {
		return err
	}
	if n == 0 {
		return errors.New("no stream listed")
	}
	return problem
}

// localStreamStates is what node n itself stores of each stream, from its
// monitoring endpoint (each server reports its own replicas).
func localStreamStates(ctx context.Context, n *Node) (map[string]streamState, error) {
	url, err := n.C.PortEndpoint(ctx, "8222/tcp", "http")
	if err != nil {
		return nil, err
	}
	var j struct {
		Accounts []struct {
			Streams []struct {
				Name  string      `json:"name"`
				State streamState `json:"state"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	if err := getJSON(ctx, url+"/jsz?accounts=true&streams=true", &j); err != nil {
		return nil, err
	}
	out := map[string]streamState{}
	for _, a := range j.Accounts {
		for _, s := range a.Streams {
			out[s.Name] = s.State
		}
	}
	return out, nil
}

// checkDirect connects to node n alone and checks that cue_docs' stream
// info seen from there is want, and that a direct get of every file's key
// returns the file's version: a direct get goes to any replica, and NATS
// hands a request to a subscriber on the client's own server first, so
// n's replica answers these.
func checkDirect(ctx context.Context, t *testing.T, n *Node, want streamState, files []File) {
	t.Helper()
	url, err := n.C.PortEndpoint(ctx, "4222/tcp", "nats")
	if err != nil {
		t.Fatalf("%s client port: %v", n.Name, err)
	}
	nc, err := nats.Connect(url, nats.IgnoreDiscoveredServers(), nats.NoReconnect())
	if err != nil {
		t.Fatalf("connect to %s alone: %v", n.Name, err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	stream, err := js.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatalf("cue_docs stream via %s: %v", n.Name, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatalf("cue_docs stream info via %s: %v", n.Name, err)
	}
	got := streamState{LastSeq: info.State.LastSeq, Msgs: info.State.Msgs}
	t.Logf("cue_docs seen through %s (%s) alone: %s, leader %s", n.Name, nc.ConnectedServerName(), got, info.Cluster.Leader)
	if nc.ConnectedServerName() != n.Name {
		t.Errorf("connected to %s, want %s", nc.ConnectedServerName(), n.Name)
	}
	if got != want {
		t.Errorf("cue_docs through %s: %s, the survivors held %s", n.Name, got, want)
	}
	if !info.Config.AllowDirect {
		t.Logf("cue_docs does not allow direct gets; skipping the reads from %s's replica", n.Name)
		return
	}
	kv, err := js.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	chk := NewChecker()
	for _, f := range files {
		chk.Ack(f.Version())
		e, err := kv.Get(ctx, events.DocKey(f.Repo, f.Path))
		if err != nil {
			continue
		}
		if rec, err := events.DecodeDocRecord(e.Value()); err == nil {
			chk.Observe(Version{Repo: rec.Repo, Path: rec.Path, Hash: rec.SHA256})
		}
	}
	r := chk.Report()
	t.Logf("checker cue_docs direct gets through %s: %s", n.Name, r)
	if !r.OK() || len(r.Unexpected) > 0 {
		t.Errorf("cue_docs through %s: %s", n.Name, r)
	}
}
