package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HookTimeout is the timeout, in seconds, written for each hook: far above
// what the hook takes, so that a stalled disk is the only way to reach it.
const HookTimeout = 5

// Change is what Install did (or would do) for one event.
type Change struct {
	Event   string
	Action  string // "added", "updated" or "unchanged"
	Command string
}

// Install runs `cue hook install [--workspace DIR] [--dry-run]`.
func Install(args []string, env Env) error {
	fs := flag.NewFlagSet("cue hook install", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	wsFlag := fs.String("workspace", "", "project root (default: the workspace or repository around the current directory)")
	dry := fs.Bool("dry-run", false, "print what would change, write nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root := *wsFlag
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		var ok bool
		if root, ok = Find(wd); !ok {
			root = ProjectRoot(wd)
		}
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if env.Front == "" {
		return errors.New("cannot tell where the cue binary is; run it by its path")
	}
	path := filepath.Join(root, ".claude", "settings.json")
	changes, err := InstallSettings(path, env.Front, *dry)
	if err != nil {
		return err
	}
	verb := "wrote"
	if *dry {
		verb = "would write"
	}
	changed := false
	for _, c := range changes {
		fmt.Fprintf(env.Stdout, "  %-9s %-16s %s\n", c.Action, c.Event, c.Command)
		changed = changed || c.Action != "unchanged"
	}
	if changed {
		fmt.Fprintf(env.Stdout, "%s %s\n", verb, path)
	} else {
		fmt.Fprintf(env.Stdout, "%s already has CueDeck's hooks; nothing to do\n", path)
	}
	return nil
}

// InstallSettings adds a command hook `<front> hook <Event>` for each of
// InstalledEvents to the Claude Code settings file at path, creating it if
// missing, as MergeSettings describes. The file is replaced atomically,
// and not at all when nothing changes or dryRun is set. A file that is not
// a JSON object is an error, and the file is left as it was.
func InstallSettings(path, front string, dryRun bool) ([]Change, error) {
	old, perm, err := ReadSettingsFile(path)
	if err != nil {
		return nil, err
	}
	out, changes, err := MergeSettings(path, old, front)
	if err != nil {
		return nil, err
	}
	if dryRun || bytes.Equal(out, old) {
		return changes, nil
	}
	return changes, WriteSettingsFile(path, out, perm)
}

// ReadSettingsFile returns a settings file's bytes and permissions: nil
// and 0644 when it does not exist.
func ReadSettingsFile(path string) ([]byte, os.FileMode, error) {
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	perm := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	return old, perm, nil
}

// WriteSettingsFile replaces path with data atomically, creating its
// directory.
func WriteSettingsFile(path string, data []byte, perm os.FileMode) error {
	return writeFileAtomic(path, data, perm)
}

// MergeSettings returns the Claude Code settings old (the file at path,
// named in errors; nil or blank for none) with a command hook
// `<front> hook <Event>` for each of InstalledEvents, and what changed per
// event. Every other key and hook entry is kept; an entry of ours (a
// command `…/cue hook <Event>`) naming another binary is updated in place.
// When nothing changes, old itself is returned; otherwise the result is
// JSON with a 2-space indent. Settings that are not a JSON object are an
// error.
func MergeSettings(path string, old []byte, front string) ([]byte, []Change, error) {
	settings := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &settings); err != nil {
			return nil, nil, fmt.Errorf("%s is not valid JSON (%v); fix or move it and run the command again (the file was not changed)", path, err)
		}
	}
	hooks := map[string]json.RawMessage{}
	if raw, ok := settings["hooks"]; ok {
		if err := json.Unmarshal(raw, &hooks); err != nil {
			return nil, nil, fmt.Errorf("%s: \"hooks\" is not an object of events (%v); fix it and run the command again (the file was not changed)", path, err)
		}
	}
	var changes []Change
	changed := false
	for _, event := range InstalledEvents {
		command := shellQuote(front) + " hook " + event
		var groups []map[string]json.RawMessage
		if raw, ok := hooks[event]; ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, nil, fmt.Errorf("%s: hooks.%s is not a list of matcher groups (%v); fix it and run the command again (the file was not changed)", path, event, err)
			}
		}
		action, err := ensureCommand(&groups, event, command)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: hooks.%s: %v (the file was not changed)", path, event, err)
		}
		changes = append(changes, Change{Event: event, Action: action, Command: command})
		if action != "unchanged" {
			changed = true
			if hooks[event], err = MarshalJSON(groups, ""); err != nil {
				return nil, nil, err
			}
		}
	}
	if !changed {
		return old, changes, nil
	}
	var err error
	if settings["hooks"], err = MarshalJSON(hooks, ""); err != nil {
		return nil, nil, err
	}
	out, err := MarshalJSON(settings, "  ")
	if err != nil {
		return nil, nil, err
	}
	return append(out, '\n'), changes, nil
}

// ensureCommand makes groups hold exactly one hook of ours with command.
func ensureCommand(groups *[]map[string]json.RawMessage, event, command string) (string, error) {
	for _, g := range *groups {
		var hs []map[string]json.RawMessage
		if raw, ok := g["hooks"]; ok {
			if err := json.Unmarshal(raw, &hs); err != nil {
				return "", fmt.Errorf("a matcher group's \"hooks\" is not a list (%v)", err)
			}
		}
		for _, h := range hs {
			var typ, cmd string
			json.Unmarshal(h["type"], &typ)
			json.Unmarshal(h["command"], &cmd)
			if typ != "command" || !isOurs(cmd, event) {
				continue
			}
			if cmd == command {
				return "unchanged", nil
			}
			h["command"], _ = MarshalJSON(command, "")
			raw, err := MarshalJSON(hs, "")
			if err != nil {
				return "", err
			}
			g["hooks"] = raw
			return "updated", nil
		}
	}
	entry, err := MarshalJSON([]map[string]any{{"type": "command", "command": command, "timeout": HookTimeout}}, "")
	if err != nil {
		return "", err
	}
	*groups = append(*groups, map[string]json.RawMessage{"hooks": entry})
	return "added", nil
}

// isOurs reports whether a hook command runs some `cue` binary's hook for
// event: "<…/cue> hook <event>", the path possibly quoted.
func isOurs(cmd, event string) bool {
	bin, ok := strings.CutSuffix(strings.TrimSpace(cmd), " hook "+event)
	if !ok {
		return false
	}
	bin = strings.Trim(strings.TrimSpace(bin), `'"`)
	return filepath.Base(bin) == "cue"
}

// shellQuote quotes p for the shell Claude Code runs hook commands with,
// when it holds anything but plain path characters.
func shellQuote(p string) string {
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@", r)) {
			return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}
	}
	return p
}

// MarshalJSON encodes v without escaping <, > and &, which are common in
// the shell commands and URLs of agents' settings files and need no
// escaping there; indent "" is compact.
func MarshalJSON(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
