package tiercache

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newTest(maxBytes int64) (*Cache, *clock.Deterministic) {
	clk := clock.NewDeterministic(t0)
	return New(Config{MaxBytes: maxBytes, Idle: 30 * time.Minute, Clock: clk}), clk
}

func cost(key, tag string, value []byte) int64 {
	return int64(len(key)+len(tag)+len(value)) + EntryOverhead
}

func TestGetPutCountsPerLevel(t *testing.T) {
	c, _ := newTest(1 << 20)
	if _, ok := c.Get(L2, "a"); ok {
		t.Fatal("hit in an empty cache")
	}
	c.Put(L2, "a", "", []byte("alpha"))
	if v, ok := c.Get(L2, "a"); !ok || string(v) != "alpha" {
		t.Fatalf("Get = %q, %v", v, ok)
	}
	// The same key in another level is another entry.
	if _, ok := c.Get(L4, "a"); ok {
		t.Fatal("L4 answered L2's key")
	}
	st := c.Stats()
	if l2 := st.Level(L2); l2.Hits != 1 || l2.Misses != 1 || l2.Entries != 1 || l2.Bytes != cost("a", "", []byte("alpha")) {
		t.Fatalf("L2 stats %+v", l2)
	}
	if l4 := st.Level(L4); l4.Hits != 0 || l4.Misses != 1 || l4.Entries != 0 {
		t.Fatalf("L4 stats %+v", l4)
	}
	if got := st.Level(L2).HitRate(); got != 0.5 {
		t.Fatalf("L2 hit rate %v, want 0.5", got)
	}
}

func TestReplacingChargesOnlyTheNewValue(t *testing.T) {
	c, _ := newTest(1 << 20)
	c.Put(L3, "k", "t", make([]byte, 1000))
	c.Put(L3, "k", "t", make([]byte, 10))
	st := c.Stats()
	if want := cost("k", "t", make([]byte, 10)); st.Bytes != want || st.Level(L3).Bytes != want || st.Level(L3).Entries != 1 {
		t.Fatalf("after replacing: %d bytes (L3 %+v), want %d", st.Bytes, st.Level(L3), want)
	}
}

func TestIdleEntriesExpire(t *testing.T) {
	c, clk := newTest(1 << 20)
	c.Put(L1, "card", "", []byte("x"))
	c.Put(L2, "file", "", []byte("y"))
	// Reading within the idle time keeps an entry: 3 × 29 minutes.
	for range 3 {
		clk.Advance(29 * time.Minute)
		if _, ok := c.Get(L1, "card"); !ok {
			t.Fatal("card expired although read every 29 minutes")
		}
	}
	// file was last used 87 minutes ago: gone, and its bytes with it.
	st := c.Stats()
	if l2 := st.Level(L2); l2.Expired != 1 || l2.Entries != 0 || l2.Bytes != 0 {
		t.Fatalf("L2 after 87 idle minutes: %+v", l2)
	}
	if st.Bytes != cost("1card", "", []byte("x"))-1 {
		t.Fatalf("bytes %d, want only the card's", st.Bytes)
	}
	clk.Advance(30*time.Minute + time.Second)
	if _, ok := c.Get(L1, "card"); ok {
		t.Fatal("card served after 30 idle minutes")
	}
	if l1 := c.Stats().Level(L1); l1.Expired != 1 || l1.Misses != 1 {
		t.Fatalf("L1 %+v", l1)
	}
}

func TestCapEvictsLeastRecentlyUsedAcrossLevels(t *testing.T) {
	val := make([]byte, 1000)
	per := cost("k0", "", val)
	c, clk := newTest(3 * per) // room for exactly three entries
	c.Put(L1, "k0", "", val)
	clk.Advance(time.Second)
	c.Put(L2, "k1", "", val)
	clk.Advance(time.Second)
	c.Put(L3, "k2", "", val)
	clk.Advance(time.Second)
	c.Get(L1, "k0") // k0 is now the most recent; k1 the least
	c.Put(L4, "k3", "", val)
	if _, ok := c.Get(L2, "k1"); ok {
		t.Fatal("k1, least recently used, survived")
	}
	for _, k := range []struct {
		l Level
		k string
	}{{L1, "k0"}, {L3, "k2"}, {L4, "k3"}} {
		if _, ok := c.Get(k.l, k.k); !ok {
			t.Fatalf("%s %s evicted", k.l, k.k)
		}
	}
	st := c.Stats()
	if st.Level(L2).Evicted != 1 || st.Bytes != 3*per || st.PeakBytes != 3*per {
		t.Fatalf("stats %+v", st)
	}
}

func TestValueLargerThanCapIsNotStored(t *testing.T) {
	c, _ := newTest(4096)
	c.Put(L2, "small", "", []byte("s"))
	c.Put(L2, "huge", "", make([]byte, 4096))
	if _, ok := c.Get(L2, "huge"); ok {
		t.Fatal("a value over the cap was stored")
	}
	if _, ok := c.Get(L2, "small"); !ok {
		t.Fatal("an oversized value evicted what was there")
	}
	// Replacing a key with an oversized value drops the old value: it is
	// no longer the key's current answer.
	c.Put(L2, "small", "", make([]byte, 5000))
	if _, ok := c.Get(L2, "small"); ok {
		t.Fatal("old value kept after an oversized replacement")
	}
}

func TestInvalidateDropsATagInEveryLevel(t *testing.T) {
	c, _ := newTest(1 << 20)
	c.Put(L1, "card@3", "repo/card", []byte("a"))
	c.Put(L2, "card@3#x", "repo/card", []byte("b"))
	c.Put(L2, "other@1", "repo/other", []byte("c"))
	if n := c.Invalidate("repo/card"); n != 2 {
		t.Fatalf("invalidated %d, want 2", n)
	}
	if n := c.Invalidate("repo/card"); n != 0 {
		t.Fatalf("second invalidation dropped %d", n)
	}
	if _, ok := c.Get(L1, "card@3"); ok {
		t.Fatal("invalidated entry served")
	}
	if _, ok := c.Get(L2, "other@1"); !ok {
		t.Fatal("an entry of another tag was dropped")
	}
	st := c.Stats()
	if st.Level(L1).Invalidated != 1 || st.Level(L2).Invalidated != 1 || st.Bytes != cost("2other@1", "repo/other", []byte("c"))-1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestRandomOperationsKeepAccounts runs random puts, gets, invalidations
// and clock moves against a plain model and checks after each that the
// charged bytes are the sum of the live entries' costs and within the cap,
// and that every hit returns what the model holds.
func TestRandomOperationsKeepAccounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const maxBytes = 20_000
	c, clk := newTest(maxBytes)
	type live struct {
		value string
		tag   string
	}
	model := map[string]live{} // by mapKey
	for i := range 20_000 {
		l := Levels[rng.IntN(4)]
		key := fmt.Sprintf("k%d", rng.IntN(60))
		switch op := rng.IntN(10); {
		case op < 4:
			v := strings.Repeat("v", rng.IntN(3000))
			tag := fmt.Sprintf("t%d", rng.IntN(8))
			c.Put(l, key, tag, []byte(v))
			model[mapKey(l, key)] = live{v, tag}
		case op < 8:
			got, ok := c.Get(l, key)
			want, inModel := model[mapKey(l, key)]
			if ok && (!inModel || string(got) != want.value) {
				t.Fatalf("op %d: Get(%s,%s) served a value the model does not hold", i, l, key)
			}
		case op == 8:
			tag := fmt.Sprintf("t%d", rng.IntN(8))
			c.Invalidate(tag)
			for k, e := range model {
				if e.tag == tag {
					delete(model, k)
				}
			}
		default:
			clk.Advance(time.Duration(rng.IntN(10)) * time.Minute)
		}
		st := c.Stats()
		var sum int64
		var entries int
		for _, ls := range st.Levels {
			sum += ls.Bytes
			entries += ls.Entries
		}
		listed := 0
		var recount int64
		for e := c.head; e != nil; e = e.next {
			listed++
			recount += int64(len(e.key)-1+len(e.tag)+len(e.value)) + EntryOverhead
		}
		tagged := 0
		for _, e := range c.byTag {
			for ; e != nil; e = e.tagNext {
				tagged++
			}
		}
		if sum != st.Bytes || st.Bytes > maxBytes || st.PeakBytes > maxBytes || entries != listed || entries != len(c.byKey) || tagged != entries {
			t.Fatalf("op %d: bytes %d (levels %d), peak %d, entries %d, listed %d, map %d, tagged %d", i, st.Bytes, sum, st.PeakBytes, entries, listed, len(c.byKey), tagged)
		}
		if recount != st.Bytes {
			t.Fatalf("op %d: entries cost %d, charged %d", i, recount, st.Bytes)
		}
	}
}

// TestEntryOverheadCoversTheBookkeeping measures the heap an entry's
// bookkeeping takes (entry, list element, map slots) with empty keys and
// values, and checks EntryOverhead is not less: the cap must bound real
// memory, not a flattering count.
func TestEntryOverheadCoversTheBookkeeping(t *testing.T) {
	const n = 20_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%08d", i)
	}
	value := []byte{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := New(Config{MaxBytes: 1 << 40})
	for _, k := range keys {
		c.Put(L2, k, "tag"+k, value)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The key and tag strings the cache builds are counted in the cost.
	perEntry := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	charged := c.Stats().Bytes / n
	runtime.KeepAlive(c)
	if perEntry > charged {
		t.Fatalf("an entry takes %d heap bytes, is charged %d", perEntry, charged)
	}
	t.Logf("heap per entry %d bytes, charged %d", perEntry, charged)
}

func TestConcurrentUse(t *testing.T) {
	c, clk := newTest(50_000)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprintf("k%d", (i*7+g)%100)
				l := Levels[i%4]
				if _, ok := c.Get(l, k); !ok {
					c.Put(l, k, fmt.Sprintf("t%d", i%5), make([]byte, i%700))
				}
				if i%97 == 0 {
					c.Invalidate(fmt.Sprintf("t%d", g))
					clk.Advance(time.Minute)
				}
			}
		})
	}
	wg.Wait()
	if st := c.Stats(); st.Bytes > 50_000 || st.PeakBytes > 50_000 {
		t.Fatalf("bytes %d, peak %d over the cap", st.Bytes, st.PeakBytes)
	}
}

func TestZeroConfigUsesDefaults(t *testing.T) {
	c := New(Config{})
	if c.MaxBytes() != DefaultMaxBytes || c.cfg.Idle != DefaultIdle {
		t.Fatalf("defaults: %d bytes, idle %v", c.MaxBytes(), c.cfg.Idle)
	}
}
