package builtin

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// Each shard is handed back as soon as its last value is decoded, not
// when the whole model is: loading must not hold every shard's pages and
// every decoded tensor at once.
func TestShardReaderHandsBackEachShardOnceRead(t *testing.T) {
	shard := func(vals ...float32) string {
		b := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return string(b)
	}
	parts := []string{shard(1, 2, 3), shard(4, 5), shard(6)}
	var handedBack []string
	r := shardReader{parts: parts, done: func(s string) { handedBack = append(handedBack, s) }}
	got := make([]float32, 2)
	if !r.read(2, got) || !slices.Equal(got, []float32{1, 2}) {
		t.Fatalf("first tensor %v", got)
	}
	if len(handedBack) != 0 {
		t.Fatalf("a shard was handed back with values of it still unread: %d", len(handedBack))
	}
	// A tensor straddling the first two shards ends the first one.
	got = make([]float32, 2)
	if !r.read(2, got) || !slices.Equal(got, []float32{3, 4}) {
		t.Fatalf("second tensor %v", got)
	}
	if len(handedBack) != 1 || handedBack[0] != parts[0] {
		t.Fatalf("after the first shard's last value: handed back %d shards, want the first", len(handedBack))
	}
	if !r.read(2, nil) { // an integer tensor: read past, not decoded
		t.Fatal("third tensor")
	}
	if len(handedBack) != 3 || handedBack[1] != parts[1] || handedBack[2] != parts[2] {
		t.Fatalf("handed back %d shards at the end, want all 3 in order", len(handedBack))
	}
	if r.remaining() != 0 || r.read(1, nil) {
		t.Error("values left after the last shard")
	}
}
