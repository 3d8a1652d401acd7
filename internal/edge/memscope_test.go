package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/internal/tools"
)

// A filter whose smallest indexed set is large is checked on the documents
// the keyword search asks about instead of being taken as a set first: the
// answers are the same either way, for every kind of filter.
func TestMemoryFiltersCheckedLazilyAnswerAsTheSet(t *testing.T) {
	recs := memoryCorpus(3000)
	m := loadedMemories(t, recs)
	defer m.Close()
	e := New(m, nil)
	ctx := context.Background()
	filters := []string{
		`{"repo":"app"}`,
		`{"repo":"app","kind":"decision","since":"30d"}`,
		`{"kind":"fact"}`,
		`{"session":"sess-7"}`,
		`{"files":["docs/area3.md"]}`,
		`{"repo":"lib","since":"2026-11-02"}`,
	}
	answer := func(args string) string {
		out, err := e.Call(ctx, tools.SearchMemories, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		return string(out)
	}
	defer func(v int) { lazyScope = v }(lazyScope)
	nonEmpty := 0
	for i, f := range filters {
		for q := range 5 {
			words := strings.Fields(recs[(i*131+q*17)%len(recs)].Content)
			args := fmt.Sprintf(`{"query":%q,"mode":"keyword","limit":5,"filters":%s}`, strings.Join(words[:2], " "), f)
			lazyScope = 1 << 30
			asSet := answer(args)
			lazyScope = 0
			if lazy := answer(args); lazy != asSet {
				t.Fatalf("%s:\nchecked lazily %s\ntaken as a set %s", args, lazy, asSet)
			}
			if asSet != "[]" {
				nonEmpty++
			}
		}
	}
	if nonEmpty < len(filters)*5/2 {
		t.Errorf("only %d of %d answers had hits: the comparison says little", nonEmpty, len(filters)*5)
	}
}
