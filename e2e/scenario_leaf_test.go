package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// laptopPassword is the leaf user's password on the test cluster.
const laptopPassword = "e2e-laptop-leaf-password"

// laptopPermissions reads the laptop user's permissions from
// deployments/nats/accounts.conf, the file the deployment runs with, so
// the leaf here is held to the same lists: what it may publish into the
// team, and what the team may send it.
func laptopPermissions(t *testing.T) (publish, subscribe []string) {
	t.Helper()
	b, err := os.ReadFile("../deployments/nats/accounts.conf")
	if err != nil {
		t.Fatal(err)
	}
	// Comments out, so that quoted words in them do not count.
	text := regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(string(b), "")
	m := regexp.MustCompile(`(?s)user: laptop,.*?publish: \{ allow: \[(.*?)\] \}.*?subscribe: \{ allow: \[(.*?)\] \}`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("accounts.conf: no laptop user with publish and subscribe allow lists")
	}
	quoted := regexp.MustCompile(`"([^"]+)"`)
	for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
		publish = append(publish, q[1])
	}
	for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
		subscribe = append(subscribe, q[1])
	}
	return publish, subscribe
}

// leafUsers is the servers' authorization: team clients (the roles, the
// test) connect without credentials as "team"; a leaf node authenticates
// as "laptop" and gets the deployment's laptop permissions, with the query
// prefix the deployment's edges serve (cue.query) replaced by this
// cluster's edge prefix. For a leaf, publish is what the laptop may send
// into the team, subscribe what the team may send to the laptop.
func leafUsers(publish, subscribe []string, teamPrefix string) string {
	list := func(subjects []string) string {
		q := make([]string, len(subjects))
		for i, s := range subjects {
			if s == "cue.query.>" {
				s = teamPrefix + ".>"
			}
			q[i] = fmt.Sprintf("%q", s)
		}
		return strings.Join(q, ", ")
	}
	return fmt.Sprintf(`
authorization {
  users = [
    { user: team, password: e2e-team }
    { user: laptop, password: %q, permissions: {
        publish: { allow: [%s] }
        subscribe: { allow: [%s] } } }
  ]
}
no_auth_user: team
`, laptopPassword, list(publish), list(subscribe))
}

// binaries are the host's `cue` and `cue-engine`, built by `make images`
// (or `make build`) into bin/.
func binaries(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"cue", "cue-engine"} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() {
			t.Fatalf("%s/%s is missing: run `make images IMAGE_TAG=%s` (or `make build`) in the repository first", dir, b, tag())
		}
	}
	return dir
}

// laptop is a `cue up` running on the host, its log in a file.
type laptop struct {
	dir, logPath string
	env          []string
	cmd          *exec.Cmd
	done         chan error
	info         workspace.DaemonInfo
}

func (l *laptop) log() string {
	b, _ := os.ReadFile(l.logPath)
	s := string(b)
	if len(s) > 16<<10 {
		s = "…" + s[len(s)-16<<10:]
	}
	return s
}

// startLaptop runs `cue up` on dir as a subprocess until the test ends
// (SIGTERM, then SIGKILL), and waits for its daemon file.
func startLaptop(ctx context.Context, t *testing.T, cue, dir string, env []string) *laptop {
	t.Helper()
	l := &laptop{dir: dir, logPath: filepath.Join(t.TempDir(), "cue-up.log"), env: env, done: make(chan error, 1)}
	logf, err := os.Create(l.logPath)
	if err != nil {
		t.Fatal(err)
	}
	l.cmd = exec.Command(cue, "up", "--workspace", dir, "--log-level", "info")
	l.cmd.Env, l.cmd.Stdout, l.cmd.Stderr = env, logf, logf
	if err := l.cmd.Start(); err != nil {
		t.Fatalf("cue up: %v", err)
	}
	go func() { l.done <- l.cmd.Wait(); logf.Close() }()
	t.Cleanup(func() {
		l.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-l.done:
		case <-time.After(30 * time.Second):
			l.cmd.Process.Kill()
			<-l.done
		}
		if t.Failed() {
			t.Logf("cue up log (tail):\n%s", l.log())
		}
	})
	ws := &workspace.Workspace{Root: dir}
	eventually(ctx, t, 90*time.Second, "cue up ready", func() error {
		select {
		case err := <-l.done:
			l.done <- err
			t.Fatalf("cue up exited: %v\n%s", err, l.log())
		default:
		}
		info, err := ws.ReadDaemonInfo()
		if err != nil {
			return err
		}
		l.info = info
		return nil
	})
	return l
}

// leafCount is how many leaf nodes server n1 has, from its monitoring port.
func leafCount(ctx context.Context, c *Cluster) (int, error) {
	ep, err := c.NATS[0].C.PortEndpoint(ctx, "8222/tcp", "http")
	if err != nil {
		return 0, err
	}
	resp, err := http.Get(ep + "/leafz")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var z struct {
		Leafs []struct {
			Name    string `json:"name"`
			Account string `json:"account"`
		} `json:"leafs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&z); err != nil {
		return 0, err
	}
	return len(z.Leafs), nil
}

// writeAtomic puts files into the workspace as editors save them: a
// temporary file elsewhere renamed into place, so ingest never sees half
// a file.
func writeAtomic(t *testing.T, root, tmp string, files []File) {
	t.Helper()
	for i, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		tp := filepath.Join(tmp, fmt.Sprintf("w%d", i))
		if err := os.WriteFile(tp, []byte(f.Content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tp, p); err != nil {
			t.Fatal(err)
		}
	}
}

// localReadDoc asks the laptop's own daemon (its local prefix, on its
// embedded server) for path.
func localReadDoc(ctx context.Context, nc *nats.Conn, prefix, path string) (ToolReply, error) {
	data, _ := json.Marshal(map[string]string{"path": path})
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := nc.RequestWithContext(rctx, prefix+".read_doc", data)
	if err != nil {
		return ToolReply{}, err
	}
	var r ToolReply
	err = json.Unmarshal(msg.Data, &r)
	return r, err
}

// TestClusterLaptopLeaf is scenario 7: a laptop-mode `cue up` on the host,
// its embedded NATS joined to the cluster as a leaf node with the
// deployment's laptop permissions. Files saved in the laptop's workspace
// reach the team's index through the leaf, and both team edges serve
// every version saved, once each; the laptop's `cue mcp` answers from the
// team's edges: a file only the team has (the team's events never reach
// the laptop, whose own daemon does not know it) is read and found.
func TestClusterLaptopLeaf(t *testing.T) {
	bin := binaries(t)
	teamPrefix := EdgePrefix(0)
	pub, sub := laptopPermissions(t)
	s := StartScenario(t, 8*time.Minute, ClusterOptions{Indexers: 1, Edges: 2, NATSConfig: leafUsers(pub, sub, teamPrefix)})
	ctx, c, nc, js := s.Ctx, s.C, s.NC, s.JS
	t.Logf("leaf user: publish %v, subscribe %v (%s in place of cue.query.>)", pub, sub, teamPrefix+".>")

	// The laptop's workspace, set up as a person would: cue init, then
	// the config joining the team.
	home := t.TempDir()
	dir := filepath.Join(t.TempDir(), "laptop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "CUE_RATE_LIMITS=off")
	cue := filepath.Join(bin, "cue")
	initCmd := exec.Command(cue, "init", "--workspace", dir)
	initCmd.Env = env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("cue init: %v\n%s", err, out)
	}
	leafPort, err := c.NATS[0].C.MappedPort(ctx, "7422/tcp")
	if err != nil {
		t.Fatal(err)
	}
	const repo = "laptop"
	config := fmt.Sprintf(`[workspace]
name = %q

[ingest]
debounce = "200ms"

[nats]
leaf_remotes = ["nats-leaf://laptop:%s@127.0.0.1:%d"]
team_query_prefix = %q

[mcp]
query_token = %q

[embed]
model = "none"

[transcripts]
disabled = true
`, repo, laptopPassword, leafPort.Num(), teamPrefix, c.EdgeToken())
	if err := os.WriteFile(filepath.Join(dir, ".cuedeck", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}

	upStart := time.Now()
	lap := startLaptop(ctx, t, cue, dir, env)
	t.Logf("cue up ready in %s: query prefix %s, team prefix %s, NATS %s",
		time.Since(upStart).Round(time.Millisecond), lap.info.QueryPrefix, lap.info.TeamQueryPrefix, lap.info.NATSURL)
	if lap.info.TeamQueryPrefix != teamPrefix || lap.info.QueryPrefix == teamPrefix {
		t.Fatalf("daemon file: query prefix %q, team prefix %q", lap.info.QueryPrefix, lap.info.TeamQueryPrefix)
	}
	eventually(ctx, t, 60*time.Second, "n1 lists the laptop's leaf", func() error {
		n, err := leafCount(ctx, c)
		if err == nil && n == 0 {
			err = fmt.Errorf("no leaf yet")
		}
		return err
	})
	t.Logf("leaf connected %s after cue up started", time.Since(upStart).Round(time.Millisecond))

	// Events cross the leaf as plain NATS messages: only once the team's
	// stream interest has reached the laptop. A first file, saved and
	// saved again until the team serves it, shows that it has (what the
	// laptop ingests before that stays on the laptop).
	tmp := t.TempDir()
	probe := File{Repo: repo, Path: "probe.md", Content: "# Probe\n\nThe leaf carries laptop events."}
	saves := 0
	for served := false; !served; {
		if saves == 5 {
			t.Fatalf("the laptop's probe file saved %d times never reached the team", saves)
		}
		saves++
		probe.Content += fmt.Sprintf("\n\nSave %d.", saves)
		writeAtomic(t, dir, tmp, []File{probe})
		deadline := time.Now().Add(20 * time.Second)
		for !served && time.Now().Before(deadline) && ctx.Err() == nil {
			r, err := c.EdgeCall(ctx, nc, 0, "read_doc", map[string]string{"path": repo + "/" + probe.Path})
			var d struct{ Hash string }
			if err == nil && r.Error == nil && json.Unmarshal(r.Result, &d) == nil && d.Hash == probe.Version().Hash {
				served = true
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("the leaf carries laptop events %s after cue up started (probe saved %d times)", time.Since(upStart).Round(time.Millisecond), saves)

	// (1) The laptop's files reach both team edges: a batch saved, then
	// every fifth file edited. Acknowledged: every version saved (the
	// laptop's ingest publishes each); observed: the team's cue_docs
	// writes and the team edges' read_doc answers.
	files := Corpus(7, "b1", []string{repo}, 300)
	batchStart := time.Now()
	writeAtomic(t, dir, tmp, files)
	acked := NewChecker()
	for _, f := range files {
		acked.Ack(f.Version())
	}
	latest := map[string]File{}
	for _, f := range files {
		latest[f.Path] = f
	}
	waitLaptopWrites(ctx, t, s.Writes, acked, 3*time.Minute)
	var edited []File
	for i, f := range files {
		if i%5 == 0 {
			f.Content += "\n\nEdited on the laptop: " + words[i%len(words)] + "."
			edited = append(edited, f)
			latest[f.Path] = f
			acked.Ack(f.Version())
		}
	}
	writeAtomic(t, dir, tmp, edited)
	waitLaptopWrites(ctx, t, s.Writes, acked, 3*time.Minute)
	indexed := time.Since(batchStart)
	var want []File
	for _, f := range latest {
		want = append(want, f)
	}
	docs := markdown(want)
	for i := range c.Edges {
		waitEdgeServes(ctx, t, c, nc, i, docs, 2*time.Minute)
	}
	t.Logf("%d laptop files and %d edits: indexed by the team in %s, served by both team edges in %s",
		len(files), len(edited), indexed.Round(time.Millisecond), time.Since(batchStart).Round(time.Millisecond))
	checkLaptopWrites(t, s.Writes, acked, repo)
	for i := range c.Edges {
		checkEdge(ctx, t, c, nc, i, acked, docs)
	}

	// (2) A file only the team has, published into the team from the host
	// in a repo the laptop does not have.
	teamOnly := File{Repo: "teamonly", Path: "notes/leaf-proof.md",
		Content: "# Leaf proof\n\nThe quokka ledger of zanzibar lives only on the team's edges."}
	teamAcked := NewChecker()
	Publish(ctx, t, js, []File{teamOnly}, teamAcked)
	waitEdgeServes(ctx, t, c, nc, 0, []File{teamOnly}, time.Minute)

	// The laptop's own daemon does not have it (team events never flow to
	// the laptop), while it does have the laptop's files.
	lnc, err := nats.Connect(lap.info.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer lnc.Close()
	if r, err := localReadDoc(ctx, lnc, lap.info.QueryPrefix, teamOnly.Repo+"/"+teamOnly.Path); err != nil || r.Error == nil || r.Error.Code != tools.CodeFileNotFound {
		t.Fatalf("the laptop's own daemon should not have the team's file: %v %s %+v", err, r.Result, r.Error)
	}
	if r, err := localReadDoc(ctx, lnc, lap.info.QueryPrefix, repo+"/"+docs[0].Path); err != nil || r.Error != nil {
		t.Fatalf("the laptop's own daemon should have its file %s: %v %+v", docs[0].Path, err, r.Error)
	}

	// `cue mcp` over stdio, as an agent on the laptop runs it.
	mcpStart := time.Now()
	mcpLog := &logtest.Buffer{}
	cmd := exec.Command(cue, "mcp", "--workspace", dir)
	cmd.Env, cmd.Stderr = append(env, "CUE_LOG_LEVEL=info"), mcpLog
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-laptop", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("cue mcp: %v", err)
	}
	defer cs.Close()
	callText := func(tool string, args map[string]any) (string, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) == 0 {
			return "", fmt.Errorf("%s: error result %+v", tool, res.Content)
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	text, err := callText("read_doc", map[string]any{"path": teamOnly.Repo + "/" + teamOnly.Path})
	if err != nil {
		t.Fatalf("cue mcp read_doc of the team's file: %v\ncue mcp log:\n%s", err, mcpLog)
	}
	var doc struct{ Repo, Path, Hash string }
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	mcpChk := NewChecker()
	mcpChk.Ack(teamOnly.Version())
	mcpChk.Observe(Version{Repo: doc.Repo, Path: doc.Path, Hash: doc.Hash})
	text, err = callText("read_context", map[string]any{"query": "quokka ledger zanzibar", "limit": 5})
	if err != nil {
		t.Fatalf("cue mcp read_context: %v", err)
	}
	var hits []struct{ Repo, Path, Hash string }
	if err := json.Unmarshal([]byte(text), &hits); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range hits {
		if h.Repo == teamOnly.Repo && h.Path == teamOnly.Path {
			found = h.Hash == teamOnly.Version().Hash
		}
	}
	if !found {
		t.Errorf("cue mcp read_context did not find %s: %s", teamOnly.Version().Key(), text)
	}
	// And a laptop file, through the team too.
	text, err = callText("read_doc", map[string]any{"path": repo + "/" + docs[1].Path})
	if err != nil {
		t.Fatalf("cue mcp read_doc of a laptop file: %v", err)
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	mcpChk.Ack(docs[1].Version())
	mcpChk.Observe(Version{Repo: doc.Repo, Path: doc.Path, Hash: doc.Hash})
	r := mcpChk.Report()
	t.Logf("checker cue mcp read_doc: %s", r)
	if !r.OK() || len(r.Unexpected) > 0 {
		t.Errorf("cue mcp read_doc: %s", r)
	}
	if l := mcpLog.String(); !strings.Contains(l, "answering from team") || strings.Contains(l, "answering from local") {
		t.Errorf("cue mcp should say it answers from the team:\n%s", l)
	}
	t.Logf("cue mcp answered from the team's edges (read_doc, read_context) in %s", time.Since(mcpStart).Round(time.Millisecond))

	// No team edge of the prefix serves (edge1 stopped): the same `cue mcp`
	// answers from the laptop's own daemon, which has the laptop's files
	// and not the team's.
	stopAt := time.Now()
	if err := c.Edges[0].Stop(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, time.Minute, "cue mcp answers from the laptop with edge1 stopped", func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_doc", Arguments: map[string]any{"path": teamOnly.Repo + "/" + teamOnly.Path}})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != tools.CodeFileNotFound {
			return fmt.Errorf("read_doc of the team's file: %v %+v", err, res)
		}
		return nil
	})
	text, err = callText("read_doc", map[string]any{"path": repo + "/" + docs[2].Path})
	if err != nil {
		t.Fatalf("cue mcp read_doc of a laptop file with edge1 stopped: %v", err)
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil || doc.Hash != docs[2].Version().Hash {
		t.Fatalf("cue mcp read_doc of a laptop file from the laptop: %s %v", text, err)
	}
	if !strings.Contains(mcpLog.String(), "answering from local") {
		t.Errorf("cue mcp should log that it answers from the laptop:\n%s", mcpLog)
	}
	t.Logf("with edge1 stopped, cue mcp answered from the laptop's daemon %s later", time.Since(stopAt).Round(time.Millisecond))

	// The laptop kept within its permissions: the team refused nothing,
	// and the laptop's server heard of no refusal.
	for _, n := range c.NATS {
		if v := violations(ctx, t, n); v != "" {
			t.Errorf("%s logged permission violations:\n%s", n.Name, v)
		}
	}
	if l := lap.log(); strings.Contains(l, "Violation") {
		t.Errorf("the laptop's cue up logged a violation:\n%s", l)
	}
	s.Done()
}

// violations is the lines of n's log that report a permissions (or any
// protocol) violation.
func violations(ctx context.Context, t *testing.T, n *Node) string {
	t.Helper()
	logs, err := n.C.Logs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var b strings.Builder
	buf := new(bytes.Buffer)
	buf.ReadFrom(logs)
	for _, line := range strings.Split(buf.String(), "\n") {
		// A hub logs a leaf's as "Publish Violation on ..." or
		// "Subscription Violation on ...".
		if strings.Contains(line, "Violation") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// waitLaptopWrites waits until the team's cue_docs has a write of every
// acknowledged version's newest.
func waitLaptopWrites(ctx context.Context, t *testing.T, w *DocsWrites, acked *Checker, timeout time.Duration) {
	t.Helper()
	eventually(ctx, t, timeout, "the team indexes every laptop version", func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		missing := 0
		var example Version
		for _, v := range acked.latest {
			if w.seen[v] == 0 {
				missing++
				example = v
			}
		}
		if missing > 0 {
			return fmt.Errorf("%d versions not written yet, e.g. %s", missing, example)
		}
		return nil
	})
}

// checkLaptopWrites runs the set checker on the team's cue_docs writes of
// the laptop's files (other files of the workspace, cue init's, are
// counted apart), prints its counts and fails on anything lost,
// duplicated or unexpected.
func checkLaptopWrites(t *testing.T, w *DocsWrites, acked *Checker, repo string) {
	t.Helper()
	keys := map[string]bool{}
	for k := range acked.latest {
		keys[k] = true
	}
	chk := NewChecker()
	for v := range acked.acked {
		chk.Ack(v)
	}
	var others []string
	w.mu.Lock()
	for v, n := range w.seen {
		switch {
		case keys[v.Key()]:
			for range n {
				chk.Observe(v)
			}
		case v.Repo == repo:
			others = append(others, v.Path)
		}
	}
	w.mu.Unlock()
	slices.Sort(others)
	r := chk.Report()
	t.Logf("checker team cue_docs writes of the laptop's files: %s (other laptop files indexed: %v)", r, others)
	if !r.OK() || len(r.Unexpected) > 0 {
		t.Errorf("team cue_docs writes of the laptop's files: %s", r)
	}
	// The workspace config holds the leaf's password and the query token.
	if slices.Contains(others, ".cuedeck/config.toml") {
		t.Errorf("the laptop published its .cuedeck/config.toml to the team")
	}
}
