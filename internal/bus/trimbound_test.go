package bus

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// A consumer whose counts say nothing is left, with messages above its ack
// floor still in the stream, is trimmed only to its floor: the counts
// were seen wrong, and a trim past the floor purges events unhandled.
func TestTrimStopsAtTheAckFloorWhateverTheCountsSay(t *testing.T) {
	ci := &jetstream.ConsumerInfo{NumPending: 0, NumAckPending: 0,
		Delivered: jetstream.SequenceInfo{Stream: 216}, AckFloor: jetstream.SequenceInfo{Stream: 216}}
	if got := trimBound(ci); got != 216 {
		t.Fatalf("trim bound %d with the ack floor at 216", got)
	}
	ci = &jetstream.ConsumerInfo{NumPending: 3, NumAckPending: 2, AckFloor: jetstream.SequenceInfo{Stream: 40}}
	if got := trimBound(ci); got != 40 {
		t.Fatalf("trim bound %d with the ack floor at 40", got)
	}
}
