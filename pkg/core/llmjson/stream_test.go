package llmjson

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

func start() Event         { return Event{Type: EventStart} }
func delta(s string) Event { return Event{Type: EventDelta, Content: s} }
func stop() Event          { return Event{Type: EventStop} }
func newTestAssembler() *Assembler {
	return NewAssembler(clock.NewDeterministicMillis(0), time.Second)
}

// The three tests of seed 003 §8.

func TestAssemblesCompleteJSONFromChunks(t *testing.T) {
	got, err := Assemble(slices.Values([]Event{
		start(),
		delta(`{"schema`),
		delta(`Version":"v1",`),
		delta(`"memories":[`),
		delta(`{"content":"test"}`),
		delta(`]}`),
		stop(),
	}))
	if err != nil || !sameJSON(got, `{"schemaVersion":"v1","memories":[{"content":"test"}]}`) {
		t.Fatalf("Assemble = %q, %v", got, err)
	}
}

func TestAssembleRepairsIncompleteJSON(t *testing.T) {
	r, err := newTestAssembler().Assemble(slices.Values([]Event{
		start(),
		delta(`{"memories":[{"content":"test"`),
		stop(), // missing }]}
	}))
	if err != nil || !strings.Contains(r.Buffer, "}]}") || !r.WasRepaired {
		t.Fatalf("Assemble = %+v, %v", r, err)
	}
	if r.Buffer != `{"memories":[{"content":"test"}]}` {
		t.Errorf("buffer %q", r.Buffer)
	}
}

func TestDetectsStructuralCompletionMidStream(t *testing.T) {
	a := newTestAssembler()
	a.Process(start())
	a.Process(delta(`{"test":`))
	r := a.Process(delta(`true}`))
	if !r.CanValidate || r.Type != ResultCompleteObject || r.Buffer != `{"test":true}` {
		t.Fatalf("result %+v", r)
	}
	if s := a.State(); s != StateAwaitingClose {
		t.Fatalf("state %v, want awaiting_close", s)
	}
	if r := a.Process(stop()); r.Type != ResultComplete || r.WasRepaired || r.Buffer != `{"test":true}` || r.ChunkCount != 4 {
		t.Fatalf("stop: %+v", r)
	}
}

// The diagram's transitions.

func TestTransitions(t *testing.T) {
	a := newTestAssembler()
	steps := []struct {
		ev    Event
		want  ResultType
		state State
	}{
		{start(), ResultContinue, StateInChunk},
		{delta(`[1,`), ResultContinue, StateInChunk},
		{delta(`2]`), ResultCompleteObject, StateAwaitingClose},
		{delta("\n\n "), ResultContinue, StateAwaitingClose},
		{stop(), ResultComplete, StateComplete},
	}
	if a.State() != StateAwaitingStart {
		t.Fatalf("initial state %v", a.State())
	}
	for i, s := range steps {
		r := a.Process(s.ev)
		if r.Type != s.want || a.State() != s.state {
			t.Fatalf("step %d (%v): %v in %v, want %v in %v", i, s.ev.Type, r.Type, a.State(), s.want, s.state)
		}
	}
	if m := a.Metrics(); m.BufferSize != 5 || m.ChunkCount != 5 || m.Depth != (Depth{}) || m.InString {
		t.Errorf("metrics %+v", m)
	}
}

func TestStopInChunkCompletes(t *testing.T) {
	a := newTestAssembler()
	a.Process(start())
	a.Process(delta(`{"a":1,}`)) // balanced but invalid: stays in_chunk
	if a.State() != StateInChunk {
		t.Fatalf("state %v", a.State())
	}
	r := a.Process(stop())
	if r.Type != ResultComplete || !r.WasRepaired || r.Buffer != `{"a":1}` {
		t.Fatalf("stop: %+v", r)
	}
}

func TestInvalidTransitionsNameTheState(t *testing.T) {
	cases := []struct {
		events []Event
		want   string
		state  State // after the last event
	}{
		{[]Event{delta("x")}, "Delta received in invalid state: awaiting_start", StateError},
		{[]Event{stop()}, "Stop received in invalid state: awaiting_start", StateError},
		{[]Event{start(), start()}, "Unexpected start event in state: in_chunk", StateError},
		{[]Event{start(), delta("[]"), delta(" x")}, "Delta received in invalid state: awaiting_close", StateError},
		{[]Event{start(), delta("[]"), start()}, "Unexpected start event in state: awaiting_close", StateError},
		{[]Event{start(), delta("[]"), stop(), delta("x")}, "Delta received in invalid state: complete", StateComplete},
		{[]Event{start(), delta("[]"), stop(), stop()}, "Stop received in invalid state: complete", StateComplete},
		{[]Event{start(), start(), start()}, "Unexpected start event in state: error", StateError},
	}
	for _, tc := range cases {
		a := newTestAssembler()
		var r Result
		for _, ev := range tc.events {
			r = a.Process(ev)
		}
		if r.Type != ResultError || r.Err == nil || r.Err.Error() != tc.want || !errors.Is(r.Err, ErrInvalidTransition) {
			t.Errorf("%v: got %v %v, want %q", tc.events, r.Type, r.Err, tc.want)
		}
		if a.State() != tc.state {
			t.Errorf("%v: state %v, want %v", tc.events, a.State(), tc.state)
		}
	}
}

func TestBufferOverflow(t *testing.T) {
	a := newTestAssembler()
	a.Process(start())
	if r := a.Process(delta(`["` + strings.Repeat("x", MaxBufferSize-2))); r.Type != ResultContinue {
		t.Fatalf("at the limit: %+v", r.Err)
	}
	r := a.Process(delta("x"))
	if r.Type != ResultError || !errors.Is(r.Err, ErrBufferOverflow) || r.Err.Error() != "Buffer overflow: exceeded max size" {
		t.Fatalf("over the limit: %v %v", r.Type, r.Err)
	}
	if a.State() != StateError || a.Metrics().BufferSize != MaxBufferSize {
		t.Fatalf("state %v, metrics %+v", a.State(), a.Metrics())
	}
}

func TestErrorEvent(t *testing.T) {
	a := newTestAssembler()
	a.Process(start())
	a.Process(delta(`{"a":`))
	cause := errors.New("connection reset")
	r := a.Process(Event{Type: EventError, Err: cause})
	if r.Type != ResultError || !errors.Is(r.Err, ErrStream) || !errors.Is(r.Err, cause) || r.Buffer != `{"a":` {
		t.Fatalf("%+v", r)
	}
	if a.State() != StateError {
		t.Fatalf("state %v", a.State())
	}

	b := newTestAssembler()
	if r := b.Process(Event{Type: EventError}); r.Err != ErrStream || r.Err.Error() != "Stream error" {
		t.Fatalf("bare error event: %v", r.Err)
	}
}

func TestInvalidJSONAfterStop(t *testing.T) {
	_, err := newTestAssembler().Assemble(slices.Values([]Event{start(), delta("no json at all"), stop()}))
	if !errors.Is(err, ErrInvalidJSON) || err.Error() != "Invalid JSON after streaming complete" {
		t.Fatalf("err %v", err)
	}
}

func TestStreamEndsWithoutStop(t *testing.T) {
	_, err := Assemble(slices.Values([]Event{start(), delta(`{}`)}))
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err %v", err)
	}
}

func TestAwaitingCloseTimesOut(t *testing.T) {
	c := clock.NewDeterministicMillis(0)
	a := NewAssembler(c, 2*time.Second)
	a.Process(start())
	a.Process(delta(`{"a":1}`))
	c.Advance(2*time.Second - time.Millisecond)
	if r := a.CheckTimeout(); r.Type != ResultContinue || a.State() != StateAwaitingClose {
		t.Fatalf("before the timeout: %+v", r)
	}
	c.Advance(time.Millisecond)
	r := a.Process(stop())
	if r.Type != ResultError || !errors.Is(r.Err, ErrCloseTimeout) || r.Buffer != `{"a":1}` {
		t.Fatalf("after the timeout: %+v", r)
	}
	if a.State() != StateError {
		t.Fatalf("state %v", a.State())
	}

	// CheckTimeout fails a stream that has gone silent.
	b := NewAssembler(c, 0)
	b.Process(start())
	b.Process(delta(`[]`))
	c.Advance(DefaultCloseTimeout)
	if r := b.CheckTimeout(); !errors.Is(r.Err, ErrCloseTimeout) {
		t.Fatalf("CheckTimeout: %+v", r)
	}
}

func TestNoTimeoutOutsideAwaitingClose(t *testing.T) {
	c := clock.NewDeterministicMillis(0)
	a := NewAssembler(c, time.Second)
	a.Process(start())
	a.Process(delta(`{"a":`))
	c.Advance(time.Hour)
	if r := a.Process(delta(`1}`)); r.Type != ResultCompleteObject {
		t.Fatalf("%+v", r)
	}
	if r := a.Process(stop()); r.Type != ResultComplete {
		t.Fatalf("%+v", r)
	}
}

// Chunk boundaries inside strings and escapes must not fool the tracker.
func TestChunkBoundariesInsideStrings(t *testing.T) {
	cases := [][]string{
		{`{"a":"x\`, `"}`, `"}`},             // \" split after the backslash
		{`{"a":"x\\`, `"}`},                  // an escaped backslash, then the closing quote
		{`{"a":"}]`, `{["`, `}`},             // structure inside a string
		{`{"a":"\u00`, `7d"}`},               // \u escape split
		{`{"a`, `":`, `"b`, `"`, `}`},        // split around every quote
		{`Here's the "JSON": `, `{"a":"b"}`}, // prose with quotes before the value
	}
	for _, chunks := range cases {
		a := newTestAssembler()
		a.Process(start())
		var last Result
		for _, c := range chunks {
			last = a.Process(delta(c))
			if last.Type == ResultError {
				t.Fatalf("%q: %v", chunks, last.Err)
			}
		}
		whole := strings.Join(chunks, "")
		m := a.Metrics()
		if m.Depth != (Depth{}) || m.InString {
			t.Errorf("%q: metrics %+v", chunks, m)
		}
		r := a.Process(stop())
		if r.Type != ResultComplete {
			t.Fatalf("%q: stop %+v", chunks, r)
		}
		if want, err := Repair(whole); err != nil || r.Buffer != want {
			t.Errorf("%q: buffer %q, want %q", chunks, r.Buffer, want)
		}
	}
}

func TestEscapedQuoteAcrossChunksIsNotComplete(t *testing.T) {
	a := newTestAssembler()
	a.Process(start())
	a.Process(delta(`{"a":"x\`))
	if r := a.Process(delta(`"}`)); r.Type != ResultContinue {
		t.Fatalf("the escaped quote ended the string: %+v", r)
	}
	if m := a.Metrics(); !m.InString || m.Depth.Brace != 1 {
		t.Fatalf("metrics %+v", m)
	}
	if r := a.Process(delta(`"}`)); r.Type != ResultCompleteObject {
		t.Fatalf("%+v", r)
	}
}

func TestScalarIsNotCompleteMidStream(t *testing.T) {
	a := newTestAssembler()
	a.Process(start())
	if r := a.Process(delta("4")); r.Type != ResultContinue {
		t.Fatalf("%+v", r)
	}
	a.Process(delta("2"))
	if r := a.Process(stop()); r.Type != ResultComplete || r.Buffer != "42" {
		t.Fatalf("%+v", r)
	}
}

func TestRepairAtStopIgnoresMaxLength(t *testing.T) {
	doc := `{"a":"` + strings.Repeat("x", MaxLength) + `"`
	r, err := newTestAssembler().Assemble(slices.Values([]Event{start(), delta(doc), stop()}))
	if err != nil || r.Buffer != doc+"}" {
		t.Fatalf("%v, %d bytes", err, len(r.Buffer))
	}
}
