package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/pkg/events"
)

// StreamState is one incarnation of a stream as a derived store sees it:
// when it was created, which identifies the incarnation (a stream deleted
// and created again, or a server whose store was lost, has a new one), and
// how far its sequence has come.
type StreamState struct {
	Stream  string
	Created time.Time
	// FirstSeq is the sequence the incarnation started at (its config's
	// FirstSeq, at least 1); LastSeq the last one written, which never
	// goes back while the incarnation lives.
	FirstSeq, LastSeq uint64
	// Msgs is how many messages it holds now.
	Msgs uint64
}

// Confirmations and ConfirmPause are how a running reader confirms that a
// stream it follows diverged before it acts on it: in a cluster one
// answer about a stream can be stale (read from a replica that stepped
// down), so every one of Confirmations reads, ConfirmPause apart, must
// find the divergence.
const (
	Confirmations = 4
	ConfirmPause  = 500 * time.Millisecond
)

// ConfirmDiverged calls diverged up to Confirmations times, ConfirmPause
// apart, and returns the last reason it gave when every call gave one;
// "" as soon as one finds no divergence, or when ctx ends first.
func ConfirmDiverged(ctx context.Context, diverged func() string) string {
	var why string
	for attempt := range Confirmations {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ""
			case <-time.After(ConfirmPause):
			}
		}
		if why = diverged(); why == "" {
			return ""
		}
	}
	return why
}

// ReadStream reads the state of stream name; the error wraps
// jetstream.ErrStreamNotFound when there is none.
func ReadStream(ctx context.Context, js jetstream.JetStream, name string) (StreamState, error) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return StreamState{}, fmt.Errorf("bus: read stream %s: %w", name, err)
	}
	return StateOf(s.CachedInfo()), nil
}

// StateOf is the StreamState that info describes.
func StateOf(info *jetstream.StreamInfo) StreamState {
	return StreamState{
		Stream: info.Config.Name, Created: info.Created, FirstSeq: max(info.Config.FirstSeq, 1),
		LastSeq: info.State.LastSeq, Msgs: info.State.Msgs,
	}
}

// ID names the incarnation: what a derived store records beside its
// position and compares at its next start.
func (s StreamState) ID() string { return s.Created.UTC().Format(time.RFC3339Nano) }

// Diverged says why a store built from the incarnation id up to position
// pos cannot continue from this state of the stream, or "" when it can.
// An empty id (a store written before incarnations were recorded) is
// judged by its position alone.
func (s StreamState) Diverged(id string, pos uint64) string {
	switch {
	case id != "" && id != s.ID():
		return fmt.Sprintf("%s was created again (the store was built from the one created %s; this one was created %s)", s.Stream, id, s.ID())
	case pos > s.LastSeq:
		return fmt.Sprintf("%s ends at sequence %d, before the %d the store reached (restored from an older backup, or its files were truncated)", s.Stream, s.LastSeq, pos)
	}
	return ""
}

// LastMessage is the sequence of the last message of stream s on filter,
// info its state: its last sequence, unless the messages before that were
// lost (a block cut short on disk), when a reader waiting to reach it
// would wait forever. 0 when the stream holds no message.
func LastMessage(ctx context.Context, s jetstream.Stream, info *jetstream.StreamInfo, filter string) uint64 {
	if info.State.Msgs == 0 {
		return 0
	}
	msg, err := s.GetLastMsgForSubject(ctx, filter)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return 0
	case err != nil:
		return info.State.LastSeq
	}
	return msg.Sequence
}

// monotonicStreams are the streams whose sequences outlive them: the
// indexer orders a file's events by their CUE_INGEST sequence against the
// one its stored record came from, so a stream created again must not
// start below the one it replaces.
var monotonicStreams = map[string]bool{events.IngestStream: true}

// monotonicFirstSeq is where a monotonic stream created at now starts:
// its creation time in microseconds. A stream it replaces started at its
// own, earlier creation time and would have had to store more than a
// million messages a second, on average over its life, to reach it.
func monotonicFirstSeq(now time.Time) uint64 { return uint64(now.UnixMicro()) }

// withFirstSeq sets sc.FirstSeq for a monotonic stream: the existing
// stream's (an update cannot change it), or a new one's.
func withFirstSeq(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) (jetstream.StreamConfig, error) {
	if !monotonicStreams[sc.Name] {
		return sc, nil
	}
	s, err := js.Stream(ctx, sc.Name)
	switch {
	case err == nil:
		sc.FirstSeq = s.CachedInfo().Config.FirstSeq
	case errors.Is(err, jetstream.ErrStreamNotFound):
		sc.FirstSeq = monotonicFirstSeq(time.Now())
	default:
		return sc, fmt.Errorf("bus: provision stream %s: %w", sc.Name, err)
	}
	return sc, nil
}
