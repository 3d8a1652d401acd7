package hook

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// AutoInit is the [auto_init] table of the user's config.toml
// (~/.config/cuedeck/config.toml), seed 004 §6:
//
//	[auto_init]
//	enabled = true   # SessionStart in a project without .cuedeck runs cue init and cue up
//	min_files = 10   # but not in directories with fewer files than this
//
// The hook reads it with a line scan rather than a TOML decoder, to stay
// in the standard library: one `key = value` per line, values true/false
// and decimal integers, `#` comments; other tables and keys are ignored.
type AutoInit struct {
	Enabled  bool
	MinFiles int
}

// DefaultMinFiles keeps auto-init out of scratch directories.
const DefaultMinFiles = 10

func configDir(env Env) string {
	if env.ConfigDir != "" {
		return env.ConfigDir
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "cuedeck")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "cuedeck")
}

// readAutoInit reads [auto_init] from dir/config.toml. A missing file is
// auto-init off; a value it cannot read is an error naming the line.
func readAutoInit(dir string) (AutoInit, error) {
	ai := AutoInit{MinFiles: DefaultMinFiles}
	if dir == "" {
		return ai, nil
	}
	path := filepath.Join(dir, "config.toml")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return ai, nil
	}
	if err != nil {
		return ai, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			in = line == "[auto_init]"
			continue
		}
		if !in {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "enabled":
			b, err := strconv.ParseBool(val)
			if err != nil {
				return ai, fmt.Errorf("%s:%d: auto_init.enabled must be true or false, not %s", path, n, val)
			}
			ai.Enabled = b
		case "min_files":
			v, err := strconv.Atoi(val)
			if err != nil || v < 0 {
				return ai, fmt.Errorf("%s:%d: auto_init.min_files must be a whole number ≥ 0, not %s", path, n, val)
			}
			ai.MinFiles = v
		}
	}
	return ai, sc.Err()
}
