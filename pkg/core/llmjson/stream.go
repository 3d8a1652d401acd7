package llmjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/cuedeck/cuedeck/pkg/core/clock"
)

// Limits of the Assembler (seed 003 §8).
const (
	// MaxBufferSize is the most bytes of deltas an Assembler holds.
	MaxBufferSize = 100_000
	// DefaultCloseTimeout is how long an Assembler waits in
	// StateAwaitingClose for the stop event when NewAssembler is given 0.
	DefaultCloseTimeout = 5 * time.Second
)

// Errors of the Assembler. The messages are the seed's.
var (
	ErrBufferOverflow = errors.New("Buffer overflow: exceeded max size")
	ErrInvalidJSON    = errors.New("Invalid JSON after streaming complete")
	ErrStream         = errors.New("Stream error")
	ErrCloseTimeout   = errors.New("Timed out awaiting the stop event")
	ErrIncomplete     = errors.New("Stream ended without completion")
	// ErrInvalidTransition matches every *TransitionError.
	ErrInvalidTransition = errors.New("invalid stream transition")
)

// State is where an Assembler is in a stream.
type State uint8

// States of seed 003 §8's diagram.
const (
	StateAwaitingStart State = iota
	StateInChunk
	StateAwaitingClose
	StateComplete
	StateError
)

func (s State) String() string {
	switch s {
	case StateAwaitingStart:
		return "awaiting_start"
	case StateInChunk:
		return "in_chunk"
	case StateAwaitingClose:
		return "awaiting_close"
	case StateComplete:
		return "complete"
	case StateError:
		return "error"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// EventType is the kind of a stream event.
type EventType uint8

// Event types: a stream is a start, deltas, then a stop, or an error.
const (
	EventStart EventType = iota
	EventDelta
	EventStop
	EventError
)

func (t EventType) String() string {
	switch t {
	case EventStart:
		return "start"
	case EventDelta:
		return "delta"
	case EventStop:
		return "stop"
	case EventError:
		return "error"
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Event is one event of a model's streamed reply.
type Event struct {
	Type    EventType
	Content string // the text of a delta
	Err     error  // the cause of an error event; nil means ErrStream alone
}

// ResultType says what processing an event produced.
type ResultType uint8

// Result types.
const (
	// ResultContinue: more events are needed.
	ResultContinue ResultType = iota
	// ResultCompleteObject: the deltas so far form a complete, valid
	// value; the stream should stop next.
	ResultCompleteObject
	// ResultComplete: the stream stopped and Buffer holds valid JSON.
	ResultComplete
	// ResultError: the stream failed; Err says why.
	ResultError
)

func (t ResultType) String() string {
	switch t {
	case ResultContinue:
		return "continue"
	case ResultCompleteObject:
		return "complete_object"
	case ResultComplete:
		return "complete"
	case ResultError:
		return "error"
	}
	return fmt.Sprintf("ResultType(%d)", uint8(t))
}

// Result is what an Assembler made of one event.
type Result struct {
	Type        ResultType
	Buffer      string // the text assembled so far; on ResultComplete, the JSON
	Err         error  // set on ResultError
	CanValidate bool   // set on ResultCompleteObject: Buffer parses
	WasRepaired bool   // set on ResultComplete when Buffer needed Repair
	ChunkCount  int    // events processed so far, as the seed counts them
}

// TransitionError is an event the current state does not accept.
type TransitionError struct {
	Event EventType
	State State // the state the event arrived in
}

func (e *TransitionError) Error() string {
	switch e.Event {
	case EventStart:
		return "Unexpected start event in state: " + e.State.String()
	case EventDelta:
		return "Delta received in invalid state: " + e.State.String()
	case EventStop:
		return "Stop received in invalid state: " + e.State.String()
	}
	return e.Event.String() + " event received in state: " + e.State.String()
}

// Is makes errors.Is(err, ErrInvalidTransition) hold.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }

// Depth counts the objects and arrays open in the stream.
type Depth struct{ Brace, Bracket int }

// Metrics is a snapshot of an Assembler, for logging a failure.
type Metrics struct {
	State      State
	BufferSize int // bytes
	ChunkCount int
	Depth      Depth
	InString   bool
}

// Assembler is seed 003 §8's streaming assembly state machine: it collects
// the deltas of one streamed reply, notices when they form a complete value,
// and at the stop event returns valid JSON, repaired if need be. It is safe
// for concurrent use.
type Assembler struct {
	clock        clock.Clock
	closeTimeout time.Duration

	mu         sync.Mutex
	state      State
	buf        strings.Builder
	chunkCount int
	depth      Depth
	inString   bool
	escapeNext bool
	opened     bool      // an object or array has begun
	probed     bool      // a mid-stream parse was tried
	closeSince time.Time // when StateAwaitingClose was entered
}

// NewAssembler returns an Assembler in StateAwaitingStart that reads time
// from c. It fails a stream whose stop event has not come closeTimeout after
// its value completed; 0 means DefaultCloseTimeout.
func NewAssembler(c clock.Clock, closeTimeout time.Duration) *Assembler {
	if closeTimeout <= 0 {
		closeTimeout = DefaultCloseTimeout
	}
	return &Assembler{clock: c, closeTimeout: closeTimeout}
}

// Process advances the machine by one event. Before the event, a stream
// that has waited too long in StateAwaitingClose fails with
// ErrCloseTimeout. StateComplete and StateError are final: a later event
// gets a ResultError and leaves the state alone.
func (a *Assembler) Process(ev Event) Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.chunkCount++
	if r, expired := a.expireLocked(); expired {
		return r
	}
	if a.state == StateComplete || a.state == StateError {
		return a.resultLocked(ResultError, &TransitionError{Event: ev.Type, State: a.state})
	}
	switch ev.Type {
	case EventStart:
		return a.startLocked()
	case EventDelta:
		return a.deltaLocked(ev.Content)
	case EventStop:
		return a.stopLocked()
	case EventError:
		err := ErrStream
		if ev.Err != nil {
			err = fmt.Errorf("%w: %w", ErrStream, ev.Err)
		}
		return a.failLocked(err)
	}
	return a.resultLocked(ResultContinue, nil)
}

// CheckTimeout fails the stream with ErrCloseTimeout if it has waited in
// StateAwaitingClose for the close timeout or longer; otherwise it returns
// a ResultContinue and changes nothing. Process checks the same before
// every event; a caller waiting on a silent stream calls this from a timer.
func (a *Assembler) CheckTimeout() Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, expired := a.expireLocked(); expired {
		return r
	}
	return a.resultLocked(ResultContinue, nil)
}

// State returns the current state.
func (a *Assembler) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

// Metrics returns a snapshot of the machine.
func (a *Assembler) Metrics() Metrics {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Metrics{
		State:      a.state,
		BufferSize: a.buf.Len(),
		ChunkCount: a.chunkCount,
		Depth:      a.depth,
		InString:   a.inString,
	}
}

// Assemble processes events until the stream completes or fails. It returns
// the ResultComplete, or the failing Result and its error; if events end
// first, ErrIncomplete.
func (a *Assembler) Assemble(events iter.Seq[Event]) (Result, error) {
	for ev := range events {
		switch r := a.Process(ev); r.Type {
		case ResultComplete:
			return r, nil
		case ResultError:
			return r, r.Err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.resultLocked(ResultError, ErrIncomplete), ErrIncomplete
}

// Assemble is the seed's assembleStreamedResponse: it assembles events with
// a fresh Assembler on the system clock and returns the JSON, or "" and the
// error that ended the stream.
func Assemble(events iter.Seq[Event]) (string, error) {
	r, err := NewAssembler(clock.System{}, 0).Assemble(events)
	if err != nil {
		return "", err
	}
	return r.Buffer, nil
}

func (a *Assembler) startLocked() Result {
	if a.state != StateAwaitingStart {
		return a.failLocked(&TransitionError{Event: EventStart, State: a.state})
	}
	a.state = StateInChunk
	a.buf.Reset()
	a.depth, a.inString, a.escapeNext, a.opened, a.probed = Depth{}, false, false, false, false
	return a.resultLocked(ResultContinue, nil)
}

func (a *Assembler) deltaLocked(chunk string) Result {
	switch a.state {
	case StateInChunk:
	case StateAwaitingClose:
		// The value is complete; only whitespace may follow it (Ollama's
		// JSON mode pads its reply with newlines). It is not kept.
		if strings.TrimLeft(chunk, " \t\r\n") == "" {
			return a.resultLocked(ResultContinue, nil)
		}
		fallthrough
	default:
		return a.failLocked(&TransitionError{Event: EventDelta, State: a.state})
	}
	if a.buf.Len()+len(chunk) > MaxBufferSize {
		return a.failLocked(ErrBufferOverflow)
	}
	a.buf.WriteString(chunk)
	a.track(chunk)
	if a.opened && !a.inString && a.depth == (Depth{}) && !a.probed {
		// The first value has closed. Parse once: a stream that is not
		// valid JSON by now is left for the stop event to repair, and
		// parsing at every later balance would make a long, broken stream
		// quadratic.
		a.probed = true
		if json.Valid([]byte(a.buf.String())) {
			a.state = StateAwaitingClose
			a.closeSince = a.clock.Now()
			r := a.resultLocked(ResultCompleteObject, nil)
			r.CanValidate = true
			return r
		}
	}
	return a.resultLocked(ResultContinue, nil)
}

// track updates the structural balance with chunk. Quotes and brackets
// count only from the first '{' or '[' on, so prose before the value (an
// apostrophe, a stray quote) cannot leave the tracker inside a string.
func (a *Assembler) track(chunk string) {
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		if !a.opened {
			if c != '{' && c != '[' {
				continue
			}
			a.opened = true
		}
		switch {
		case a.escapeNext:
			a.escapeNext = false
		case a.inString:
			switch c {
			case '\\':
				a.escapeNext = true
			case '"':
				a.inString = false
			}
		case c == '"':
			a.inString = true
		case c == '{':
			a.depth.Brace++
		case c == '}':
			a.depth.Brace--
		case c == '[':
			a.depth.Bracket++
		case c == ']':
			a.depth.Bracket--
		}
	}
}

func (a *Assembler) stopLocked() Result {
	if a.state != StateInChunk && a.state != StateAwaitingClose {
		return a.failLocked(&TransitionError{Event: EventStop, State: a.state})
	}
	buf := a.buf.String()
	// In awaiting_close the buffer has parsed and not changed since.
	if a.state == StateAwaitingClose || json.Valid([]byte(buf)) {
		a.state = StateComplete
		return a.resultLocked(ResultComplete, nil)
	}
	// The buffer is bounded by MaxBufferSize, so Repair's MaxLength does
	// not apply here.
	repaired, err := repair(buf)
	if err != nil {
		return a.failLocked(ErrInvalidJSON)
	}
	a.state = StateComplete
	r := a.resultLocked(ResultComplete, nil)
	r.Buffer, r.WasRepaired = repaired, true
	return r
}

func (a *Assembler) expireLocked() (Result, bool) {
	if a.state != StateAwaitingClose || a.clock.Now().Sub(a.closeSince) < a.closeTimeout {
		return Result{}, false
	}
	return a.failLocked(ErrCloseTimeout), true
}

func (a *Assembler) failLocked(err error) Result {
	a.state = StateError
	return a.resultLocked(ResultError, err)
}

func (a *Assembler) resultLocked(t ResultType, err error) Result {
	return Result{Type: t, Buffer: a.buf.String(), Err: err, ChunkCount: a.chunkCount}
}
