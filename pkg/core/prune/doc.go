// Package prune is the auto-supersede of seed 001: it finds the tool calls
// of an agent's conversation that later calls have made stale, and marks
// them superseded so their outputs can be left out. The extractor runs it
// on each transcript before salience selection and LLM extraction, so stale
// reads and old todo lists are never mined for memories; the
// prune_conversation tool runs it to show an agent what it can drop. It
// also tracks how long todos stay in_progress, builds the todo reminder
// with its stuck-task guidance, keeps one reminder of each kind in a
// context, and renders the `/acp stats` block and the log lines.
//
// Pruner.Supersede applies the rules in the seed's order (hash, file, todo,
// then in_progress tracking). Tool and parameter names come from Tools:
// SeedTools (read, filePath, todowrite…) by default, ClaudeCodeTools (Read,
// file_path, TodoWrite…) as a preset.
//
// Where the seed leaves a choice open, this package decides so:
//
//   - Only completed calls supersede. A pending or running call has no
//     output yet and an errored write changed nothing, so neither makes an
//     older call stale; errored calls are not superseded either (they are
//     the purgeErrors strategy's business).
//   - Hash runs first, so two identical calls fall to the hash rule even
//     when the file or todo rule would also apply: two todoread() calls
//     with no params are a hash supersession, tallied under hash.
//   - Todo: the latest todowrite and the latest todoread are each kept;
//     every earlier todowrite and every earlier todoread is superseded. A
//     todoread followed only by todowrites is the latest todoread and stays.
//   - File keys are compared verbatim (no path cleaning: the extractor has
//     no working directory to resolve against). A read/write/edit without a
//     path has no key and takes no part in the file rule. A missing glob or
//     grep part is an empty string: glob with only a pattern is
//     "glob::*.go".
//   - A write or edit supersedes read, write and edit calls only, as the
//     seed's rule says, never glob or grep results: a listing or a search
//     spans many files, and one changed file does not make the rest of it
//     stale. Glob and grep are superseded by the hash rule alone; their
//     keys are available from FileKey.
//   - Protected tools are never superseded but still supersede others.
//     Turn protection is a list of turns and a number of recent turns
//     (ProtectRecentTurns, off by default, so that the seed's examples hold).
//   - Supersede marks calls in place and is idempotent: a call superseded
//     by an earlier run stays so and is not counted again, so Result.Stats
//     holds this run's tallies only.
//   - Saved tokens are the superseded calls' output tokens; the stats block
//     writes them as FormatTokens does (one decimal in thousands).
//   - The log's hash is the first six hex characters of CallHash; calls
//     are matched on the whole hash.
//   - The todo reminder is due InitialTurns turns after the last todowrite
//     (or the conversation's start), then every RepeatTurns turns until the
//     next todowrite (8, 12, 16… with the defaults). Stuck guidance counts
//     the longest in_progress run; a task leaving in_progress loses its
//     turn, and todos are matched across writes by id, else by content.
//   - The seed's stuck-task flow (writes at turns 1, 3 and 5, a reminder at
//     15) elides a turn: after a write at 5 the reminder is due at 13 and 17.
//     The guidance is built for whatever turn the reminder is, so at 15 it
//     says 12 turns; a write at turn 7 would make 15 a reminder turn.
//   - The stats block always writes "prunes", as the seed's format does.
//   - The guidance names the configured todowrite tool, so it reads
//     `todowrite` with the seed's naming and `TodoWrite` with Claude Code's.
package prune
