// Package hook answers Claude Code's command hooks for `cue hook <event>`:
// it reads the hook's JSON payload from stdin, injects the project context
// the daemon cached for SessionStart and UserPromptSubmit, and signals the
// daemon over a unix datagram socket without waiting for it. Claude Code
// waits for a hook before it goes on, so the thin `cue` binary runs this
// in-process on the standard library alone (internal/archtest keeps it so):
// whole-process answers in a few milliseconds.
//
// The daemon side (internal/hookserver) shares the paths, the cache file
// format and the signal's wire form defined here.
package hook
