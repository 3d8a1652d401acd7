package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/embed/provider"
	"github.com/cuedeck/cuedeck/internal/embedworker"
	"github.com/cuedeck/cuedeck/internal/indexer"
	"github.com/cuedeck/cuedeck/internal/ingest"
	"github.com/cuedeck/cuedeck/internal/mcpserver"
	"github.com/cuedeck/cuedeck/internal/query"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// answer is a read_context call as an agent sees it: the first text block
// (the seed's array of hits) and the blocks after it.
type answer struct {
	hits    []json.RawMessage
	notices []string
}

func readContext(t *testing.T, cs *mcp.ClientSession, args map[string]any) answer {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_context", Arguments: args})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("read_context %v: %+v, %v", args, res, err)
	}
	var a answer
	for i, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content block %d is %T, not text", i, c)
		}
		if i == 0 {
			// Clients that parse the first block as the seed's array
			// must keep working while indexing runs.
			if err := json.Unmarshal([]byte(tc.Text), &a.hits); err != nil {
				t.Fatalf("first block is not the array of hits: %q", tc.Text)
			}
			continue
		}
		a.notices = append(a.notices, tc.Text)
	}
	return a
}

// TestReadContextSaysHowFarIndexingGot runs the real ingest over a
// repository while the indexer and the embed worker are held back, and
// asks an edge through both transports agents use: Streamable HTTP, and
// `cue mcp`'s path (MCP over the NATS query service). While files wait for
// the indexer, an empty answer says so instead of a bare [], and hits come
// with how far indexing got; once indexed, only hybrid answers say that
// vectors trail; once embedded, no answer has a notice.
func TestReadContextSaysHowFarIndexingGot(t *testing.T) {
	root := t.TempDir()
	const files = 12
	for i := range files {
		body := fmt.Sprintf("# Page %d\n\nNotes on topic %d.\n", i, i)
		if i == 7 {
			body += "\nHow to moor a zeppelin in a crosswind.\n"
		}
		p := filepath.Join(root, "docs", fmt.Sprintf("p%02d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conn, srv := bustest.Start(t, bus.Settings{})
	emb, err := provider.Open(provider.Builtin, provider.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mat, err := edge.OpenOnWith(ctx, conn.JS, "", edge.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	indexing := telemetry.NewIndexing(conn.JS, mat, telemetry.IndexingOptions{Interval: 20 * time.Millisecond})
	edg := edge.New(mat, nil, edge.WithProgress(indexing.Progress))
	bustest.Run(t, "edge", mat.Run)
	bustest.Run(t, "indexing-progress", indexing.Run)

	// Streamable HTTP, as the daemon serves it.
	httpSrv := httptest.NewServer(mcpserver.HTTPHandler(mcpserver.New(edg, mcpserver.Options{}), mcpserver.HTTPOptions{}))
	t.Cleanup(httpSrv.Close)
	// `cue mcp`: MCP served by a query.Client that asks the edge over NATS.
	queryReady := make(chan struct{})
	bustest.Run(t, "query", func(ctx context.Context) error {
		return query.Serve(ctx, conn.NC, edg, query.Options{Ready: func() { close(queryReady) }})
	})
	<-queryReady
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	client, err := query.NewClient(nc, query.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	stdioCtx, stopStdio := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mcpserver.Serve(stdioCtx, mcpserver.New(client, mcpserver.Options{}), st) }()
	t.Cleanup(func() {
		stopStdio()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	sessions := map[string]*mcp.ClientSession{}
	for name, tr := range map[string]mcp.Transport{"http": &mcp.StreamableClientTransport{Endpoint: httpSrv.URL}, "nats": ct} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "progress-test", Version: "0"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions[name] = cs
	}

	ing, err := ingest.New(conn, ingest.Config{Repos: []ingest.RepoConfig{{Name: "app", Root: root}}, StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bustest.Run(t, "ingest", ing.Run)
	// Counts are exact once the scan has handed every file to the bus.
	<-ing.ScanDone()

	// Held indexer: every file waits in its consumer.
	want := fmt.Sprintf("no match yet: indexing 0 of %d files", files)
	for name, cs := range sessions {
		var a answer
		bustest.Eventually(t, 30*time.Second, name+": an empty answer says indexing has not caught up", func() bool {
			a = readContext(t, cs, map[string]any{"query": "zeppelin", "mode": "keyword"})
			return len(a.notices) == 1 && strings.HasPrefix(a.notices[0], want)
		})
		if len(a.hits) != 0 {
			t.Fatalf("%s: hits before indexing: %s", name, a.hits)
		}
		a = readContext(t, cs, map[string]any{"query": "zeppelin"})
		if len(a.notices) != 1 || !strings.HasPrefix(a.notices[0], want+"; vectors 0 %") {
			t.Fatalf("%s: hybrid notice while nothing is indexed: %q", name, a.notices)
		}
	}

	// The indexer catches up; the embed worker is still held.
	bustest.Run(t, "indexer", indexer.New(conn, indexer.Config{EmbedModel: emb.ModelID()}, nil).Run)
	for name, cs := range sessions {
		bustest.Eventually(t, 30*time.Second, name+": keyword answers without a notice once indexed", func() bool {
			a := readContext(t, cs, map[string]any{"query": "zeppelin", "mode": "keyword"})
			return len(a.hits) == 1 && len(a.notices) == 0
		})
		a := readContext(t, cs, map[string]any{"query": "zeppelin", "mode": "hybrid"})
		if len(a.hits) == 0 || len(a.notices) != 1 || !strings.HasPrefix(a.notices[0], fmt.Sprintf("vectors: 0 of %d documents (0 %%)", files)) {
			t.Fatalf("%s: hybrid answer while vectors trail: %d hits, notices %q", name, len(a.hits), a.notices)
		}
	}

	// The embed worker catches up: no notice in any mode.
	worker, err := embedworker.New(conn, emb, embedworker.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bustest.Run(t, "embedder", worker.Run)
	for name, cs := range sessions {
		bustest.Eventually(t, 60*time.Second, name+": hybrid answers without a notice once embedded", func() bool {
			a := readContext(t, cs, map[string]any{"query": "zeppelin", "mode": "hybrid"})
			return len(a.hits) > 0 && len(a.notices) == 0
		})
	}
	// The last vector's request may be acknowledged before this edge has
	// applied the vector itself: the reading converges a moment later.
	var p edge.Progress
	bustest.Eventually(t, 30*time.Second, "progress once caught up", func() bool {
		p = indexing.Progress()
		return p.Indexed == files && p.Pending == 0 && p.Vectors == files && p.VectorsPending == 0
	})
}

// TestIndexingCountsWhatARunningScanHasNotPublished: files a scan found and
// has not handed to the bus yet are pending; a running scan whose record
// is no longer rewritten, or a finished one, adds nothing.
func TestIndexingCountsWhatARunningScanHasNotPublished(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	ctx := context.Background()
	mat, err := edge.OpenOnWith(ctx, conn.JS, "", edge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bustest.Run(t, "edge", mat.Run)
	indexing := telemetry.NewIndexing(conn.JS, mat, telemetry.IndexingOptions{Interval: 10 * time.Millisecond})
	bustest.Run(t, "indexing-progress", indexing.Run)
	scans, err := conn.JS.KeyValue(ctx, events.ScansBucket)
	if err != nil {
		t.Fatal(err)
	}
	put := func(p events.ScanProgress) {
		b, _ := json.Marshal(p)
		if _, err := scans.Put(ctx, p.Repo, b); err != nil {
			t.Fatal(err)
		}
	}
	put(events.ScanProgress{Repo: "app", Scanning: true, Listing: true})
	bustest.Eventually(t, 10*time.Second, "a scan still listing", func() bool {
		return indexing.Progress().Listing && indexing.Progress().Indexing()
	})
	put(events.ScanProgress{Repo: "app", Files: 3979, Handled: 1200, Scanning: true})
	put(events.ScanProgress{Repo: "web", Files: 50, Handled: 20, Scanning: false})
	bustest.Eventually(t, 10*time.Second, "the running scan's files pending", func() bool {
		return indexing.Progress().Pending == 3979-1200 && !indexing.Progress().Listing
	})
	if n := indexing.Progress().Notice("keyword", true); !strings.HasPrefix(n, "no match yet: indexing 0 of 2,779 files.") {
		t.Errorf("notice: %q", n)
	}
	put(events.ScanProgress{Repo: "app", Files: 3979, Handled: 3979, Scanning: false})
	bustest.Eventually(t, 10*time.Second, "nothing pending once the scan is done", func() bool {
		return indexing.Progress().Pending == 0 && !indexing.Progress().Indexing()
	})
}
