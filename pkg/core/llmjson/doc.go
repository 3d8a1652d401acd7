// Package llmjson turns what a language model streams back into valid JSON.
// The extractor's Ollama path calls Repair (seed 003 §7) on a reply that is
// not valid JSON.
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
//     A quote ends its string only if what follows (after whitespace) is
//     ',', ':', '}', ']', a newline or the end; any other quote is text and
//     is escaped. Valid JSON always meets this test.
//   - Nesting. Missing closers are written innermost first from a stack,
//     so [{"a":1 becomes [{"a":1}] (the seed writes every '}' before every
//     ']'). A closer that skips an open container closes it first; one that
//     closes nothing is dropped.
//   - Cut-off values. A dangling key ({"a":1,"b": or {"a") is dropped with
//     its comma, a truncated number keeps its longest valid prefix, a
//     truncated literal is completed, a cut escape is dropped.
//   - Further repairs the seed lacks: raw control characters in strings
//     are escaped, invalid escapes become text, missing commas and colons
//     between members are written, bare keys are quoted, Python's True,
//     False and None become JSON's.
//   - Limits. MaxLength counts bytes, not UTF-16 units, and applies before
//     the fast path, as in the seed. MaxRepairs counts whole passes, not
//     single fixes; a pass that changes nothing ends the attempts on its
//     candidate.
package llmjson
