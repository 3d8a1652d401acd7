// Package memory holds what CueDeck remembers from agent transcripts and the
// rules that decide what is worth remembering (seed 003 §1, §5, §9 and seed
// 004 §3). The extractor workers use it to pick the salient messages of a
// transcript, graft rule-based experiences from it, and decide whether an
// extracted memory is inserted into cue_memories, updates the copy there, or
// is skipped; the edge's search_memories serves the resulting Memory records.
//
// Duplicates are exact matches of Hash, a SHA-256 of the memory's content
// after the seed's normalisation (NFKC, lowercase, whitespace, control
// characters, trailing punctuation). The seed's own test says "Hello,
// world!" and "hello world" hash the same; its algorithm keeps the internal
// comma, so they do not, and this package follows the algorithm.
//
// The package is pure: time and randomness come from package clock, tokens
// are counted by an injectable function, and nothing here does I/O.
package memory
