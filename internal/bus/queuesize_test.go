package bus_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/pkg/events"
)

func TestQueueMaxBytesFollowsTheFreeSpace(t *testing.T) {
	for _, c := range []struct {
		free uint64
		want int64
	}{
		{100 << 30, bus.DefaultQueueMaxBytes},
		{16 << 30, bus.DefaultQueueMaxBytes},
		{1 << 30, 128 << 20},
		{256 << 20, bus.MinQueueMaxBytes},
	} {
		got, err := bus.QueueMaxBytesFor("/ws/.cuedeck/.cache/nats", c.free)
		if err != nil || got != c.want {
			t.Errorf("free %d MiB: %d MiB, %v; want %d MiB", c.free>>20, got>>20, err, c.want>>20)
		}
	}
	_, err := bus.QueueMaxBytesFor("/ws/.cuedeck/.cache/nats", 200<<20)
	if !errors.Is(err, bus.ErrLowDisk) {
		t.Fatalf("200 MiB free: err = %v, want ErrLowDisk", err)
	}
	for _, want := range []string{"/ws/.cuedeck/.cache/nats", "200 MiB free", "need 256 MiB", "queue_max_bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
}

// Queues larger than JetStream may reserve: provisioning fails with
// JetStream's bare 10047, which the explanation turns into the disk, its
// free space and the setting to lower. Shrinking recreates an empty queue
// at the new size and leaves one holding work alone.
func TestQueuesTooLargeForTheDiskAreExplainedAndShrunk(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	conn := connectUnprovisioned(t, dir)
	free, err := bus.FreeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}

	huge := int64(free) // two of them are twice what JetStream grants
	err = bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{IngestMaxBytes: huge}), nil)
	if !bus.IsInsufficientStorage(err) {
		t.Fatalf("provisioning queues of %d MiB each with %d MiB free: %v", huge>>20, free>>20, err)
	}
	explained := bus.ExplainInsufficientStorage(err, dir, free, huge)
	if !errors.Is(explained, bus.ErrLowDisk) || !strings.Contains(explained.Error(), dir) || !strings.Contains(explained.Error(), "queue_max_bytes") {
		t.Fatalf("explained: %v", explained)
	}
	if other := errors.New("x"); bus.ExplainInsufficientStorage(other, dir, free, huge) != other {
		t.Fatal("another error was rewritten")
	}

	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{IngestMaxBytes: 64 << 20}), nil); err != nil {
		t.Fatal(err)
	}
	req := events.EmbedRequest{Repo: "r", Path: "a.md", Model: "m", Deleted: true}
	if _, err := bus.PublishEvent(ctx, conn.JS, events.EmbedSubject("r"), events.EmbedRequestMsgID(req), req); err != nil {
		t.Fatal(err)
	}
	deleted, err := bus.ShrinkEmptyQueues(ctx, conn.JS, 32<<20, nil)
	if err != nil || len(deleted) != 1 || deleted[0] != events.IngestStream {
		t.Fatalf("shrunk %v, %v; want only the empty %s", deleted, err, events.IngestStream)
	}
	if err := bus.Provision(ctx, conn.JS, bus.DeclaredTopology(bus.Settings{IngestMaxBytes: 32 << 20}), nil); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint64{events.IngestStream: 0, events.EmbedStream: 1} {
		s, err := conn.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info := s.CachedInfo()
		if info.Config.MaxBytes != 32<<20 || info.State.Msgs != want {
			t.Errorf("%s: max %d MiB, %d messages; want 32 MiB, %d", name, info.Config.MaxBytes>>20, info.State.Msgs, want)
		}
	}
}

// A queue created again starts above every sequence the one it replaces
// gave out: the indexer keeps a file's newest event by comparing them, so
// a restart at 1 would have every later edit taken for an old one.
func TestRecreatedIngestQueueContinuesAboveTheOldSequences(t *testing.T) {
	ctx := context.Background()
	conn := connectUnprovisioned(t, t.TempDir())
	topo := bus.DeclaredTopology(bus.Settings{IngestMaxBytes: 64 << 20})
	if err := bus.Provision(ctx, conn.JS, topo, nil); err != nil {
		t.Fatal(err)
	}
	before, err := bus.ReadStream(ctx, conn.JS, events.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	ev := events.FileDeleted{Repo: "r", Path: "a.md"}
	ack, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), "first", ev)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Sequence != before.FirstSeq || before.FirstSeq < 2 {
		t.Fatalf("first message at %d; the stream starts at %d", ack.Sequence, before.FirstSeq)
	}
	// Provisioning again keeps the stream and its sequence.
	if err := bus.Provision(ctx, conn.JS, topo, nil); err != nil {
		t.Fatal(err)
	}
	again, _ := bus.ReadStream(ctx, conn.JS, events.IngestStream)
	if again.ID() != before.ID() || again.LastSeq != ack.Sequence {
		t.Fatalf("provisioning again changed the stream: %+v, was %+v", again, before)
	}
	if why := again.Diverged(before.ID(), ack.Sequence); why != "" {
		t.Fatalf("the same incarnation diverged: %s", why)
	}
	if why := again.Diverged("", ack.Sequence+1); !strings.Contains(why, "before the") {
		t.Fatalf("a position past the end: %q", why)
	}

	if err := conn.JS.DeleteStream(ctx, events.IngestStream); err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, conn.JS, topo, nil); err != nil {
		t.Fatal(err)
	}
	after, err := bus.ReadStream(ctx, conn.JS, events.IngestStream)
	if err != nil {
		t.Fatal(err)
	}
	ack2, err := bus.PublishEvent(ctx, conn.JS, events.FileSubject("r"), "second", ev)
	if err != nil {
		t.Fatal(err)
	}
	if ack2.Sequence <= ack.Sequence {
		t.Fatalf("the recreated stream gave out %d, not above the old %d", ack2.Sequence, ack.Sequence)
	}
	if why := after.Diverged(before.ID(), ack.Sequence); !strings.Contains(why, "created again") {
		t.Fatalf("a recreated stream: %q", why)
	}
}

// Roles starting together provision together: whichever creates the
// ingest queue first, with its own first sequence, the others take it.
func TestRolesProvisioningAtOnceAgree(t *testing.T) {
	ctx := context.Background()
	conn := connectUnprovisioned(t, t.TempDir())
	topo := bus.DeclaredTopology(bus.Settings{IngestMaxBytes: 64 << 20})
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- bus.Provision(ctx, conn.JS, topo, nil) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
