package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/doctor"
	"github.com/cuedeck/cuedeck/internal/edge"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/status"
	"github.com/cuedeck/cuedeck/internal/telemetry"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/internal/workspace"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// faultCase damages a stopped workspace the way a disk, a backup tool or
// a crash would. detect are patterns of the log lines that show the
// daemon noticed, the first found named in the table.
type faultCase struct {
	name, action string
	detect       []string
	damage       func(t *testing.T, ws *workspace.Workspace)
	// embeds runs the case with the built-in model, and converging
	// includes every document's vectors.
	embeds bool
	// midway, when set, runs on the stopped workspace before damage,
	// which may then use what it kept (a backup): it may run the daemon
	// again, edit files (in files too) and create tasks, which it
	// returns.
	midway func(t *testing.T, ws *workspace.Workspace, files map[string]string, tweak func(*workspace.Config)) (acked []string)
}

// TestFaultSuite damages the state of a stopped daemon in every way the
// issue lists that a test can do without root, starts it again, and
// requires it to converge to the sources' truth: every file readable
// through read_doc as it is on disk, every acknowledged task exactly once
// in list_tasks and as a card, and `cue doctor` without errors. It prints
// a table: case, how the damage was noticed, what was done, time to
// converge, lost, duplicated, doctor errors.
func TestFaultSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the daemon twice per case")
	}
	cases := []faultCase{
		{"NATS store deleted", "streams recreated; edge store discarded; every file and card published again",
			[]string{"was created again"}, func(t *testing.T, ws *workspace.Workspace) {
				if err := os.RemoveAll(ws.NATSStoreDir()); err != nil {
					t.Fatal(err)
				}
			}, false, nil},
		{"cue_docs block garbled mid-file", "KV_cue_docs deleted at start and rebuilt from the files",
			[]string{"files are damaged"}, func(t *testing.T, ws *workspace.Workspace) {
				garble(t, lastBlock(t, ws, "KV_cue_docs"), 0.5)
			}, false, nil},
		{"cue_docs block truncated", "documents cue_docs lost published again by ingest; an edge ahead of the bucket would be discarded",
			[]string{"no longer matches its source", "republish=[1-9][0-9]*"}, func(t *testing.T, ws *workspace.Workspace) {
				truncateHalf(t, lastBlock(t, ws, "KV_cue_docs"))
			}, false, nil},
		{"CUE_TASKS truncated", "board ready at the last message held; cards whose tasks were lost published again",
			[]string{"republish=[1-9][0-9]*"}, func(t *testing.T, ws *workspace.Workspace) {
				truncateHalf(t, lastBlock(t, ws, "CUE_TASKS"))
			}, false, nil},
		{"edge SST garbled", "edge store moved aside and replayed from cue_docs",
			[]string{"moved it aside"}, func(t *testing.T, ws *workspace.Workspace) {
				garble(t, edgeTable(t, ws), 0.5)
			}, false, nil},
		{"edge SST truncated", "edge store moved aside and replayed from cue_docs",
			[]string{"moved it aside"}, func(t *testing.T, ws *workspace.Workspace) {
				truncateHalf(t, edgeTable(t, ws))
			}, false, nil},
		{"edge value log garbled", "edge store moved aside and replayed from cue_docs",
			[]string{"moved it aside"}, func(t *testing.T, ws *workspace.Workspace) {
				garble(t, largestFile(t, ws.StateDir("edge"), "*.vlog"), 0.5)
			}, false, nil},
		{"edge store lost a document, tables sound", "store compared with cue_docs at start, moved aside and replayed",
			[]string{"holds documents otherwise than cue_docs"}, func(t *testing.T, ws *workspace.Workspace) {
				loseEdgeDocument(t, ws, "docs/topic03.md")
			}, false, nil},
		{"ingest state garbled", "state moved aside; documents adopted from cue_docs; every file read and compared",
			[]string{"the state is damaged; moved it aside"}, func(t *testing.T, ws *workspace.Workspace) {
				tables, _ := filepath.Glob(filepath.Join(ws.StateDir("ingest"), "*.sst"))
				if len(tables) == 0 {
					t.Fatal("ingest's state has no table")
				}
				garble(t, tables[0], 0.5)
			}, false, nil},
		{"ingest state deleted", "documents adopted from cue_docs; every file read and compared",
			[]string{"unrecorded_docs=[1-9][0-9]*"}, func(t *testing.T, ws *workspace.Workspace) {
				if err := os.RemoveAll(ws.StateDir("ingest")); err != nil {
					t.Fatal(err)
				}
			}, false, nil},
		{"vector cache garbled", "cache moved aside, an empty one started; vectors kept in cue_vectors",
			[]string{"the vector cache is damaged"}, func(t *testing.T, ws *workspace.Workspace) {
				tables, _ := filepath.Glob(filepath.Join(ws.StateDir("embed"), "*.sst"))
				if len(tables) == 0 {
					t.Fatal("the vector cache has no table")
				}
				for _, p := range tables {
					garble(t, p, 0.5)
				}
			}, true, nil},
	}
	// The NATS store as a backup tool copied it from the stopped daemon,
	// before the files and tasks that came after.
	backup := filepath.Join(t.TempDir(), "nats-backup")
	cases = append(cases, faultCase{
		name:   "NATS store restored from an older backup",
		action: "edge store discarded (cue_docs behind it); files changed since and cards of tasks created since published again",
		detect: []string{"no longer matches its source", "republish=[1-9][0-9]*"},
		midway: func(t *testing.T, ws *workspace.Workspace, files map[string]string, tweak func(*workspace.Config)) []string {
			if err := os.CopyFS(backup, os.DirFS(ws.NATSStoreDir())); err != nil {
				t.Fatal(err)
			}
			n := startNode(t, ws.Root, tweak)
			for i := range 5 {
				p := fmt.Sprintf("docs/topic%02d.md", i)
				files[p] += "\nEdited after the backup.\n"
				write(t, ws.Root, p, files[p])
			}
			acked := createTasks(t, n, ws.Root, 3)
			waitConverged(t, n, ws.Root, files, acked, 60*time.Second)
			if err := n.stop(); err != nil {
				t.Fatal(err)
			}
			return acked
		},
		damage: func(t *testing.T, ws *workspace.Workspace) {
			if err := os.RemoveAll(ws.NATSStoreDir()); err != nil {
				t.Fatal(err)
			}
			if err := os.CopyFS(ws.NATSStoreDir(), os.DirFS(backup)); err != nil {
				t.Fatal(err)
			}
		},
	})
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tdetected by\taction\tconverged in\tlost\tduplicated\tdoctor errors")
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			root := t.TempDir()
			files := faultWorkspace(t, root)
			noModel := func(cfg *workspace.Config) {
				if !c.embeds {
					cfg.Embed.Model = "none"
				}
			}
			first := startNode(t, root, noModel)
			acked := createTasks(t, first, root, 4)
			waitConverged(t, first, root, files, acked, 60*time.Second)
			if c.embeds {
				waitEmbedded(t, first, len(files)+len(acked), 120*time.Second)
			}
			if err := first.stop(); err != nil {
				t.Fatal(err)
			}

			if c.midway != nil {
				acked = append(acked, c.midway(t, first.ws, files, noModel)...)
			}
			c.damage(t, first.ws)
			var log logtest.Buffer
			start := time.Now()
			second := startNodeLogged(t, root, noModel, slog.New(slog.NewTextHandler(&log, nil)))
			// Never ready and wrong: the moment /readyz says ready, every
			// file and task is served as the sources hold it.
			waitReadyz(t, second, 60*time.Second)
			if lost, dup, why := check(second, root, files, acked, true); lost+dup > 0 {
				t.Errorf("/readyz said ready while %d were lost and %d duplicated: %s", lost, dup, why)
			}
			lost, dup := waitConverged(t, second, root, files, acked, 60*time.Second)
			if c.embeds {
				lost += waitEmbedded(t, second, len(files)+len(acked), 120*time.Second)
			}
			took := time.Since(start)
			doctorErrors := doctorErrors(t, second.ws)
			detected := "-"
			for _, d := range c.detect {
				if m := regexp.MustCompile(d).FindString(log.String()); m != "" {
					detected = m
					break
				}
			}
			if detected == "-" {
				t.Errorf("no log line shows the damage was noticed (looked for %q)", c.detect)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", c.name, detected, c.action, took.Round(time.Millisecond), lost, dup, doctorErrors)
		})
	}
	tw.Flush()
	t.Logf("fault suite:\n%s", table.String())
	if testing.Verbose() {
		fmt.Print(table.String())
	}
}

// doctorErrors runs `cue doctor`'s checks on ws and fails the test on
// any error, which it counts.
func doctorErrors(t *testing.T, ws *workspace.Workspace) int {
	t.Helper()
	rep, err := doctor.Run(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity == doctor.Error {
			t.Errorf("cue doctor: %s %s", f.File, f.Msg)
		}
	}
	return rep.Errors()
}

// faultWorkspace writes a small repository and returns its files (path
// to content); cards come later, through create_task.
func faultWorkspace(t *testing.T, root string) map[string]string {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("docs/topic%02d.md", i)] = fmt.Sprintf("# Topic %d\n\nThe word harrier%02d names this topic.\n", i, i)
		files[fmt.Sprintf("pkg/unit%02d.go", i)] = fmt.Sprintf("package pkg\n\n// Unit%02d does its part.\nfunc Unit%02d() int { return %d }\n", i, i, i)
	}
	// A document too large for the edge's tables: it lives in the value
	// log.
	var large strings.Builder
	large.WriteString("# Ledger\n\n")
	for i := uint32(0); large.Len() < 150<<10; i++ {
		// Words of pseudo-random letters, which compress little.
		for v, k := i*2654435761, 0; k < 6; v, k = v/26, k+1 {
			large.WriteByte(byte('a' + v%26))
		}
		large.WriteByte(' ')
	}
	files["docs/ledger.md"] = large.String() + "end\n"
	for p, c := range files {
		write(t, root, p, c)
	}
	return files
}

// createTasks creates n tasks through create_task and returns their ids.
func createTasks(t *testing.T, n *node, root string, count int) []string {
	var ids []string
	for i := range count {
		b, _ := json.Marshal(map[string]any{"title": fmt.Sprintf("Fault task %d", i), "priority": "medium"})
		out, err := n.caller.Call(context.Background(), tools.CreateTask, b)
		if err != nil {
			t.Fatalf("create_task: %v", err)
		}
		var res tools.CreateTaskResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	return ids
}

// waitConverged waits until n serves the workspace's truth: every
// file as on disk, every card file's task and every acknowledged task
// exactly once in list_tasks, every acknowledged task's card on disk. It
// returns what was lost and duplicated when it gave up (and fails the
// test then), or zeros.
func waitConverged(t *testing.T, n *node, root string, files map[string]string, acked []string, within time.Duration) (lost, dup int) {
	t.Helper()
	deadline := time.Now().Add(within)
	var why string
	for {
		lost, dup, why = check(n, root, files, acked, false)
		if lost == 0 && dup == 0 {
			// Settled too, or a fault injected now meets work half done
			// (a card written back, its event not yet indexed) and the
			// restart converges through its redelivery instead of the
			// path under test: every card indexed as it is on disk, and
			// no file event left with the indexer.
			settled, reason := settledCards(n, root)
			if settled {
				return 0, 0
			}
			why = reason
		}
		if time.Now().After(deadline) {
			t.Errorf("not converged within %s: %s", within, why)
			return lost, dup
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settledCards reports whether every card file's record in cue_docs is
// of the file as it is on disk, and the indexer holds no file event.
func settledCards(n *node, root string) (bool, string) {
	ctx := context.Background()
	docs, err := n.conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		return false, err.Error()
	}
	cards, _ := filepath.Glob(filepath.Join(root, ".cuedeck", "cards", "*.md"))
	for _, c := range cards {
		want, err := os.ReadFile(c)
		if err != nil {
			return false, err.Error()
		}
		rel := ".cuedeck/cards/" + filepath.Base(c)
		e, err := docs.Get(ctx, events.DocKey(n.info.Repo, rel))
		if err != nil {
			return false, "card " + rel + ": " + err.Error()
		}
		if rec, err := events.DecodeDocRecord(e.Value()); err != nil || rec.SHA256 != events.SHA256Hex(want) {
			return false, "card " + rel + " not indexed as written"
		}
	}
	cons, err := n.conn.JS.Consumer(ctx, events.IngestStream, events.IndexerConsumer)
	if err != nil {
		return false, err.Error()
	}
	if info := cons.CachedInfo(); info.NumPending+uint64(info.NumAckPending) > 0 {
		return false, fmt.Sprintf("%d file events with the indexer", info.NumPending+uint64(info.NumAckPending))
	}
	return true, ""
}

// check compares what n serves, and unless servedOnly the card files,
// with the sources.
func check(n *node, root string, files map[string]string, acked []string, servedOnly bool) (lost, dup int, why string) {
	var problems []string
	for p, want := range files {
		res, err := n.readDoc(p, "")
		if err != nil || strings.TrimRight(res.Content, "\n") != strings.TrimRight(want, "\n") {
			lost++
			problems = append(problems, fmt.Sprintf("file %s (%v, %d of %d bytes)", p, err, len(res.Content), len(want)))
		}
	}
	list, err := tools.ListAllTasks(context.Background(), n.caller, tools.ListTasksArgs{})
	if err != nil {
		return lost + len(acked), 0, fmt.Sprintf("list_tasks: %v", err)
	}
	seen := map[string]int{}
	for _, s := range list {
		seen[s.ID]++
	}
	cards, _ := filepath.Glob(filepath.Join(root, ".cuedeck", "cards", "*.md"))
	want := slices.Clone(acked)
	for _, c := range cards {
		id := strings.TrimSuffix(filepath.Base(c), ".md")
		if !slices.Contains(want, id) {
			want = append(want, id)
		}
	}
	for _, id := range want {
		switch {
		case seen[id] == 0:
			lost++
			problems = append(problems, "task "+id+" not listed")
		case seen[id] > 1:
			dup++
			problems = append(problems, "task "+id+" listed twice")
		}
	}
	for _, id := range acked {
		if servedOnly {
			break
		}
		if _, err := os.Stat(filepath.Join(root, ".cuedeck", "cards", id+".md")); err != nil {
			lost++
			problems = append(problems, "card of "+id+" missing")
		}
	}
	for id, k := range seen {
		if !slices.Contains(want, id) {
			dup += k
			problems = append(problems, "task "+id+" has no card")
		}
	}
	if len(problems) > 5 {
		problems = append(problems[:5], fmt.Sprintf("and %d more", len(problems)-5))
	}
	return lost, dup, strings.Join(problems, "; ")
}

// waitReadyz polls n's /readyz until it answers ready.
func waitReadyz(t *testing.T, n *node, within time.Duration) {
	t.Helper()
	url := strings.TrimSuffix(n.info.MCPURL, telemetry.PathMCP) + telemetry.PathReady
	deadline := time.Now().Add(within)
	for {
		code, body := httpGet(t, url)
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not ready within %s: %d %s", within, code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitEmbedded waits until every one of docs documents has its vectors,
// and returns how many lack them when it gives up (failing the test).
func waitEmbedded(t *testing.T, n *node, docs int, within time.Duration) (missing int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		rep, err := status.CollectWith(context.Background(), n.conn.JS, status.Options{EmbedModel: "builtin:use-lite"})
		if err == nil && rep.Embeddings != nil {
			e := rep.Embeddings
			if e.Docs == docs && e.Vectors == docs && e.Pending == 0 {
				return 0
			}
			missing = docs - e.Vectors
		}
		if time.Now().After(deadline) {
			t.Errorf("not every document embedded within %s: %d of %d lack vectors (%v)", within, missing, docs, err)
			return missing
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lastBlock is the newest message block of a stream of the embedded
// server.
func lastBlock(t *testing.T, ws *workspace.Workspace, stream string) string {
	t.Helper()
	blocks, _ := filepath.Glob(filepath.Join(ws.NATSStoreDir(), "jetstream", "$G", "streams", stream, "msgs", "*.blk"))
	if len(blocks) == 0 {
		t.Fatalf("no message block of %s", stream)
	}
	index := func(p string) int {
		n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ".blk"))
		return n
	}
	return slices.MaxFunc(blocks, func(a, b string) int { return index(a) - index(b) })
}

// edgeTable is the largest table of the edge's store.
func edgeTable(t *testing.T, ws *workspace.Workspace) string {
	t.Helper()
	return largestFile(t, ws.StateDir("edge"), "*.sst")
}

// largestFile is the largest file in dir matching pattern.
func largestFile(t *testing.T, dir, pattern string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, pattern))
	var best string
	var size int64
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		t.Fatalf("no non-empty %s in %s", pattern, dir)
	}
	return best
}

// garble overwrites 4 KiB (or what there is) at the fraction at of file.
func garble(t *testing.T, file string, at float64) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	n := min(int64(4096), fi.Size()/4)
	junk := make([]byte, n)
	for i := range junk {
		junk[i] = byte(i*131 + 7)
	}
	if _, err := f.WriteAt(junk, int64(float64(fi.Size())*at)); err != nil {
		t.Fatal(err)
	}
}

func truncateHalf(t *testing.T, file string) {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
}

// cue doctor reports, as an error with the remedy, cards whose tasks the
// task log lacks: here the log's events were purged under the running
// daemon. (A log deleted and created again is no longer a case: the
// daemon hears the server announce it and publishes the cards into the
// new log at once.)
func TestDoctorReportsCardsTheTaskLogLacks(t *testing.T) {
	root := t.TempDir()
	files := faultWorkspace(t, root)
	n := startNode(t, root, func(cfg *workspace.Config) { cfg.Embed.Model = "none" })
	acked := createTasks(t, n, root, 2)
	waitConverged(t, n, root, files, acked, 60*time.Second)
	if got := doctorErrors(t, n.ws); got != 0 {
		t.Fatalf("%d doctor errors on a converged workspace", got)
	}
	ctx := context.Background()
	log, err := n.conn.JS.Stream(ctx, events.TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := doctor.Run(ctx, n.ws)
	if err != nil {
		t.Fatal(err)
	}
	var found string
	for _, f := range rep.Findings {
		if f.Severity == doctor.Error && strings.Contains(f.Msg, "card files have no task") {
			found = f.Msg
		}
	}
	if !strings.Contains(found, "2 card files") || !strings.Contains(found, acked[0]) || !strings.Contains(found, "cue down") {
		t.Fatalf("the finding: %q", found)
	}
}

// cue doctor compares every document cue_docs holds with its file: here
// one record names a file that does not exist and another an older
// version of a file, as a restored or foreign bucket would.
func TestDoctorReportsDocumentsThatDifferFromTheirFiles(t *testing.T) {
	root := t.TempDir()
	files := faultWorkspace(t, root)
	n := startNode(t, root, func(cfg *workspace.Config) { cfg.Embed.Model = "none" })
	waitConverged(t, n, root, files, nil, 60*time.Second)
	if got := doctorErrors(t, n.ws); got != 0 {
		t.Fatalf("%d doctor errors on a converged workspace", got)
	}
	ctx := context.Background()
	kv, err := n.conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	put := func(path, sha string) {
		b, err := events.Encode(events.DocRecord{Repo: n.info.Repo, Path: path, SHA256: sha, Size: 1, ModTime: time.Now().UTC(), SourceSeq: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, events.DocKey(n.info.Repo, path), b); err != nil {
			t.Fatal(err)
		}
	}
	put("docs/ghost.md", events.SHA256Hex([]byte("# Ghost\n")))
	put("docs/topic03.md", events.SHA256Hex([]byte("# Topic 3, as it was\n")))
	rep, err := doctor.Run(ctx, n.ws)
	if err != nil {
		t.Fatal(err)
	}
	var differ, gone string
	for _, f := range rep.Findings {
		if f.Severity != doctor.Error {
			continue
		}
		switch {
		case strings.Contains(f.Msg, "differ from their files"):
			differ = f.Msg
		case strings.Contains(f.Msg, "have no file any more"):
			gone = f.Msg
		}
	}
	if !strings.Contains(differ, "1 indexed documents") || !strings.Contains(differ, "docs/topic03.md") || !strings.Contains(differ, "cue up") {
		t.Errorf("the finding of the changed file: %q", differ)
	}
	if !strings.Contains(gone, "docs/ghost.md") || !strings.Contains(gone, "cue up") {
		t.Errorf("the finding of the missing file: %q", gone)
	}
}

// loseEdgeDocument deletes path's document from the edge's store and
// keeps the store's revision, as a lost write or a restored copy would
// leave it: every table is sound.
func loseEdgeDocument(t *testing.T, ws *workspace.Workspace, path string) {
	t.Helper()
	cfg, err := ws.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	store, err := edge.OpenStore(ws.StateDir("edge"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rev, err := store.LastRevision()
	if err != nil {
		t.Fatal(err)
	}
	key := events.DocKey(cfg.Workspace.Name, path)
	if _, ok, err := store.Get(key); err != nil || !ok {
		t.Fatalf("the edge's store does not hold %s (%v)", key, err)
	}
	if err := store.Apply([]edge.Change{{Key: key, Rev: rev}}); err != nil {
		t.Fatal(err)
	}
}

// cue_docs deleted and created again under the running daemon: the edge
// replays the empty bucket and has ingest publish every file into it at
// once, rather than at its comparison ten minutes later, so every file is
// readable again, and every task still listed.
func TestDocsBucketReplacedUnderTheDaemonIsRefilled(t *testing.T) {
	root := t.TempDir()
	files := faultWorkspace(t, root)
	n := startNode(t, root, func(cfg *workspace.Config) { cfg.Embed.Model = "none" })
	acked := createTasks(t, n, root, 2)
	waitConverged(t, n, root, files, acked, 60*time.Second)
	ctx := context.Background()
	if err := n.conn.JS.DeleteKeyValue(ctx, events.DocsBucket); err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, n.conn.JS, bus.DeclaredTopology(bus.Settings{}), nil); err != nil {
		t.Fatal(err)
	}
	// The new bucket fills: the files were published again (the edge
	// serving them could otherwise be its old documents, before it
	// found the bucket replaced).
	kv, err := n.conn.JS.KeyValue(ctx, events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	bustest.Eventually(t, 60*time.Second, "every file in the new cue_docs", func() bool {
		keys, err := kv.ListKeys(ctx)
		if err != nil {
			return false
		}
		k := 0
		for range keys.Keys() {
			k++
		}
		return k >= len(files)
	})
	if lost, dup := waitConverged(t, n, root, files, acked, 60*time.Second); lost+dup > 0 {
		t.Fatalf("after cue_docs was replaced: %d lost, %d duplicated", lost, dup)
	}
}
