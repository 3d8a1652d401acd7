package llmjson

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// memoriesDoc returns an extractor reply of about size bytes (at most
// size): {"schemaVersion":"v1","memories":[{...},...]}. broken adds a
// trailing comma to every object and array and cuts the reply off inside
// its last memory's string, so every closer is missing.
func memoriesDoc(size int, broken bool) string {
	comma := ""
	if broken {
		comma = ","
	}
	var b strings.Builder
	b.WriteString(`{"schemaVersion":"v1","memories":[`)
	for i := 0; ; i++ {
		m := fmt.Sprintf(`{"content":"Prefer table-driven tests in pkg/core; it's the house style (memory %d).","tags":["testing","style"%s],"confidence":0.%02d,"pinned":%t%s}`,
			i, comma, i%100, i%2 == 0, comma)
		if b.Len()+len(m)+3 > size {
			break
		}
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(m)
	}
	if broken {
		b.WriteString(`,{"content":"cut off here`)
	} else {
		b.WriteString("]}")
	}
	return b.String()
}

func BenchmarkRepairValid(b *testing.B) {
	doc := memoriesDoc(MaxLength, false)
	if !json.Valid([]byte(doc)) {
		b.Fatal("the document is not valid")
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := Repair(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRepairBroken(b *testing.B) {
	doc := memoriesDoc(MaxLength, true)
	if json.Valid([]byte(doc)) {
		b.Fatal("the document is not broken")
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := Repair(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAssemble(b *testing.B) {
	doc := memoriesDoc(MaxLength, false)
	var events []Event
	events = append(events, Event{Type: EventStart})
	for rest := doc; rest != ""; {
		n := min(100, len(rest))
		events = append(events, Event{Type: EventDelta, Content: rest[:n]})
		rest = rest[n:]
	}
	events = append(events, Event{Type: EventStop})
	c := clock.NewDeterministicMillis(0)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		a := NewAssembler(c, 0)
		for _, ev := range events {
			a.Process(ev)
		}
		if a.State() != StateComplete {
			b.Fatal(a.State())
		}
	}
}
