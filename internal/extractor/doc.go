// Package extractor is the extractor role: workers on the durable consumer
// "extractor" that turn each transcript batch into deduplicated memories in
// cue_memories. A batch is parsed, its stale tool calls superseded (seed
// 001), its salient messages selected (seed 003 §1) and its memories
// extracted by the LLM when one is configured and the shared guards allow
// the call, by experience grafting rules (seed 004 §3) otherwise. The
// guards — a daily budget and a token projection — live in cue_budget so
// that any number of workers together stay inside them. What a batch gave
// is recorded in cue_extractions before any memory is written, so a batch
// delivered again is never extracted (nor paid for) twice.
//
// The daemon runs one Service beside the indexer; cmd/extractor runs it
// alone against a cluster.
package extractor
