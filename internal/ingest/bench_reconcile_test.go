package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// BenchmarkReconcileUnchanged times ingest's comparison of its state with
// cue_docs at start for a 20,000-file repository where nothing changed:
// what every restart pays.
func BenchmarkReconcileUnchanged(b *testing.B) {
	const files = 20000
	conn, _ := bustest.Start(b, bus.Settings{})
	ctx := context.Background()
	s, err := New(conn, Config{Repos: []RepoConfig{{Name: "app", Root: b.TempDir()}}, StateDir: b.TempDir()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if s.state, err = openState(s.cfg.StateDir, nil); err != nil {
		b.Fatal(err)
	}
	defer s.state.close()
	wb := s.state.db.NewWriteBatch()
	var acks []jetstream.PubAckFuture
	for i := range files {
		path := fmt.Sprintf("pkg/dir%03d/file%05d.go", i%300, i)
		sha := events.SHA256Hex([]byte(path))
		st := fileState{SHA256: sha, Size: int64(i), Mod: int64(i), Checked: int64(i) + 1e12, Seq: uint64(i + 1)}
		v, _ := json.Marshal(st)
		if err := wb.Set(stateKey("app", path), v); err != nil {
			b.Fatal(err)
		}
		rec := events.DocRecord{Repo: "app", Path: path, SHA256: sha, SourceSeq: uint64(i + 1)}
		msg := nats.NewMsg(events.DocsSubject(events.DocKey("app", path)))
		msg.Data = []byte(`{"v":"1.0","kind":"doc.record","data":{}}`)
		for k, v := range rec.Summary().Headers() {
			msg.Header.Set(k, v)
		}
		ack, err := conn.JS.PublishMsgAsync(msg)
		if err != nil {
			b.Fatal(err)
		}
		acks = append(acks, ack)
	}
	if err := wb.Flush(); err != nil {
		b.Fatal(err)
	}
	for _, a := range acks {
		select {
		case <-a.Ok():
		case err := <-a.Err():
			b.Fatal(err)
		}
	}
	var took time.Duration
	for b.Loop() {
		rec, err := s.reconcile(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if rec.Files != files || rec.Docs != files || rec.Stale != 0 || rec.Orphans != 0 {
			b.Fatalf("reconcile of an unchanged repository: %+v", rec)
		}
		took += rec.Took
	}
	b.ReportMetric(float64(files)*float64(b.N)/took.Seconds(), "files/s")
	b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/reconcile")
}
