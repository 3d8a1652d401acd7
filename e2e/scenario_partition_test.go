package e2e

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestClusterEdgePartitioned is scenario 4: an edge is cut off from the
// cluster (docker network disconnect). While cut off it keeps answering
// over HTTP MCP from what it had materialised, and its /readyz and
// /metrics say that it cannot read its feeds' heads, the last reading
// growing older; the cluster takes a second batch and edits meanwhile,
// which the other edge serves. Once reconnected it converges: it serves
// every acknowledged version and answers searches as the other edge does.
//
// The edge reaches the host through a second network (ClusterOptions.
// EdgeNet), which the disconnect leaves. The partition lasts 45s, or
// $CUE_E2E_PARTITION_HOLD: 6m30s or more also outlasts the edge's NATS
// client noticing the dead connection, so it heals while the client is
// reconnecting.
func TestClusterEdgePartitioned(t *testing.T) {
	hold := partitionHold(t)
	s := StartScenario(t, 8*time.Minute+hold, ClusterOptions{Indexers: 1, Edges: 2, EdgeNet: true})
	ctx, c, nc, js, writes, acked := s.Ctx, s.C, s.NC, s.JS, s.Writes, s.Acked

	first := Corpus(41, "b1", scenarioRepos, 600)
	Publish(ctx, t, js, first, acked)
	waitWrites(ctx, t, writes, len(first), 2*time.Minute)
	for i := range c.Edges {
		waitEdgeServes(ctx, t, c, nc, i, markdown(first), 2*time.Minute)
	}
	// Caught up and able to read its heads: the state to be cut off in.
	before := waitReadyz(ctx, t, c, 0, time.Minute, "edge1 caught up", func(r readyReport) error {
		if r.Lagging {
			return fmt.Errorf("lagging: %+v", r.Feeds)
		}
		// A head read before the last writes were applied trails Applied:
		// wait for one read since.
		if f := r.feed(events.DocsBucket); f == nil || !f.HeadKnown || f.Applied < uint64(len(first)) || f.Head < f.Applied {
			return fmt.Errorf("cue_docs head not read since applying batch 1: %+v", r.Feeds)
		}
		return nil
	})
	docsBefore := before.feed(events.DocsBucket)
	t.Logf("batch 1 (%d files) served by both edges at %s; edge1 applied cue_docs %d, head %d", len(first), s.Elapsed(), docsBefore.Applied, docsBefore.Head)

	victim := c.Edges[0]
	if err := victim.Disconnect(ctx); err != nil {
		t.Fatalf("disconnect %s: %v", victim.Name, err)
	}
	cutAt := time.Now()
	t.Logf("cut %s off the cluster network at %s", victim.Name, s.Elapsed())

	// The edge notices within a few of its monitor's head reads (2s each,
	// 2s timeout); it stays ready: it answers from its local copy.
	noticed := waitReadyz(ctx, t, c, 0, time.Minute, "edge1 reports it cannot read its heads", cutOff(docsBefore.Applied))
	t.Logf("%s reports lagging %s after the cut: cue_docs head_error %q", victim.Name,
		time.Since(cutAt).Round(time.Millisecond), noticed.feed(events.DocsBucket).HeadError)

	// While it is cut off the cluster moves on: a second batch, and an edit
	// of every fourth markdown file of the first.
	second := Corpus(42, "b2", scenarioRepos, 300)
	var edited []File
	for k, f := range markdown(first) {
		if k%4 == 0 {
			f.Content += "\n\nEdited while edge1 was cut off: " + words[k%len(words)] + "."
			edited = append(edited, f)
		}
	}
	Publish(ctx, t, js, second, acked)
	Publish(ctx, t, js, edited, acked)
	all := append(append(append([]File(nil), first...), second...), edited...)
	waitWrites(ctx, t, writes, len(all), 2*time.Minute)
	latest := latestVersions(all)
	waitEdgeServes(ctx, t, c, nc, 1, markdown(latest), 2*time.Minute)
	t.Logf("batch 2 (%d files) and %d edits served by edge2 at %s", len(second), len(edited), s.Elapsed())

	// Edge 1 still answers over HTTP MCP, with batch 1 as it materialised
	// it: every first version, none lost, and no later one.
	cs := edgeSession(ctx, t, c, 0)
	asMaterialised := NewChecker()
	for _, f := range markdown(first) {
		asMaterialised.Ack(f.Version())
	}
	readStart := time.Now()
	got, err := readDocsMCP(ctx, cs, markdown(first))
	readTook := time.Since(readStart)
	if err != nil {
		t.Fatalf("edge1 read_doc over HTTP while cut off: %v", err)
	}
	for _, v := range got {
		if v.Hash != "" && v.Hash[0] != '!' {
			asMaterialised.Observe(v)
		}
	}
	r := asMaterialised.Report()
	t.Logf("edge1 answered %d read_doc calls over HTTP MCP while cut off in %s", len(got), readTook.Round(time.Millisecond))
	t.Logf("checker edge1 read_doc over HTTP while cut off (batch 1 as materialised): %s", r)
	if !r.OK() || len(r.Unexpected) > 0 {
		t.Errorf("edge1 while cut off: %s", r)
	}
	// The partition held: the second batch never reached edge 1.
	got, err = readDocsMCP(ctx, cs, markdown(second)[:30])
	if err != nil {
		t.Fatalf("edge1 read_doc over HTTP while cut off: %v", err)
	}
	for _, v := range got {
		if v.Hash == "" || v.Hash[0] != '!' {
			t.Fatalf("edge1 serves %s while cut off: the partition did not hold", v)
		}
	}

	// Its /readyz and /metrics still say it is cut off, the head older now.
	later := waitReadyz(ctx, t, c, 0, 10*time.Second, "edge1 still reports it cannot read its heads", cutOff(docsBefore.Applied))
	docsLater := later.feed(events.DocsBucket)
	if docsLater.HeadAgeSeconds <= noticed.feed(events.DocsBucket).HeadAgeSeconds {
		t.Errorf("cue_docs head age did not grow while cut off: %.1fs, then %.1fs", noticed.feed(events.DocsBucket).HeadAgeSeconds, docsLater.HeadAgeSeconds)
	}
	m := scrapeMetrics(ctx, t, c, 0)
	for _, want := range []struct {
		name string
		ok   func(float64) bool
		says string
	}{
		{`cue_ready`, func(v float64) bool { return v == 1 }, "1"},
		{`cue_feed_head_unreadable{feed="cue_docs"}`, func(v float64) bool { return v == 1 }, "1"},
		{`cue_feed_head_age_seconds{feed="cue_docs"}`, func(v float64) bool { return v >= docsLater.HeadAgeSeconds }, fmt.Sprintf(">= %.1f", docsLater.HeadAgeSeconds)},
		{`cue_feed_applied_revision{feed="cue_docs"}`, func(v float64) bool { return v == float64(docsBefore.Applied) }, fmt.Sprint(docsBefore.Applied)},
	} {
		v, ok := m[want.name]
		if !ok || !want.ok(v) {
			t.Errorf("edge1 /metrics %s = %v (present %v), want %s", want.name, v, ok, want.says)
		}
	}
	clusterHead := docsHead(ctx, t, js)
	t.Logf("lag while cut off (%s in): edge1 applied cue_docs %d, the cluster's head is %d (%d revisions behind); "+
		"/readyz lagging=%v head %d read %.1fs ago, head_error %q; /metrics head_unreadable=%v head_age_seconds=%.1f",
		time.Since(cutAt).Round(time.Millisecond), docsLater.Applied, clusterHead, clusterHead-docsLater.Applied,
		later.Lagging, docsLater.Head, docsLater.HeadAgeSeconds, docsLater.HeadError,
		m[`cue_feed_head_unreadable{feed="cue_docs"}`], m[`cue_feed_head_age_seconds{feed="cue_docs"}`])
	// Searches answer too, from the same copy.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_context", Arguments: map[string]any{"query": "section falcon harbor", "limit": 5}})
	if err != nil || res.IsError {
		t.Fatalf("edge1 read_context over HTTP while cut off: %v %+v", err, res)
	}

	// The partition lasts until the edge's own account of it, its head
	// age, passes partitionHold: long past the heartbeats (5s) its
	// watchers' consumers miss, so they try to recreate their consumers
	// while cut off.
	held := waitReadyz(ctx, t, c, 0, hold+time.Minute, fmt.Sprintf("edge1 cut off for %s by its own account", hold), func(r readyReport) error {
		if err := cutOff(docsBefore.Applied)(r); err != nil {
			return err
		}
		if age := r.feed(events.DocsBucket).HeadAgeSeconds; age < hold.Seconds() {
			return fmt.Errorf("cue_docs head read %.1fs ago", age)
		}
		return nil
	})
	// Still answering from the same copy at the end of it.
	sample := markdown(first)[:50]
	got, err = readDocsMCP(ctx, edgeSession(ctx, t, c, 0), sample)
	if err != nil {
		t.Fatalf("edge1 read_doc over HTTP after %s cut off: %v", time.Since(cutAt).Round(time.Second), err)
	}
	for j, v := range got {
		if v != sample[j].Version() {
			t.Errorf("edge1 after %s cut off: read_doc %s answers %s", time.Since(cutAt).Round(time.Second), sample[j].Version(), v)
		}
	}
	t.Logf("edge1 still cut off and answering: cue_docs head read %.1fs ago, %d read_doc calls over HTTP answered with batch 1",
		held.feed(events.DocsBucket).HeadAgeSeconds, len(got))

	if err := victim.Reconnect(ctx); err != nil {
		t.Fatalf("reconnect %s: %v", victim.Name, err)
	}
	reconnectAt := time.Now()
	t.Logf("reconnected %s at %s, cut off for %s", victim.Name, s.Elapsed(), reconnectAt.Sub(cutAt).Round(time.Millisecond))
	watch := watchConvergence(ctx, c, 0, reconnectAt)

	// Converged: every acknowledged version served, and the heads read
	// again with nothing behind.
	waitEdgeServes(ctx, t, c, nc, 0, markdown(latest), 5*time.Minute)
	served := time.Since(reconnectAt)
	caughtUp := waitReadyz(ctx, t, c, 0, 2*time.Minute, "edge1 reads its heads and trails none", caughtUpWith(clusterHead))
	notLagging := time.Since(reconnectAt)
	seen := watch()
	t.Logf("edge1 converged after the reconnect: serves every version in %s, /readyz not lagging in %s (cue_docs applied %d, head %d)",
		served.Round(time.Millisecond), notLagging.Round(time.Millisecond),
		caughtUp.feed(events.DocsBucket).Applied, caughtUp.feed(events.DocsBucket).Head)
	t.Logf("edge1 /readyz after the reconnect, polled every 200ms: %s", seen)

	s.CheckWrites()
	for i := range c.Edges {
		checkEdge(ctx, t, c, nc, i, acked, markdown(latest))
	}
	queries := append([]string(nil), words[:12]...)
	for k := 0; k+1 < len(words); k += 7 {
		queries = append(queries, words[k]+" "+words[k+1])
	}
	queries = append(queries, "edited while edge1 was cut off", "package handles", "section falcon harbor")
	compareContexts(ctx, t, c, nc, queries)
	logConnectivity(ctx, t, victim)
	s.Done()
}

// caughtUpWith accepts a /readyz report that reads every head and trails
// none, cue_docs applied up to head at least.
func caughtUpWith(head uint64) func(readyReport) error {
	return func(r readyReport) error {
		f := r.feed(events.DocsBucket)
		switch {
		case !r.Ready || r.Lagging:
			return fmt.Errorf("ready %v lagging %v: %+v", r.Ready, r.Lagging, r.Feeds)
		case f == nil || !f.HeadKnown || f.Applied < head:
			return fmt.Errorf("cue_docs not caught up with %d: %+v", head, f)
		}
		return nil
	}
}

// convergence is what an edge's /readyz showed from a reconnect on.
type convergence struct {
	polls       int
	headAgain   time.Duration // first report with the cue_docs head read again
	firstBehind uint64        // cue_docs behind in that report
	maxBehind   uint64
}

func (cv convergence) String() string {
	at := func(d time.Duration) string {
		if d == 0 {
			return "not seen"
		}
		return d.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%d polls; cue_docs head read again at %s (behind %d), largest behind %d",
		cv.polls, at(cv.headAgain), cv.firstBehind, cv.maxBehind)
}

// watchConvergence polls edge i's /readyz in the background from since on
// and records the lag it reports; the returned func stops it and returns
// what it saw.
func watchConvergence(ctx context.Context, c *Cluster, i int, since time.Time) func() convergence {
	ctx, cancel := context.WithCancel(ctx)
	var cv convergence
	done := make(chan struct{})
	url := c.EdgeURL(ctx, i) + "/readyz"
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if r, err := getReadyz(ctx, url); err == nil {
				cv.polls++
				if f := r.feed(events.DocsBucket); f != nil && f.HeadError == "" && f.HeadKnown {
					if cv.headAgain == 0 {
						cv.headAgain, cv.firstBehind = time.Since(since), f.Behind
					}
					cv.maxBehind = max(cv.maxBehind, f.Behind)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() convergence {
		cancel()
		<-done
		return cv
	}
}

// partitionHold is how long the edge stays cut off at least: 45s, or
// $CUE_E2E_PARTITION_HOLD (a Go duration). Past about six minutes the
// edge's NATS client itself declares the connection stale (two pings
// unanswered, two minutes apart) and keeps trying to reconnect while cut
// off.
func partitionHold(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv("CUE_E2E_PARTITION_HOLD")
	if v == "" {
		return 45 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("CUE_E2E_PARTITION_HOLD: %v", err)
	}
	return d
}

// logConnectivity logs what n said about its NATS connection and its
// watches: how the partition looked from inside.
func logConnectivity(ctx context.Context, t *testing.T, n *Node) {
	t.Helper()
	logs, err := n.C.Logs(ctx)
	if err != nil {
		t.Logf("%s logs: %v", n.Name, err)
		return
	}
	defer logs.Close()
	var lines []string
	sc := bufio.NewScanner(logs)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "nats") || strings.Contains(l, "watch") || strings.Contains(l, "head") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 30 {
		lines = append(lines[:15], append([]string{fmt.Sprintf("… %d more …", len(lines)-30)}, lines[len(lines)-15:]...)...)
	}
	t.Logf("%s on its connection and watches:\n%s", n.Name, strings.Join(lines, "\n"))
}

// latestVersions keeps the last of files for each repo/path.
func latestVersions(files []File) []File {
	idx := map[string]int{}
	var out []File
	for _, f := range files {
		k := f.Repo + "/" + f.Path
		if j, ok := idx[k]; ok {
			out[j] = f
			continue
		}
		idx[k] = len(out)
		out = append(out, f)
	}
	return out
}

// cutOff accepts a /readyz report of an edge that knows it is cut off: it
// still answers ready, says it lags, cannot read the cue_docs head, and
// has applied nothing past applied.
func cutOff(applied uint64) func(readyReport) error {
	return func(r readyReport) error {
		f := r.feed(events.DocsBucket)
		switch {
		case f == nil:
			return fmt.Errorf("no cue_docs feed: %+v", r.Feeds)
		case !r.Ready:
			return errors.New("not ready: a cut-off edge should still answer from its copy")
		case f.Applied != applied:
			return fmt.Errorf("cue_docs applied %d, was %d before the cut", f.Applied, applied)
		case !r.Lagging || f.HeadError == "":
			return fmt.Errorf("lagging %v, cue_docs head_error %q", r.Lagging, f.HeadError)
		}
		return nil
	}
}

// readyReport is the part of an edge's /readyz body the scenario reads.
type readyReport struct {
	Ready   bool        `json:"ready"`
	Lagging bool        `json:"lagging"`
	Feeds   []readyFeed `json:"feeds"`
}

type readyFeed struct {
	Feed           string  `json:"feed"`
	Applied        uint64  `json:"applied"`
	Head           uint64  `json:"head"`
	Behind         uint64  `json:"behind"`
	HeadKnown      bool    `json:"head_known"`
	HeadAgeSeconds float64 `json:"head_age_seconds"`
	HeadError      string  `json:"head_error"`
}

func (r readyReport) feed(name string) *readyFeed {
	for i := range r.Feeds {
		if r.Feeds[i].Feed == name {
			return &r.Feeds[i]
		}
	}
	return nil
}

// edgeGet GETs path of edge i's HTTP endpoint, its host port asked again
// each time (a network change moves it).
func edgeGet(ctx context.Context, c *Cluster, i int, path string) (int, []byte, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, c.EdgeURL(ctx, i)+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// getReadyz reads a /readyz report at url; a 503 must say not ready,
// a 200 ready.
func getReadyz(ctx context.Context, url string) (readyReport, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return readyReport{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return readyReport{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return readyReport{}, err
	}
	var r readyReport
	if err := json.Unmarshal(body, &r); err != nil {
		return readyReport{}, fmt.Errorf("/readyz %d %q: %w", resp.StatusCode, body, err)
	}
	if r.Ready != (resp.StatusCode == http.StatusOK) {
		return readyReport{}, fmt.Errorf("/readyz answered %d with ready=%v", resp.StatusCode, r.Ready)
	}
	return r, nil
}

// waitReadyz polls edge i's /readyz until ok accepts its report, which it
// returns. The edge's host port is asked again after a failed request: a
// network change moves it.
func waitReadyz(ctx context.Context, t *testing.T, c *Cluster, i int, timeout time.Duration, what string, ok func(readyReport) error) readyReport {
	t.Helper()
	var last readyReport
	url := ""
	eventually(ctx, t, timeout, what, func() error {
		if url == "" {
			url = c.EdgeURL(ctx, i) + "/readyz"
		}
		r, err := getReadyz(ctx, url)
		if err != nil {
			url = ""
			return err
		}
		if err := ok(r); err != nil {
			return err
		}
		last = r
		return nil
	})
	return last
}

// scrapeMetrics reads edge i's /metrics: each sample's name with its
// labels, as written, to its value.
func scrapeMetrics(ctx context.Context, t *testing.T, c *Cluster, i int) map[string]float64 {
	t.Helper()
	code, body, err := edgeGet(ctx, c, i, "/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("edge%d /metrics: %d %v", i+1, code, err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		k := strings.LastIndexByte(line, ' ')
		if k < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[k+1:], 64); err == nil {
			out[line[:k]] = v
		}
	}
	return out
}

// docsHead is cue_docs' head revision as the cluster has it.
func docsHead(ctx context.Context, t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	st, err := js.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatalf("cue_docs stream: %v", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatalf("cue_docs stream: %v", err)
	}
	return info.State.LastSeq
}

// bearer adds the edges' token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// edgeSession opens an MCP session with edge i over Streamable HTTP, as an
// agent would, with the edges' bearer token.
func edgeSession(ctx context.Context, t *testing.T, c *Cluster, i int) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil)
	var cs *mcp.ClientSession
	eventually(ctx, t, 30*time.Second, fmt.Sprintf("MCP session with edge%d", i+1), func() error {
		var err error
		cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:             c.EdgeURL(ctx, i) + "/mcp",
			HTTPClient:           &http.Client{Transport: bearer{c.EdgeToken()}, Timeout: 30 * time.Second},
			DisableStandaloneSSE: true,
		}, nil)
		return err
	})
	t.Cleanup(func() { cs.Close() })
	return cs
}

// readDocsMCP asks an MCP session for every file with read_doc and returns
// the version each answer names; an error answer is named by its message,
// "!" first, as readDocs does.
func readDocsMCP(ctx context.Context, cs *mcp.ClientSession, files []File) ([]Version, error) {
	out := make([]Version, len(files))
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for j := range next {
				f := files[j]
				v, err := readDocMCP(ctx, cs, f)
				if err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					continue
				}
				out[j] = v
			}
		})
	}
	for j := range files {
		next <- j
	}
	close(next)
	wg.Wait()
	return out, first
}

func readDocMCP(ctx context.Context, cs *mcp.ClientSession, f File) (Version, error) {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "read_doc", Arguments: map[string]string{"path": f.Repo + "/" + f.Path}})
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we):
		return Version{Repo: f.Repo, Path: f.Path, Hash: "!" + we.Message}, nil
	case err != nil:
		return Version{}, fmt.Errorf("read_doc %s/%s: %w", f.Repo, f.Path, err)
	case res.IsError:
		return Version{Repo: f.Repo, Path: f.Path, Hash: "!tool error"}, nil
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	var d struct{ Repo, Path, Hash string }
	if err := json.Unmarshal([]byte(text.String()), &d); err != nil {
		return Version{}, fmt.Errorf("read_doc %s/%s: answer %q: %w", f.Repo, f.Path, text.String(), err)
	}
	return Version{Repo: d.Repo, Path: d.Path, Hash: d.Hash}, nil
}
