package edge

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Searching memories with the stamps' verdicts finds exactly what asking
// every candidate's record finds, for each filter a stamp shows (kind,
// repo, a reader's repos, an age or a date) alone and together, with the
// filters it does not show, and with superseded memories left out.
func TestStampedMemorySearchFindsWhatTheRecordsFind(t *testing.T) {
	recs := memoryCorpus(3000) // 6 kinds, 2 repos, a minute apart from 2026-11-01
	m := loadedMemories(t, recs)
	defer m.Close()
	s := m.mems
	// A few supersessions, so that leaving history out has work to do.
	s.mu.Lock()
	for i := 0; i < 300; i += 7 {
		old, by := recs[i], recs[i+1]
		s.supersededBy[events.MemoryKey(old.Repo, old.Hash)] = map[string]struct{}{events.MemoryKey(by.Repo, by.Hash): {}}
	}
	s.mu.Unlock()
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	filters := []tools.MemoryFilters{
		{Kind: "decision"}, {Repo: "app"}, {Repo: "lib", Kind: "fact"}, {Since: "20h"}, {Since: "2026-11-02"},
		{Since: "<2026-11-02", Kind: "preference"}, {Repo: "app", Since: ">=1d"}, {Kind: "no_such_kind"}, {Repo: "nowhere"},
		{Kind: "decision", Session: "sess-12"}, {Repo: "app", Tags: []string{"x"}},
	}
	readers := []access.Identity{{}, {Repos: []string{"lib"}}}
	checked := 0
	for _, f := range filters {
		for _, id := range readers {
			for _, includeSuperseded := range []bool{false, true} {
				p, err := m.memoryFilter(&f, id, now)
				if err != nil {
					t.Fatal(err)
				}
				s.mu.RLock()
				allow := func(key string) bool {
					return p.admitsLocked(s, key) && (includeSuperseded || !s.supersededLocked(key))
				}
				keep := p.keep(s, includeSuperseded)
				for i := 0; i < 40; i++ {
					ws := strings.Fields(recs[(i*131)%len(recs)].Content)
					q := strings.Join(ws[:1+i%3], " ")
					want := s.index.SearchFiltered(q, 10, allow)
					if keep == nil {
						continue
					}
					got := s.index.SearchStamped(q, 10, keep, allow)
					if !reflect.DeepEqual(got, want) {
						s.mu.RUnlock()
						t.Fatalf("filters %+v, reader %v, superseded %v, %q:\nstamped %v\nrecords %v", f, id.Repos, includeSuperseded, q, got, want)
					}
					checked++
				}
				s.mu.RUnlock()
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d searches compared", checked)
	}
}
