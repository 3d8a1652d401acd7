// Package llmjson turns what a language model streams back into valid JSON.
// The extractor's Ollama path feeds a reply's chunks to an Assembler (seed
// 003 §8) and, when a reply is not valid JSON, Repair (§7) fixes it; both
// are pure and read time only through pkg/core/clock.
//
// Where the seed is ambiguous or wrong, this package decides:
//
//   - Null. Repair returns (string, error): the seed's null is a non-nil
//     error (ErrTooLarge, ErrNoJSON or ErrUnrepairable) with "".
//   - Boundaries. The seed cuts input from the first '{' or '[' to the last
//     '}' or ']', which turns {"key": "value into null, against its own
//     corpus. Repair starts at the first '{' or '[' (inside a markdown
//     fence if there is one) and ends where that value closes, or at the
//     end of input if it never does. Prose after the value, even prose with
//     braces, is dropped. If that candidate cannot be repaired and closed
//     early (prose such as "see [1]"), the next '{' or '[' after it is tried.
//   - Tokens. Literals true, false and null and whitespace are kept (the
//     seed drops them), so valid JSON comes back unchanged; valid input
//     takes a fast path and is returned byte for byte.
//   - Quotes. A ' opens a single-quoted string only where a string may
//     start; apostrophes inside double-quoted strings stay, and inner
//     double quotes are escaped when a single-quoted string is converted.
//     A quote ends its string only if the whitespace after it holds a
//     newline or what follows is ',', ':', '}', ']' or the end; any other
//     quote is text and is escaped. Valid JSON always meets this test; a
//     comma forgotten on one line ({"a": "x" "b": 1}) does not.
//   - Nesting. Missing closers are written innermost first from a stack,
//     so [{"a":1 becomes [{"a":1}] (the seed writes every '}' before every
//     ']'). A closer that skips an open container closes it first, so
//     {"a":[1,2}, "b":3} ends after the first '}' and loses "b"; a closer
//     that closes nothing is dropped.
//   - Cut-off values. A dangling key ({"a":1,"b": or {"a") is dropped with
//     its comma, a truncated number keeps its longest valid prefix, a
//     truncated literal is completed, a cut escape is dropped.
//   - Further repairs the seed lacks: raw control characters in strings
//     are escaped, invalid escapes become text, missing commas and colons
//     between members are written, a bare word followed by ':' is quoted
//     as a key, and Python's True, False and None become JSON's.
//   - Limits. MaxLength counts bytes, not UTF-16 units, and applies before
//     the fast path, as in the seed. MaxRepairs counts whole passes, not
//     single fixes; a pass that changes nothing ends the attempts on its
//     candidate. Nesting deeper than encoding/json accepts (10,000) cannot
//     be repaired.
//
// For the Assembler:
//
//   - awaiting_close. The seed's code never enters it. Here a delta after
//     which the stream is structurally complete and parses moves in_chunk
//     to awaiting_close and yields complete_object with CanValidate. In
//     awaiting_close, stop completes; whitespace deltas are accepted and
//     not kept; any other delta is an invalid transition; and once the
//     close timeout has passed, the next event or CheckTimeout fails the
//     stream with ErrCloseTimeout.
//   - Structural tracking starts at the first '{' or '['; the mid-stream
//     parse happens only when that first value closes and only once, and a
//     bare scalar never counts as complete mid-stream (42 might be 421),
//     where the seed's check (depths zero, buffer not blank) counts it.
//     The seed's escape handling is right: its `continue` after escapeNext
//     skips the escaped byte, so \" split across chunks stays in the string.
//   - Errors. The seed sets state to error before naming the state in its
//     message, so it always says "in state: error"; here the message names
//     the state the event arrived in. A failed stop ends in StateError,
//     not StateComplete. Complete and error are final: later events get an
//     error and leave the state alone.
//   - Repair at stop. The seed's attemptBasicRepair closes braces before
//     brackets and the string after both, so its own test ({"memories":[{
//     ... cut off) fails. Stop uses Repair's machine instead, without
//     MaxLength since the buffer is bounded by MaxBufferSize.
//   - ChunkCount counts every event, start and stop included, as the seed
//     does. Sizes are in bytes.
package llmjson
