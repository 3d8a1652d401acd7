package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// File is one generated repository file.
type File struct {
	Repo, Path, Content string
}

// Version is what read_doc's hash and cue_docs' sha256 both name: the
// generated content has no surrounding whitespace, so the edge's hash of
// the trimmed text is the file's own hash.
func (f File) Version() Version {
	return Version{Repo: f.Repo, Path: f.Path, Hash: events.SHA256Hex([]byte(f.Content))}
}

var words = strings.Fields(`anchor beacon cargo delta ember falcon glacier harbor
indigo juniper kelp lantern meadow nectar orbit pylon quartz rivet saffron tundra
umber vortex willow xenon yarrow zephyr basalt cobalt dune fjord granite heron
isthmus jetty keel lagoon monsoon nimbus osprey prism quiver reef sextant tide`)

// Corpus generates n files spread over repos, deterministic from seed,
// named under batch so that batches never share a path. Every third file is
// Go code, the rest markdown.
func Corpus(seed uint64, batch string, repos []string, n int) []File {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	files := make([]File, 0, n)
	sentence := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = words[r.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	for i := range n {
		repo := repos[i%len(repos)]
		if i%3 == 2 {
			body := fmt.Sprintf("// Package p%d handles %s.\npackage p%d\n\n// %s reports %s.\nfunc F%d() string {\n\treturn %q\n}",
				i, sentence(4), i, "F"+fmt.Sprint(i), sentence(6), i, sentence(3))
			files = append(files, File{Repo: repo, Path: fmt.Sprintf("%s/pkg/p%d/p%d.go", batch, i, i), Content: body})
			continue
		}
		b := &strings.Builder{}
		fmt.Fprintf(b, "# %s %d\n\n%s.\n", strings.ToUpper(sentence(1)[:1])+sentence(2)[1:], i, sentence(12))
		for s := range 1 + r.IntN(3) {
			fmt.Fprintf(b, "\n## Section %d %s\n\n%s.\n", s, sentence(2), sentence(20+r.IntN(40)))
		}
		files = append(files, File{Repo: repo, Path: fmt.Sprintf("%s/docs/doc%d.md", batch, i), Content: strings.TrimSpace(b.String())})
	}
	return files
}

// Publish publishes files as FileUpserted events exactly as ingest does
// (inline content, its Nats-Msg-Id), many in flight at once, and records
// every acknowledged version in chk. It fails the test on any publish that
// is not acknowledged.
func Publish(ctx context.Context, t testing.TB, js jetstream.JetStream, files []File, chk *Checker) {
	t.Helper()
	modTime := time.Unix(1700000000, 0)
	type pending struct {
		f   File
		ack jetstream.PubAckFuture
	}
	var mu sync.Mutex
	window := make([]pending, 0, 256)
	drain := func() {
		for _, p := range window {
			select {
			case <-p.ack.Ok():
				mu.Lock()
				chk.Ack(p.f.Version())
				mu.Unlock()
			case err := <-p.ack.Err():
				t.Fatalf("publish %s/%s: %v", p.f.Repo, p.f.Path, err)
			case <-ctx.Done():
				t.Fatalf("publish %s/%s: %v", p.f.Repo, p.f.Path, ctx.Err())
			}
		}
		window = window[:0]
	}
	for _, f := range files {
		ev := events.FileUpserted{Repo: f.Repo, Path: f.Path, SHA256: events.SHA256Hex([]byte(f.Content)),
			Size: int64(len(f.Content)), ModTime: modTime, Content: f.Content}
		data, err := events.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		msg := nats.NewMsg(events.FileSubject(f.Repo))
		msg.Data = data
		msg.Header.Set(jetstream.MsgIDHeader, events.FileUpsertedMsgID(ev.Repo, ev.Path, ev.SHA256, ev.ModTime))
		fut, err := js.PublishMsgAsync(msg)
		if err != nil {
			t.Fatalf("publish %s/%s: %v", f.Repo, f.Path, err)
		}
		window = append(window, pending{f, fut})
		if len(window) == cap(window) {
			drain()
		}
	}
	drain()
}

// DocsWrites counts every write to cue_docs as it happens, through an
// ordered consumer on the bucket's stream started before the writes: each
// write is one sighting of the version it stored.
type DocsWrites struct {
	mu     sync.Mutex
	seen   map[Version]int
	total  int
	stream jetstream.Stream
}

// WatchDocsWrites starts counting; it stops at cleanup.
func WatchDocsWrites(ctx context.Context, t testing.TB, js jetstream.JetStream) *DocsWrites {
	t.Helper()
	stream, err := js.Stream(ctx, "KV_"+events.DocsBucket)
	if err != nil {
		t.Fatalf("cue_docs stream: %v", err)
	}
	w := &DocsWrites{seen: map[Version]int{}, stream: stream}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		rec, err := events.DecodeDocRecord(m.Data())
		w.mu.Lock()
		defer w.mu.Unlock()
		w.total++
		if err == nil {
			w.seen[Version{Repo: rec.Repo, Path: rec.Path, Hash: rec.SHA256}]++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return w
}

// Total is the writes seen so far.
func (w *DocsWrites) Total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// ObserveInto adds every write seen to chk, one sighting per write.
func (w *DocsWrites) ObserveInto(chk *Checker) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for v, n := range w.seen {
		for range n {
			chk.Observe(v)
		}
	}
}

// StreamWrites is how many writes cue_docs' stream has ever taken (its
// last sequence, the stream being new): a write the watcher missed because
// a later one replaced it still counts here.
func (w *DocsWrites) StreamWrites(ctx context.Context) (uint64, error) {
	info, err := w.stream.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}
