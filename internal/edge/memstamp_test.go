package edge

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cuedeck/cuedeck/internal/access"
	"github.com/cuedeck/cuedeck/internal/tools"
	"github.com/cuedeck/cuedeck/pkg/core/search"
	"github.com/cuedeck/cuedeck/pkg/core/vector"
	"github.com/cuedeck/cuedeck/pkg/events"
)

// Searching memories with the stamps' verdicts, by words and by vectors,
// finds exactly what asking every candidate's record finds, for each filter a stamp shows (kind,
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
					qv, _ := hashEmbedder{}.Embed(context.Background(), []string{q})
					gotV := s.vindex.SearchStamped(qv[0], 10, keep, allow)
					wantV := s.vindex.Search(qv[0], 10, allow)
					if !reflect.DeepEqual(gotV, wantV) {
						s.mu.RUnlock()
						t.Fatalf("vectors, filters %+v, reader %v, superseded %v, %q:\nstamped %v\nrecords %v", f, id.Repos, includeSuperseded, q, gotV, wantV)
					}
				}
				s.mu.RUnlock()
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d searches compared", checked)
	}
}

// One keep serves both indexes: their verdicts must mean the same.
func TestStampVerdictsAgree(t *testing.T) {
	if search.Refuse != vector.Refuse || search.Ask != vector.Ask || search.Admit != vector.Admit {
		t.Fatalf("search's verdicts %d %d %d, vector's %d %d %d", search.Refuse, search.Ask, search.Admit, vector.Refuse, vector.Ask, vector.Admit)
	}
}

// A memory said again (same words, a later update time) keeps its vector,
// and the vector's stamp follows the record: a search for the last hours
// finds it by vectors as by words.
func TestStampFollowsARecordWhoseVectorStays(t *testing.T) {
	recs := memoryCorpus(600)
	m := loadedMemories(t, recs)
	defer m.Close()
	rec := recs[0] // updated 2026-11-01 00:00
	rec.UpdatedAt = time.Date(2026, 11, 2, 11, 0, 0, 0, time.UTC)
	rec.Extractions++
	b, err := events.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	key := events.MemoryKey(rec.Repo, rec.Hash)
	if err := m.applyMemories(context.Background(), []jetstream.KeyValueEntry{kvEntry{key, b, uint64(len(recs) + 1)}}); err != nil {
		t.Fatal(err)
	}
	s := m.mems
	if n := len(s.pending); n != 0 {
		t.Fatalf("%d memories wait for a vector: the words did not change", n)
	}
	p, err := m.memoryFilter(&tools.MemoryFilters{Since: "2h", Repo: rec.Repo}, access.Identity{}, time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	allow := func(k string) bool { return p.admitsLocked(s, k) }
	keep := p.keep(s, true)
	qv, _ := hashEmbedder{}.Embed(context.Background(), []string{rec.Content})
	hits := s.vindex.SearchStamped(qv[0], 5, keep, allow)
	if len(hits) == 0 || hits[0].ID != key {
		t.Fatalf("vectors found %v for the memory said again, want %s first", hits, key)
	}
	if kw := s.index.SearchStamped(rec.Content, 5, keep, allow); len(kw) == 0 || kw[0].ID != key {
		t.Fatalf("words found %v, want %s first", kw, key)
	}
}
