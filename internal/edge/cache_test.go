package edge

import (
	"testing"
)

// TestReplayKeepsTheCacheUnderItsCapAndFresh replays the benchmark's
// 10,000 mixed calls on an edge whose cap (64 KiB) is far below what the
// answers add up to, and checks every answer against an uncached edge's:
// byte for byte the same, although documents and tasks change under the
// cache all along. The bytes charged stay within the cap after every call
// and at the end; entries were evicted for it, and every level served
// hits.
func TestReplayKeepsTheCacheUnderItsCapAndFresh(t *testing.T) {
	calls := replayCalls
	if testing.Short() {
		calls = 2000
	}
	const maxBytes = 64 << 10
	env := newReplayEnv(t)
	e, clk := env.replayEdge(maxBytes)
	ref, _ := env.replayEdge(-1)
	st := env.replay(t, e, ref, clk, calls, 1)
	cs, _ := e.CacheStats()
	if st.peakBytes > maxBytes || cs.PeakBytes > maxBytes || cs.Bytes > maxBytes {
		t.Fatalf("cache charged %d bytes at the end, peaked at %d (sampled %d): cap %d", cs.Bytes, cs.PeakBytes, st.peakBytes, maxBytes)
	}
	var sum int64
	var evicted uint64
	for _, l := range cs.Levels {
		sum += l.Bytes
		evicted += l.Evicted
		if l.Hits == 0 {
			t.Errorf("%s served no hits: %+v", l.Level, l)
		}
	}
	if sum != cs.Bytes {
		t.Errorf("levels hold %d bytes, the cache %d", sum, cs.Bytes)
	}
	if evicted == 0 {
		t.Error("nothing evicted under a 64 KiB cap")
	}
	t.Logf("%d reads, %d writes; %d bytes held, peak %d of %d; %d evicted", st.reads, st.writes, cs.Bytes, cs.PeakBytes, maxBytes, evicted)
	for _, l := range cs.Levels {
		t.Logf("%s: hit rate %.1f%% (%d/%d), %d evicted, %d expired, %d invalidated, %d bytes", l.Level, 100*l.HitRate(), l.Hits, l.Hits+l.Misses, l.Evicted, l.Expired, l.Invalidated, l.Bytes)
	}
}
