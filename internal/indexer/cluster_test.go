package indexer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// A restore writes the docs bucket of a three-node cluster back from a
// backup while the indexer, on another node, writes newer records of the
// same keys: every event is stored at its first delivery, and each
// published again after the restore wins. On a replicated stream a
// compare-and-set conflict comes back with its own code (10164) when the
// key has a write in flight, and a replica catching up answers reads with
// what it has; the indexer took the first for a failure and retried the
// second against the same replica.
func TestWritesOutlastARestoreOfAReplicatedBucket(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	conn, servers := bustest.StartCluster(t, 3, bus.Settings{Replicas: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stream, err := conn.JS.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatal(err)
	}
	var node int
	for i, srv := range servers {
		if srv.Name() != stream.CachedInfo().Cluster.Leader {
			node = i
			break
		}
	}
	ic, err := bus.Connect(ctx, servers[node].ClientURL(), bus.ConnectOptions{Name: "indexer"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ic.Close)
	s := New(ic, Config{}, nil)

	cfg := stream.CachedInfo().Config
	if err := conn.JS.DeleteStream(ctx, cfg.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.JS.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	const keys, rounds = 200, 4
	path := func(i int) string { return fmt.Sprintf("docs/f%03d.md", i) }
	var wg sync.WaitGroup
	wg.Go(func() {
		// The backup's records, older than every event, several per key
		// and many in flight at once, as a restore tool writes them.
		for round := range rounds {
			var acks []jetstream.PubAckFuture
			for i := range keys {
				old := fmt.Sprintf("# Old %d\n", round)
				rec := events.DocRecord{Repo: "r", Path: path(i), Kind: events.DocMarkdown, SHA256: events.SHA256Hex([]byte(old)), Content: old, SourceSeq: uint64(round + 1)}
				data, err := events.Encode(rec)
				if err != nil {
					t.Error(err)
					return
				}
				msg := nats.NewMsg(events.DocsSubject(events.DocKey("r", rec.Path)))
				msg.Data = data
				ack, err := conn.JS.PublishMsgAsync(msg)
				if err != nil {
					t.Error(err)
					return
				}
				acks = append(acks, ack)
			}
			for _, a := range acks {
				select {
				case <-a.Ok():
				case err := <-a.Err():
					t.Error(err)
				}
			}
		}
	})
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < keys; i += 8 {
				ev := events.Envelope{StreamSeq: uint64(1000 + i), Event: upsert(path(i), fmt.Sprintf("# New %d\n", i))}
				if err := s.Handle(ctx, ev); err != nil {
					t.Errorf("first delivery of %s: %v", path(i), err)
				}
			}
		})
	}
	wg.Wait()
	// What the restore wrote last stands until the files are published
	// again, as ingest's comparison does: then every key holds its event.
	for i := range keys {
		ev := events.Envelope{StreamSeq: uint64(2000 + i), Event: upsert(path(i), fmt.Sprintf("# New %d\n", i))}
		if err := s.Handle(ctx, ev); err != nil {
			t.Errorf("%s published again: %v", path(i), err)
		}
	}
	for i := range keys {
		msg, err := conn.LastFromLeader(ctx, cfg.Name, events.DocsSubject(events.DocKey("r", path(i))))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := events.DecodeDocRecord(msg.Data)
		if err != nil {
			t.Fatal(err)
		}
		if rec.SourceSeq != uint64(2000+i) {
			t.Errorf("%s holds the record of sequence %d, not the event's %d", path(i), rec.SourceSeq, 2000+i)
		}
	}
}
