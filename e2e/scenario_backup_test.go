package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// TestClusterDocsBucketRestoredFromBackup: the team restores cue_docs
// from a backup taken before some files were edited (the cluster lost its
// store and the last backup is a few hours old). The restored bucket is
// not empty, as in TestClusterDocsBucketRecreated, but holds older
// versions, at revisions below those the edges' stores reached.
//
// Each edge must find its store ahead of the restored incarnation and
// rebuild from it; ingest, told by the server that the bucket was
// replaced, must compare once the restore is over, find the files whose
// sha256 differs from the restored record and publish them again (its
// periodic comparison, every 10 minutes, is too late for this test); in the
// end cue_docs holds every file's current version and both edges serve
// exactly that.
func TestClusterDocsBucketRestoredFromBackup(t *testing.T) {
	files := Corpus(12, "b2", scenarioRepos, 300)
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

	name := "KV_" + events.DocsBucket
	backup, cfg := backupStream(ctx, t, js, name)
	t.Logf("backup of %s: %d messages", name, len(backup))

	// Edited after the backup: the restore takes these back to their old
	// versions, which the edges had already replaced.
	var edited []File
	for i, f := range markdown(files) {
		if i%8 == 0 {
			f.Content += "\n\nAfter the backup: " + words[i%len(words)] + "."
			edited = append(edited, f)
		}
	}
	writeRepos(t, root, edited)
	waitWrites(ctx, t, s.Writes, len(files)+len(edited), 2*time.Minute)
	for i := range c.Edges {
		waitEdgeServes(ctx, t, c, nc, i, edited, 2*time.Minute)
	}
	t.Logf("%d files edited after the backup and served by both edges", len(edited))

	restoreStream(ctx, t, js, cfg, backup)
	restored := time.Now()
	writes := WatchDocsWrites(ctx, t, js)
	t.Logf("%s deleted and restored from the backup (%d messages)", name, len(backup))

	latest := map[string]File{}
	for _, f := range append(append([]File(nil), files...), edited...) {
		latest[f.Repo+"/"+f.Path] = f
	}
	want := make([]File, 0, len(latest))
	for _, f := range latest {
		want = append(want, f)
	}
	// What the restore took back must be written again (the watch also
	// sees the restored messages, which are not writes).
	eventually(ctx, t, 3*time.Minute, "the edits the restore took back written again", func() error {
		chk := NewChecker()
		for _, f := range edited {
			chk.Ack(f.Version())
		}
		writes.ObserveInto(chk)
		if r := chk.Report(); len(r.Lost) > 0 {
			return fmt.Errorf("%d of %d not yet", len(r.Lost), len(edited))
		}
		return nil
	})
	rewritten := time.Since(restored)
	// Each edge's store is ahead of the restored bucket: it must notice
	// and rebuild from it while it runs.
	for i, n := range c.Edges {
		waitReplayedInPlace(ctx, t, c, n)
		waitEdgeServes(ctx, t, c, nc, i, markdown(want), 3*time.Minute)
	}
	served := time.Since(restored)
	// An edit now lands at a revision the edges' old stores had passed:
	// an edge resuming from its old position would skip it.
	var later []File
	for i, f := range markdown(want) {
		if i%20 == 1 {
			f.Content += "\n\nAfter the restore: " + words[(i+3)%len(words)] + "."
			later = append(later, f)
			latest[f.Repo+"/"+f.Path] = f
		}
	}
	writeRepos(t, root, later)
	want = want[:0]
	for _, f := range latest {
		want = append(want, f)
	}
	final := NewChecker()
	for _, f := range want {
		final.Ack(f.Version())
	}
	for i := range c.Edges {
		waitEdgeServes(ctx, t, c, nc, i, markdown(want), 2*time.Minute)
		checkEdge(ctx, t, c, nc, i, final, markdown(want))
	}
	t.Logf("after the restore: the %d edits it took back written again in %s; both edges rebuilt and serving every file in %s; %d later edits served by both",
		len(edited), rewritten.Round(time.Millisecond), served.Round(time.Millisecond), len(later))
	s.Done()
}

// backupStream reads every message name holds, in order, with its
// configuration: what a backup of the stream restores.
func backupStream(ctx context.Context, t testing.TB, js jetstream.JetStream, name string) ([]*nats.Msg, jetstream.StreamConfig) {
	t.Helper()
	stream, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*nats.Msg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		raw, err := stream.GetMsg(ctx, seq)
		if err != nil {
			continue // a sequence a newer version of its key replaced
		}
		m := nats.NewMsg(raw.Subject)
		m.Data = raw.Data
		for k, vs := range raw.Header {
			// The writers' compare-and-set expectations held against the
			// old stream, not the restored one.
			if strings.HasPrefix(k, "Nats-Expected-") {
				continue
			}
			for _, v := range vs {
				m.Header.Add(k, v)
			}
		}
		msgs = append(msgs, m)
	}
	if uint64(len(msgs)) != info.State.Msgs {
		t.Fatalf("backup of %s: %d messages read, the stream holds %d", name, len(msgs), info.State.Msgs)
	}
	return msgs, info.Config
}

// restoreStream replaces the stream of cfg with one holding msgs.
func restoreStream(ctx context.Context, t testing.TB, js jetstream.JetStream, cfg jetstream.StreamConfig, msgs []*nats.Msg) {
	t.Helper()
	restoreStreamSpaced(ctx, t, js, cfg, msgs, 0)
}

// restoreStreamSpaced is restoreStream with gap between the messages, as
// a refill by hand that readers see half done.
func restoreStreamSpaced(ctx context.Context, t testing.TB, js jetstream.JetStream, cfg jetstream.StreamConfig, msgs []*nats.Msg, gap time.Duration) {
	t.Helper()
	if err := js.DeleteStream(ctx, cfg.Name); err != nil {
		t.Fatalf("delete %s: %v", cfg.Name, err)
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatalf("create %s: %v", cfg.Name, err)
	}
	for i, m := range msgs {
		if i > 0 && gap > 0 {
			time.Sleep(gap)
		}
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatalf("restore %s: %v", m.Subject, err)
		}
	}
}
