package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// damageLog collects the streams whose file store reported damaged
// message blocks, as the embedded server logs them ("Filestore [NAME]
// ..."). The server recovers what it can read and carries on; a stream
// damaged that way can lose messages, or acknowledge writes it cannot
// read back.
type damageLog struct {
	mu    sync.Mutex
	found map[string]string // stream → the first report
	// failed are the streams a write failed on (full disk, I/O error).
	failed map[string]string
}

// The server's reports of a failed write: "JetStream failed to store a
// msg on stream '$G > NAME': ..." and "JetStream stream '$G > NAME'
// critical write error: ...".
var writeFailure = regexp.MustCompile(`^JetStream (?:failed to store a msg on )?stream '[^>]*> ([^']+)'`)

func (d *damageLog) writeErrors() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.failed)
}

func (d *damageLog) clearWriteErrors() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failed = nil
}

// blockDamage are the file store's reports of a message block it could
// not read as written. Reports of an outdated or missing index, or of a
// block the index names and a crash removed, are not among them: the
// server rebuilds its state from the blocks, and readers notice a stream
// that ends before where they were (bus.StreamState.Diverged).
var blockDamage = []string{
	"corrupt", "loadBlock error", "Error loading msg", "checkMsgs", "Partial cache", "detected no cache",
}

func (d *damageLog) note(msg string) {
	// A stream's own limits refusing a message are not a failed write.
	limit := strings.Contains(msg, "maximum ") || strings.Contains(msg, "too large")
	if m := writeFailure.FindStringSubmatch(msg); m != nil && !limit && (strings.Contains(msg, "failed to store") || strings.Contains(msg, "write error")) {
		d.mu.Lock()
		if d.failed == nil {
			d.failed = map[string]string{}
		}
		if _, seen := d.failed[m[1]]; !seen {
			d.failed[m[1]] = msg
		}
		d.mu.Unlock()
		return
	}
	rest, ok := strings.CutPrefix(msg, "Filestore [")
	if !ok {
		return
	}
	name, report, ok := strings.Cut(rest, "] ")
	if !ok || !slices.ContainsFunc(blockDamage, func(s string) bool { return strings.Contains(report, s) }) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, seen := d.found[name]; !seen {
		d.found[name] = report
	}
}

// DamagedStreams are the streams whose file store reported damaged blocks
// since the server started, with the first report of each.
func (e *Embedded) DamagedStreams() map[string]string {
	e.damage.mu.Lock()
	defer e.damage.mu.Unlock()
	return maps.Clone(e.damage.found)
}

// Derived streams hold nothing the repositories' files cannot give again:
// ingest republishes what cue_docs lacks, the indexer and the embed
// workers derive the rest. A damaged one is deleted and provisioned
// again, empty, and its readers rebuild (they notice the new incarnation).
var derivedStreams = map[string]string{
	events.IngestStream:            "queued file events; ingest publishes again what cue_docs lacks",
	events.EmbedStream:             "queued embed requests; the embed workers ask again for missing vectors",
	"KV_" + events.DocsBucket:      "the indexed documents; ingest publishes every file again",
	"KV_" + events.VectorsBucket:   "the vectors; the embed workers embed the documents again",
	"KV_" + events.ScansBucket:     "scan progress",
	"KV_" + events.EmbedCostBucket: "what embedding has cost; counted again from zero",
	"OBJ_" + events.BlobsBucket:    "large file contents; ingest publishes every file again",
	events.TasksStream:             "the task log; tasks are read again from their card files, and a task made through MCP but not yet written into its card is lost",
	events.DeadLetterStream:        "events workers gave up on",
}

// rebuiltWith names streams that must be emptied with another: contents
// in cue_blobs are named by cue_docs' records, which would point at
// nothing.
var rebuiltWith = map[string][]string{"OBJ_" + events.BlobsBucket: {"KV_" + events.DocsBucket}}

// DamageReport is what RepairDamaged did with one damaged stream.
type DamageReport struct {
	Stream, Report string
	// Deleted is true when the stream was deleted to be rebuilt; Holds
	// then says what it held and how it comes back. A stream that is the
	// only copy of what it holds (memories, extraction records, budget)
	// is kept, with Holds saying what may be lost.
	Deleted bool
	Holds   string
}

// RepairDamaged deletes the derived streams among damaged (stream →
// report, Embedded.DamagedStreams), and those that must go with them,
// so that Provision creates them again empty and their readers rebuild
// from the repositories' files. Streams holding the only copy of their
// data are kept and reported. Each finding is logged as one error line.
func RepairDamaged(ctx context.Context, js jetstream.JetStream, damaged map[string]string, log *slog.Logger) ([]DamageReport, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	todo := maps.Clone(damaged)
	for name := range damaged {
		for _, also := range rebuiltWith[name] {
			if _, ok := todo[also]; !ok {
				todo[also] = "emptied with " + name
			}
		}
	}
	var out []DamageReport
	for _, name := range slices.Sorted(maps.Keys(todo)) {
		r := DamageReport{Stream: name, Report: todo[name]}
		holds, derived := derivedStreams[name]
		if !derived {
			r.Holds = "data that exists nowhere else; what the damaged blocks held may be lost. Back up .cuedeck/.cache/nats, then run `cue doctor`"
			log.Error("a JetStream stream's files are damaged; it holds the only copy of its data and is kept as the server could read it", "stream", name, "report", r.Report)
			out = append(out, r)
			continue
		}
		err := js.DeleteStream(ctx, name)
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return out, fmt.Errorf("bus: delete damaged stream %s: %w", name, err)
		}
		r.Deleted, r.Holds = true, holds
		log.Error("a JetStream stream's files are damaged; deleted it to rebuild it", "stream", name, "report", r.Report, "rebuilt", holds)
		out = append(out, r)
	}
	return out, nil
}
