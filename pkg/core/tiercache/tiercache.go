// Package tiercache is the edge's answer cache (seed 000 §5, strategy 4):
// values in four levels (L1 the active task and its workflow, L2 files
// read lately, L3 project-wide answers, L4 rules and architecture), one
// least-recently-used order across them, entries dropped after a spell of
// idleness and whenever the bytes held would pass a cap, and per-level
// counters of hits, misses, evictions and bytes for /metrics. It knows
// nothing of what it holds: internal/edge keys answers by the version of
// the state they were computed from and invalidates them by tag when that
// state changes. Time comes from an injected clock.Clock, so tests move it.
package tiercache

import (
	"fmt"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// Level is one of the cache's four levels.
type Level int

// The levels, as seed 000 §5 names them.
const (
	L1 Level = iota + 1 // current role and active workflow
	L2                  // last files accessed
	L3                  // project metadata
	L4                  // rules and architecture
)

// Levels lists every level in order.
var Levels = []Level{L1, L2, L3, L4}

func (l Level) String() string {
	if l < L1 || l > L4 {
		return fmt.Sprintf("L%d?", int(l))
	}
	return fmt.Sprintf("L%d", int(l))
}

// Defaults of Config.
const (
	DefaultMaxBytes = 50 << 20
	DefaultIdle     = 30 * time.Minute
)

// EntryOverhead is what each entry is charged beyond its key, tag and
// value bytes: the entry struct, its two map slots and the rounding of
// its key and tag allocations, which TestEntryOverheadCoversTheBookkeeping
// measures (about 200 bytes on 64-bit Go), rounded up.
const EntryOverhead = 256

// Config configures a Cache; the zero value is usable.
type Config struct {
	// MaxBytes caps the bytes charged across all levels (default
	// DefaultMaxBytes). A value larger than MaxBytes is not cached.
	MaxBytes int64
	// Idle is how long an entry may go unread before it is dropped
	// (default DefaultIdle).
	Idle time.Duration
	// Clock tells the time (default clock.System).
	Clock clock.Clock
}

func (c *Config) setDefaults() {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Idle <= 0 {
		c.Idle = DefaultIdle
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
}

// LevelStats are one level's counters since New and its current holding.
type LevelStats struct {
	Level  Level
	Hits   uint64
	Misses uint64
	// Evicted counts entries dropped to stay under the cap, Expired those
	// dropped after Idle unread, Invalidated those dropped by Invalidate.
	Evicted     uint64
	Expired     uint64
	Invalidated uint64
	Entries     int
	Bytes       int64
}

// HitRate is Hits / (Hits + Misses), 0 before any lookup.
func (s LevelStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// Stats is a snapshot of a Cache.
type Stats struct {
	Levels   []LevelStats // L1 to L4
	Bytes    int64        // charged now, across levels
	MaxBytes int64        // the cap
	// PeakBytes is the most ever charged at once; it never exceeds
	// MaxBytes.
	PeakBytes int64
}

// Level returns l's stats.
func (s Stats) Level(l Level) LevelStats { return s.Levels[l-L1] }

// entry is one cached value. Entries sit on two intrusive lists: the LRU
// order of the whole cache and the entries of their tag, which keeps the
// bookkeeping of an entry to one allocation and two map slots.
type entry struct {
	level            Level
	key, tag         string
	value            []byte
	size             int64
	lastUsed         int64 // unix nanoseconds
	prev, next       *entry
	tagPrev, tagNext *entry
}

type levelCounters struct {
	hits, misses, evicted, expired, invalidated uint64
	entries                                     int
	bytes                                       int64
}

// Cache holds byte values by level and key. It is safe for concurrent use.
// Values are shared with callers: neither side may modify one after Put.
type Cache struct {
	cfg Config

	mu sync.Mutex
	// head is the most recently used entry, tail the least.
	head, tail *entry
	byKey      map[string]*entry
	byTag      map[string]*entry // the first entry of each tag
	levels     [4]levelCounters
	bytes      int64
	peak       int64
}

// New returns an empty cache.
func New(cfg Config) *Cache {
	cfg.setDefaults()
	return &Cache{cfg: cfg, byKey: make(map[string]*entry), byTag: make(map[string]*entry)}
}

// MaxBytes is the cap.
func (c *Cache) MaxBytes() int64 { return c.cfg.MaxBytes }

// Get returns the value of key in level l and marks it used. An entry
// unread for longer than Idle is expired, not returned. A key is looked up
// in its own level only: the same key in two levels is two entries.
func (c *Cache) Get(l Level, key string) ([]byte, bool) {
	mustLevel(l)
	now := c.cfg.Clock.Now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked(now)
	lc := &c.levels[l-L1]
	e, ok := c.byKey[mapKey(l, key)]
	if !ok {
		lc.misses++
		return nil, false
	}
	lc.hits++
	e.lastUsed = now
	c.unlinkLocked(e)
	c.pushFrontLocked(e)
	return e.value, true
}

// Put stores value under key in level l, replacing any value there, and
// tags it: Invalidate(tag) drops every entry of that tag ("" for none).
// Least recently used entries, of any level, are evicted until the new one
// fits under the cap; a value that alone would pass the cap is not stored.
func (c *Cache) Put(l Level, key, tag string, value []byte) {
	mustLevel(l)
	now := c.cfg.Clock.Now().UnixNano()
	size := int64(len(key)+len(tag)+len(value)) + EntryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked(now)
	mk := mapKey(l, key)
	if old, ok := c.byKey[mk]; ok {
		c.removeLocked(old)
	}
	if size > c.cfg.MaxBytes {
		return
	}
	for c.bytes+size > c.cfg.MaxBytes {
		c.levels[c.tail.level-L1].evicted++
		c.removeLocked(c.tail)
	}
	e := &entry{level: l, key: mk, tag: tag, value: value, size: size, lastUsed: now}
	c.pushFrontLocked(e)
	c.byKey[mk] = e
	if tag != "" {
		if first := c.byTag[tag]; first != nil {
			e.tagNext = first
			first.tagPrev = e
		}
		c.byTag[tag] = e
	}
	lc := &c.levels[l-L1]
	lc.entries++
	lc.bytes += size
	c.bytes += size
	c.peak = max(c.peak, c.bytes)
}

// Invalidate drops every entry tagged tag, in all levels, and returns how
// many it dropped.
func (c *Cache) Invalidate(tag string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for e := c.byTag[tag]; e != nil; e = c.byTag[tag] {
		c.levels[e.level-L1].invalidated++
		c.removeLocked(e)
		n++
	}
	return n
}

// Stats returns the counters and holdings, expiring idle entries first.
func (c *Cache) Stats() Stats {
	now := c.cfg.Clock.Now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked(now)
	st := Stats{Levels: make([]LevelStats, len(Levels)), Bytes: c.bytes, MaxBytes: c.cfg.MaxBytes, PeakBytes: c.peak}
	for i, lc := range c.levels {
		st.Levels[i] = LevelStats{Level: Levels[i], Hits: lc.hits, Misses: lc.misses, Evicted: lc.evicted, Expired: lc.expired, Invalidated: lc.invalidated, Entries: lc.entries, Bytes: lc.bytes}
	}
	return st
}

// expireLocked drops the entries unread for longer than Idle. The LRU list
// is in order of last use, so they are all at its tail.
func (c *Cache) expireLocked(now int64) {
	idle := int64(c.cfg.Idle)
	for e := c.tail; e != nil && now-e.lastUsed > idle; e = c.tail {
		c.levels[e.level-L1].expired++
		c.removeLocked(e)
	}
}

func (c *Cache) pushFrontLocked(e *entry) {
	e.prev, e.next = nil, c.head
	if c.head != nil {
		c.head.prev = e
	} else {
		c.tail = e
	}
	c.head = e
}

func (c *Cache) unlinkLocked(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (c *Cache) removeLocked(e *entry) {
	c.unlinkLocked(e)
	delete(c.byKey, e.key)
	if e.tag != "" {
		if e.tagPrev != nil {
			e.tagPrev.tagNext = e.tagNext
		} else if e.tagNext != nil {
			c.byTag[e.tag] = e.tagNext
		} else {
			delete(c.byTag, e.tag)
		}
		if e.tagNext != nil {
			e.tagNext.tagPrev = e.tagPrev
		}
		e.tagPrev, e.tagNext = nil, nil
	}
	lc := &c.levels[e.level-L1]
	lc.entries--
	lc.bytes -= e.size
	c.bytes -= e.size
}

func mustLevel(l Level) {
	if l < L1 || l > L4 {
		panic("tiercache: no level " + l.String())
	}
}

// mapKey makes the same key in two levels two entries.
func mapKey(l Level, key string) string { return string(rune('0'+l)) + key }
