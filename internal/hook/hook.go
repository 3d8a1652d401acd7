package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Env is what a hook run needs from its process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Front is the absolute path of the `cue` binary: install writes it
	// into the settings, messages name it.
	Front string
	// Engine finds the cue-engine binary, which starts daemons and
	// initialises workspaces; it is only called when one must start.
	Engine func() (string, error)
	// ConfigDir holds the user's CueDeck config.toml ("" means
	// $XDG_CONFIG_HOME/cuedeck, else ~/.config/cuedeck).
	ConfigDir string
}

const usage = `Usage:
  cue hook <event>          answer a Claude Code hook (payload on stdin)
  cue hook install [--workspace DIR] [--dry-run]
                            register the hooks in DIR/.claude/settings.json`

// Main runs `cue hook args...` and returns the exit code. An event hook
// always exits 0: a failure is one line on stderr, since a hook that fails
// or blocks would get in the agent's way. install fails loudly instead: a
// person ran it.
func Main(args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, usage)
		return 2
	}
	if args[0] == "install" {
		if err := Install(args[1:], env); err != nil {
			fmt.Fprintln(env.Stderr, "cue hook install:", err)
			return 1
		}
		return 0
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(env.Stdout, usage)
		return 0
	}
	if err := Handle(args[0], env); err != nil {
		fmt.Fprintf(env.Stderr, "cue hook %s: %v\n", args[0], err)
	}
	return 0
}

// output is the JSON Claude Code reads from a SessionStart or
// UserPromptSubmit hook's stdout.
type output struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Handle answers one hook event. The event named on the command line wins
// over the payload's hook_event_name, which may be missing when run by hand.
func Handle(event string, env Env) error {
	p, err := ReadPayload(env.Stdin)
	if err != nil {
		return err
	}
	if p.HookEventName == "" {
		p.HookEventName = event
	}
	switch event {
	case SessionStart, UserPromptSubmit, Stop, SubagentStop, PreCompact:
	default:
		return nil // an event CueDeck does not use
	}
	cwd := p.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return err
		}
	}
	root, ok := Find(cwd)
	if !ok {
		if event != SessionStart {
			return nil
		}
		return say(env.Stdout, event, uninitialised(cwd, env))
	}
	sent := Send(SocketPath(root), SignalFor(p, root)) == nil
	switch event {
	case SessionStart:
		ctx := cachedContext(root, p.SessionID, false)
		if !sent {
			note := startDaemon(root, env)
			if ctx == "" {
				ctx = note
			} else {
				ctx = note + "\n\n" + ctx
			}
		}
		return say(env.Stdout, event, ctx)
	case UserPromptSubmit:
		if p.SystemGenerated() {
			return nil
		}
		return say(env.Stdout, event, cachedContext(root, p.SessionID, true))
	}
	return nil
}

// say writes the hook's answer; an empty context answers nothing.
func say(w io.Writer, event, context string) error {
	if context == "" {
		return nil
	}
	var o output
	o.HookSpecificOutput.HookEventName = event
	o.HookSpecificOutput.AdditionalContext = context
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// cachedContext returns the cached context to inject for session, and
// remembers its hash for the session. onlyIfChanged returns "" when the
// session already received this very context. A missing or corrupt cache
// gives "": the hook then adds nothing rather than failing the agent.
func cachedContext(root, session string, onlyIfChanged bool) string {
	c, err := ReadCache(root)
	if err != nil || strings.TrimSpace(c.Context) == "" {
		return ""
	}
	sum := shortHash(c.Context)
	marker := ""
	if session != "" {
		marker = filepath.Join(SessionsDir(root), markerName(session))
	}
	if onlyIfChanged && marker != "" {
		if prev, err := os.ReadFile(marker); err == nil && string(prev) == sum {
			return ""
		}
	}
	if marker != "" {
		// Best effort: without the marker the next prompt injects again.
		if err := os.WriteFile(marker, []byte(sum), 0o644); errors.Is(err, os.ErrNotExist) {
			if os.MkdirAll(SessionsDir(root), 0o755) == nil {
				os.WriteFile(marker, []byte(sum), 0o644)
			}
		}
	}
	return c.Context
}

// markerName keeps a session id usable as a file name: Claude Code's ids
// are UUIDs, anything else is hashed.
func markerName(session string) string {
	for _, r := range session {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return "h-" + shortHash(session)
		}
	}
	if len(session) > 100 {
		return "h-" + shortHash(session)
	}
	return session
}
