package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Cluster is a team topology on a private Docker network: a three-node
// NATS JetStream cluster (file storage, sync_interval always, routes
// between all three) and the role containers on top, every role with
// --replicas 3. Scenarios reach it from the host through mapped ports:
// Connect for NATS, EdgeQuery for an edge's tools over NATS, EdgeURL for
// its HTTP MCP and operations endpoints.
type Cluster struct {
	t          testing.TB
	Net        *testcontainers.DockerNetwork
	NATS       []*Node // n1, n2, n3
	Indexers   []*Node
	Extractors []*Node
	Edges      []*Node
	Ingest     *Node // nil unless ClusterOptions.Repos
	docker     *testcontainers.DockerClient
	opts       ClusterOptions

	// EdgeNet is the edges' second network: nil unless ClusterOptions.EdgeNet.
	EdgeNet *testcontainers.DockerNetwork

	// warnings holds, per role of a failed run, the last warning and
	// error lines of its log (dumpLogs), for failureDigest.
	warningsMu sync.Mutex
	warnings   map[string][]string
}

// ClusterOptions say which roles to start on the NATS cluster.
type ClusterOptions struct {
	Indexers int
	Edges    int
	// Repos, repo name to host directory, starts an ingest container
	// watching each, bind-mounted read-only at /repos/<name>. The
	// directories must be readable by uid 65534 (the images' user).
	Repos map[string]string
	// ReposWritable mounts the repos read-write, for card write-back: the
	// directories must then be writable by uid 65534.
	ReposWritable bool
	// Extractors to start, with ExtractorArgs after the common flags.
	Extractors    int
	ExtractorArgs []string
	// EdgeArgs come after the edges' common flags (a later flag wins).
	EdgeArgs []string
	// IngestArgs come after the ingest container's common flags.
	IngestArgs []string
	// IndexerArgs come after the indexers' common flags.
	IndexerArgs []string
	// EdgeRestart gives the edges compose's restart policy
	// (unless-stopped): an edge that stops itself is started again by
	// Docker, in the same container with the same /data/edge.
	EdgeRestart bool
	// NATSConfig is appended to every NATS server's configuration (e.g.
	// users for the leaf listener).
	NATSConfig string
	// EdgeNet puts the edges on a second network of their own besides the
	// cluster's. Docker maps a port through any network the container is
	// on, so an edge Disconnected from the cluster's network still answers
	// at EdgeURL (on another host port: ask again); with the cluster's
	// network its only one, it has no mapped port until Reconnect.
	EdgeNet bool
}

// natsURLs is the roles' view of the cluster: every server by alias.
const natsURLs = "nats://n1:4222,nats://n2:4222,nats://n3:4222"

// Node is one container of the cluster, by its network alias.
type Node struct {
	Name string
	C    *testcontainers.DockerContainer
	c    *Cluster
}

// clusterToken is the edges' bearer token: the edges bind HTTP beyond
// loopback (so a mapped port reaches them), which requires tokens, and with
// tokens every NATS call carries one too.
const clusterToken = "e2e-cluster-token-0123456789abcdef"

// EdgePrefix is the query-service prefix of edge i (0-based): each edge
// has its own, so a scenario can ask one edge and compare with the other.
func EdgePrefix(i int) string { return fmt.Sprintf("cue.edge%d", i+1) }

func natsConfig(name string) string {
	return fmt.Sprintf(`server_name: %s
listen: 0.0.0.0:4222
http: 0.0.0.0:8222
jetstream {
  store_dir: /data/js
  sync_interval: always
}
cluster {
  name: cuedeck
  listen: 0.0.0.0:6222
  routes: [nats://n1:6222, nats://n2:6222, nats://n3:6222]
}
leafnodes {
  listen: 0.0.0.0:7422
}
`, name)
}

// StartCluster brings the topology up and registers its teardown with
// t.Cleanup. It returns once JetStream has a meta leader and every role
// has logged that it runs.
func StartCluster(ctx context.Context, t testing.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	nw, err := network.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Remove(context.Background()) })
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.Close() })
	c := &Cluster{t: t, Net: nw, docker: dc, opts: opts}
	// Registered before any container's, so it runs after their logs
	// were dumped: the digest is the last thing a failed test prints.
	t.Cleanup(c.failureDigest)

	// The three servers start together: each waits for its routes.
	type started struct {
		i   int
		n   *Node
		err error
	}
	ch := make(chan started, 3)
	for i := range 3 {
		name := fmt.Sprintf("n%d", i+1)
		go func() {
			n, err := c.start(ctx, "cuedeck/nats:"+tag(), name,
				testcontainers.WithFiles(testcontainers.ContainerFile{
					Reader: strings.NewReader(natsConfig(name) + opts.NATSConfig), ContainerFilePath: "/etc/nats.conf", FileMode: 0o644}),
				testcontainers.WithCmd("-c", "/etc/nats.conf"),
				testcontainers.WithExposedPorts("4222/tcp", "8222/tcp", "7422/tcp"),
				testcontainers.WithWaitStrategy(wait.ForLog("Server is ready").WithStartupTimeout(60*time.Second)))
			ch <- started{i, n, err}
		}()
	}
	c.NATS = make([]*Node, 3)
	for range 3 {
		s := <-ch
		if s.err != nil {
			t.Fatalf("start NATS n%d: %v", s.i+1, s.err)
		}
		c.NATS[s.i] = s.n
	}
	nc := c.Connect(ctx)
	js, _ := jetstream.New(nc)
	c.eventually(ctx, 60*time.Second, "JetStream meta leader elected", func() error {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := js.AccountInfo(actx)
		return err
	})
	nc.Close()

	for i := range opts.Indexers {
		// Keyword search only: embedding thousands of files with the
		// built-in model would take the 2-core runner minutes.
		n, err := c.start(ctx, "cuedeck/indexer:"+tag(), fmt.Sprintf("indexer%d", i+1),
			testcontainers.WithCmd(append([]string{"--nats", natsURLs, "--replicas", "3", "--embed-model", "none"}, opts.IndexerArgs...)...),
			testcontainers.WithWaitStrategy(wait.ForLog("indexer running").WithStartupTimeout(90*time.Second)))
		if err != nil {
			t.Fatalf("start indexer%d: %v", i+1, err)
		}
		c.Indexers = append(c.Indexers, n)
	}
	for i := range opts.Extractors {
		n, err := c.start(ctx, "cuedeck/extractor:"+tag(), fmt.Sprintf("extractor%d", i+1),
			testcontainers.WithCmd(append([]string{"--nats", natsURLs, "--replicas", "3"}, opts.ExtractorArgs...)...),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				// A model server the test runs on the host.
				hc.ExtraHosts = append(hc.ExtraHosts, "host.docker.internal:host-gateway")
			}),
			testcontainers.WithWaitStrategy(wait.ForLog("extractor starting").WithStartupTimeout(90*time.Second)))
		if err != nil {
			t.Fatalf("start extractor%d: %v", i+1, err)
		}
		c.Extractors = append(c.Extractors, n)
	}
	c.Edges = make([]*Node, opts.Edges)
	for i := range opts.Edges {
		if err := c.StartEdge(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if len(opts.Repos) > 0 {
		args := []string{"--nats", natsURLs, "--replicas", "3", "--state-dir", "/data/ingest", "--no-transcripts"}
		var binds []string
		for name, dir := range opts.Repos {
			args = append(args, "--repo", name+"=/repos/"+name)
			mode := ":ro"
			if opts.ReposWritable {
				mode = ":rw"
			}
			binds = append(binds, dir+":/repos/"+name+mode)
		}
		n, err := c.start(ctx, "cuedeck/ingest:"+tag(), "ingest",
			testcontainers.WithCmd(append(args, opts.IngestArgs...)...),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.Binds = append(hc.Binds, binds...) }),
			testcontainers.WithWaitStrategy(wait.ForLog("ingest running").WithStartupTimeout(90*time.Second)))
		if err != nil {
			t.Fatalf("start ingest: %v", err)
		}
		c.Ingest = n
	}
	return c
}

// StartEdge starts edge i (0-based) as a new container under its alias,
// with an empty state directory: at cluster start, or in place of one
// whose container was removed (a lost volume).
func (c *Cluster) StartEdge(ctx context.Context, i int) error {
	tokens := fmt.Sprintf("[[tokens]]\nname = \"e2e\"\ntoken = %q\nrepos = [\"*\"]\n", clusterToken)
	args := []string{"--nats", natsURLs, "--replicas", "3", "--state-dir", "/data/edge",
		"--http", "0.0.0.0:8080", "--tokens", "/etc/cue-tokens.toml",
		"--query-prefix", EdgePrefix(i), "--embed-model", "none",
		// Scenarios poll faster than seed 002 lets an agent call.
		"--rate-limits", "off"}
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithFiles(testcontainers.ContainerFile{
			Reader: strings.NewReader(tokens), ContainerFilePath: "/etc/cue-tokens.toml", FileMode: 0o644}),
		testcontainers.WithCmd(append(args, c.opts.EdgeArgs...)...),
		testcontainers.WithExposedPorts("8080/tcp"),
		testcontainers.WithWaitStrategy(wait.ForLog("serving MCP").WithStartupTimeout(90 * time.Second)),
	}
	if c.opts.EdgeRestart {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.RestartPolicy = container.RestartPolicy{Name: container.RestartPolicyUnlessStopped}
		}))
	}
	if c.opts.EdgeNet {
		if c.EdgeNet == nil {
			nw, err := network.New(ctx)
			if err != nil {
				return fmt.Errorf("edge network: %w", err)
			}
			c.t.Cleanup(func() { nw.Remove(context.Background()) })
			c.EdgeNet = nw
		}
		opts = append(opts, network.WithNetwork([]string{fmt.Sprintf("edge%d", i+1)}, c.EdgeNet))
	}
	n, err := c.start(ctx, "cuedeck/mcp-edge:"+tag(), fmt.Sprintf("edge%d", i+1), opts...)
	if err != nil {
		return fmt.Errorf("start edge%d: %w", i+1, err)
	}
	c.Edges[i] = n
	return nil
}

func (c *Cluster) start(ctx context.Context, image, alias string, opts ...testcontainers.ContainerCustomizer) (*Node, error) {
	opts = append(opts, network.WithNetwork([]string{alias}, c.Net))
	tc, err := testcontainers.Run(ctx, image, opts...)
	if tc != nil {
		c.t.Cleanup(func() {
			if c.t.Failed() {
				c.noteWarnings(alias, dumpLogs(c.t, alias, tc))
			}
			testcontainers.TerminateContainer(tc)
		})
	}
	if err != nil {
		return nil, err
	}
	return &Node{Name: alias, C: tc, c: c}, nil
}

// dumpLogs logs the tail of a role's log and returns the whole of what
// it read.
func dumpLogs(t testing.TB, alias string, tc *testcontainers.DockerContainer) string {
	logs, err := tc.Logs(context.Background())
	if err != nil {
		return ""
	}
	defer logs.Close()
	b := new(strings.Builder)
	buf := make([]byte, 32<<10)
	limit := 256 << 10
	if os.Getenv("CUE_E2E_LOGDIR") != "" {
		limit = 64 << 20
	}
	for b.Len() < limit {
		n, err := logs.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	s := b.String()
	// The tail rarely holds the start of a fault: CUE_E2E_LOGDIR keeps
	// every role's whole log of a failed run.
	if dir := os.Getenv("CUE_E2E_LOGDIR"); dir != "" {
		name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + alias + ".log"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Logf("keep the logs of %s: %v", alias, err)
		}
	}
	whole := s
	if len(s) > 16<<10 {
		s = "…" + s[len(s)-16<<10:]
	}
	t.Logf("%s logs (tail):\n%s", alias, s)
	return whole
}

// digestLines is how many warning and error lines of each role the
// digest of a failed test keeps.
const digestLines = 6

// noteWarnings keeps the last warning and error lines of a role's log.
func (c *Cluster) noteWarnings(alias, log string) {
	var kept []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, "Error trying to connect to route") {
			continue // every server's start, before its peers listen
		}
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) ||
			strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") || strings.Contains(line, "[ERR]") {
			kept = append(kept, strings.TrimSpace(line))
		}
	}
	if len(kept) > digestLines {
		kept = kept[len(kept)-digestLines:]
	}
	c.warningsMu.Lock()
	defer c.warningsMu.Unlock()
	if c.warnings == nil {
		c.warnings = map[string][]string{}
	}
	c.warnings[alias] = kept
}

// failureDigest logs, for a failed test, why it failed (eventually's
// message) and each role's last warnings. The role logs dumped before it
// are tens of kilobytes, and CI shows only the end of a failed test's
// output: without the digest there, a rare failure says nothing of why.
func (c *Cluster) failureDigest() {
	if !c.t.Failed() {
		return
	}
	b := new(strings.Builder)
	fmt.Fprintf(b, "failure digest of %s:\n", c.t.Name())
	if why, ok := failedBecause.Load(c.t); ok {
		fmt.Fprintf(b, "  failed: %s\n", why)
	}
	c.warningsMu.Lock()
	defer c.warningsMu.Unlock()
	for _, alias := range slices.Sorted(maps.Keys(c.warnings)) {
		for _, line := range c.warnings[alias] {
			if len(line) > 400 {
				line = line[:400] + "…"
			}
			fmt.Fprintf(b, "  %s: %s\n", alias, line)
		}
	}
	c.t.Log(b.String())
}

// NATSURL is the comma-separated host-side URLs of the servers that run.
func (c *Cluster) NATSURL(ctx context.Context) string {
	var urls []string
	for _, n := range c.NATS {
		if ep, err := n.C.PortEndpoint(ctx, "4222/tcp", "nats"); err == nil {
			urls = append(urls, ep)
		}
	}
	return strings.Join(urls, ",")
}

// Connect connects the host to the cluster; closed at cleanup.
func (c *Cluster) Connect(ctx context.Context) *nats.Conn {
	c.t.Helper()
	nc, err := nats.Connect(c.NATSURL(ctx), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
		// Docker maps ports to the host, and the servers advertise their
		// in-network addresses, which the host cannot dial.
		nats.IgnoreDiscoveredServers())
	if err != nil {
		c.t.Fatalf("connect to the cluster: %v", err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

// EdgeURL is edge i's HTTP base URL from the host.
func (c *Cluster) EdgeURL(ctx context.Context, i int) string {
	ep, err := c.Edges[i].C.PortEndpoint(ctx, "8080/tcp", "http")
	if err != nil {
		c.t.Fatalf("edge%d http port: %v", i+1, err)
	}
	return ep
}

// EdgeToken is the bearer token every edge accepts.
func (c *Cluster) EdgeToken() string { return clusterToken }

// ToolReply is a query-service answer: the tool's result or its error.
type ToolReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// EdgeCall calls tool on edge i over NATS (its own query prefix).
func (c *Cluster) EdgeCall(ctx context.Context, nc *nats.Conn, i int, tool string, args any) (ToolReply, error) {
	data, err := json.Marshal(args)
	if err != nil {
		return ToolReply{}, err
	}
	msg := nats.NewMsg(EdgePrefix(i) + "." + tool)
	msg.Data = data
	msg.Header.Set("Authorization", "Bearer "+clusterToken)
	msg.Header.Set("Cue-Client", "e2e")
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reply, err := nc.RequestMsgWithContext(rctx, msg)
	if err != nil {
		return ToolReply{}, fmt.Errorf("%s on edge%d: %w", tool, i+1, err)
	}
	var r ToolReply
	if err := json.Unmarshal(reply.Data, &r); err != nil {
		return ToolReply{}, fmt.Errorf("%s on edge%d: reply %q: %w", tool, i+1, reply.Data, err)
	}
	return r, nil
}

// Stop stops n gracefully (SIGTERM, then SIGKILL after 10s).
func (n *Node) Stop(ctx context.Context) error {
	d := 10 * time.Second
	return n.C.Stop(ctx, &d)
}

// Kill sends SIGKILL: no shutdown path runs, as when a machine dies.
func (n *Node) Kill(ctx context.Context) error {
	_, err := n.c.docker.ContainerKill(ctx, n.C.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"})
	if err != nil {
		return fmt.Errorf("kill %s: %w", n.Name, err)
	}
	// Wait until Docker reports it stopped, so a Start that follows is a
	// restart and not a no-op on a dying container.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := n.C.State(ctx)
		if err == nil && !st.Running {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kill %s: still running after 30s", n.Name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Start starts a stopped or killed n again, with its filesystem as it was.
// Host ports may change: ask NATSURL/EdgeURL again afterwards.
func (n *Node) Start(ctx context.Context) error { return n.C.Start(ctx) }

// Restart stops n gracefully and starts it again.
func (n *Node) Restart(ctx context.Context) error {
	if err := n.Stop(ctx); err != nil {
		return err
	}
	return n.Start(ctx)
}

// Disconnect cuts n off the cluster's network (a partition: the process
// keeps running); Reconnect joins it again under its alias. Either may
// move n's mapped ports: ask NATSURL/EdgeURL again afterwards.
func (n *Node) Disconnect(ctx context.Context) error {
	_, err := n.c.docker.NetworkDisconnect(ctx, n.c.Net.ID, client.NetworkDisconnectOptions{Container: n.C.GetContainerID()})
	return err
}

// Reconnect joins n to the cluster's network again after Disconnect.
func (n *Node) Reconnect(ctx context.Context) error {
	_, err := n.c.docker.NetworkConnect(ctx, n.c.Net.ID, client.NetworkConnectOptions{
		Container: n.C.GetContainerID(), EndpointConfig: &mobynet.EndpointSettings{Aliases: []string{n.Name}}})
	return err
}

// eventually polls f until it returns nil, failing the test at timeout
// with f's last error.
func (c *Cluster) eventually(ctx context.Context, timeout time.Duration, what string, f func() error) {
	c.t.Helper()
	eventually(ctx, c.t, timeout, what, f)
}

// failedBecause holds, per test, the message eventually failed it with,
// for the cluster's failure digest.
var failedBecause sync.Map

func eventually(ctx context.Context, t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			failedBecause.Store(t, fmt.Sprintf("%s: not within %s: %v", what, timeout, err))
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
