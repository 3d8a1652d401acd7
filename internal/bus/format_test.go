package bus_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/bus"
	"github.com/cuedeck/cuedeck/internal/bus/bustest"
	"github.com/cuedeck/cuedeck/internal/logtest"
	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// setFormat rewrites a stream's data format metadata as an older or newer
// CueDeck would have left it ("" removes the key).
func setFormat(t *testing.T, js jetstream.JetStream, stream, format string) {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.Metadata = map[string]string{}
	if format != "" {
		cfg.Metadata[bus.FormatKey] = format
	}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

func formatOf(t *testing.T, js jetstream.JetStream, stream string) string {
	t.Helper()
	s, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := s.CachedInfo().Config.Metadata[bus.FormatKey]
	if !ok {
		return "(none)"
	}
	return v
}

func TestProvisionRecordsDataFormat(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	want := strconv.Itoa(version.DataFormat)
	for _, stream := range []string{events.IngestStream, events.TasksStream, events.EmbedStream, events.DeadLetterStream,
		"KV_" + events.DocsBucket, "KV_" + events.MemoriesBucket, "OBJ_" + events.BlobsBucket} {
		if got := formatOf(t, conn.JS, stream); got != want {
			t.Errorf("%s: %s=%s, want %s", stream, bus.FormatKey, got, want)
		}
	}
	c, err := conn.JS.Consumer(context.Background(), events.IngestStream, events.IndexerConsumer)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CachedInfo().Config.Metadata[bus.FormatKey]; got != want {
		t.Errorf("consumer %s: %s=%q, want %s", events.IndexerConsumer, bus.FormatKey, got, want)
	}
}

func TestProvisionRefusesNewerFormatAndChangesNothing(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	newer := strconv.Itoa(version.DataFormat + 1)
	setFormat(t, conn.JS, events.TasksStream, "")
	setFormat(t, conn.JS, "KV_"+events.MemoriesBucket, newer)

	err := bus.Provision(context.Background(), conn.JS, bus.DeclaredTopology(bus.Settings{}), nil)
	var nf *bus.NewerFormatError
	if !errors.As(err, &nf) || nf.Format != version.DataFormat+1 || nf.Asset != "bucket "+events.MemoriesBucket {
		t.Fatalf("provision over a newer bucket: %v, want a NewerFormatError for bucket %s", err, events.MemoriesBucket)
	}
	for _, part := range []string{"newer CueDeck (data format " + newer, "cue upgrade", "newer binary"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	// Refused before anything changed: the older stream was not updated.
	if got := formatOf(t, conn.JS, events.TasksStream); got != "(none)" {
		t.Fatalf("%s format after a refused provision: %s, want it untouched", events.TasksStream, got)
	}
	if got := formatOf(t, conn.JS, "KV_"+events.MemoriesBucket); got != newer {
		t.Fatalf("bucket format after a refused provision: %s, want %s", got, newer)
	}
}

func TestProvisionUpdatesOlderFormat(t *testing.T) {
	conn, _ := bustest.Start(t, bus.Settings{})
	setFormat(t, conn.JS, events.TasksStream, "")
	setFormat(t, conn.JS, "KV_"+events.DocsBucket, "0")
	// A task the older format stored must still be there afterwards.
	if _, err := conn.JS.Publish(context.Background(), events.SubjectTaskPrefix+"r", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	var logs logtest.Buffer
	if err := bus.Provision(context.Background(), conn.JS, bus.DeclaredTopology(bus.Settings{}), slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(version.DataFormat)
	for _, stream := range []string{events.TasksStream, "KV_" + events.DocsBucket} {
		if got := formatOf(t, conn.JS, stream); got != want {
			t.Errorf("%s format after provision: %s, want %s", stream, got, want)
		}
	}
	s, _ := conn.JS.Stream(context.Background(), events.TasksStream)
	if n := s.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("%s holds %d messages after the format update, want 1", events.TasksStream, n)
	}
	for _, part := range []string{"older data format", "stream " + events.TasksStream + " (format 0)", "bucket " + events.DocsBucket + " (format 0)"} {
		if !strings.Contains(logs.String(), part) {
			t.Errorf("log does not say %q:\n%s", part, logs.String())
		}
	}
	// Once updated, a provision has nothing to report.
	var again logtest.Buffer
	if err := bus.Provision(context.Background(), conn.JS, bus.DeclaredTopology(bus.Settings{}), slog.New(slog.NewTextHandler(&again, nil))); err != nil {
		t.Fatal(err)
	}
	if again.String() != "" {
		t.Errorf("second provision logged:\n%s", again.String())
	}
}
