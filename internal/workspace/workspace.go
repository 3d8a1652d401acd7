// Package workspace knows where a CueDeck workspace keeps its files: the
// .cuedeck directory with cards, docs and config.toml, and the cache
// directory holding the embedded NATS store, each role's Badger, the
// daemon's lock and the file that tells clients how to reach the daemon.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Dir names inside a workspace root.
const (
	MetaDir    = ".cuedeck"
	CacheDir   = ".cuedeck/.cache"
	ConfigFile = ".cuedeck/config.toml"
	// SceneFile is where `cue scene` writes the scene: a rendering of other
	// files, so neither committed nor indexed.
	SceneFile = ".cuedeck/SCENE.md"
)

// Ignored are the lines Init adds to .gitignore.
var Ignored = []string{"/" + CacheDir + "/", "/" + SceneFile}

// ErrNotInitialised means the workspace has no .cuedeck directory.
var ErrNotInitialised = errors.New("workspace not initialised")

// Workspace is a workspace root and the paths derived from it.
type Workspace struct {
	Root string
}

// Find returns the workspace for dir: dir itself when given explicitly
// (explicit is true), otherwise the nearest ancestor of dir holding a
// .cuedeck directory, else the nearest holding .git, else dir.
func Find(dir string, explicit bool) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("workspace: %s is not a directory", abs)
	}
	if explicit {
		return &Workspace{Root: abs}, nil
	}
	for _, marker := range []string{MetaDir, ".git"} {
		for d := abs; ; {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return &Workspace{Root: d}, nil
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return &Workspace{Root: abs}, nil
}

// Path joins rel (slash-separated) to the root.
func (w *Workspace) Path(rel string) string {
	return filepath.Join(w.Root, filepath.FromSlash(rel))
}

// Cache is the cache directory; everything in it can be rebuilt.
func (w *Workspace) Cache() string { return w.Path(CacheDir) }

// StateDir is a role's local state directory inside the cache.
func (w *Workspace) StateDir(role string) string { return filepath.Join(w.Cache(), "state", role) }

// NATSStoreDir is the embedded server's JetStream store.
func (w *Workspace) NATSStoreDir() string { return filepath.Join(w.Cache(), "nats") }

// LockPath is the daemon lock file.
func (w *Workspace) LockPath() string { return filepath.Join(w.Cache(), "lock") }

// DaemonFilePath is where a running daemon says how to reach it.
func (w *Workspace) DaemonFilePath() string { return filepath.Join(w.Cache(), "daemon.json") }

// LogPath is the log of a daemon started in the background.
func (w *Workspace) LogPath() string { return filepath.Join(w.Cache(), "daemon.log") }

// Initialised reports whether .cuedeck exists.
func (w *Workspace) Initialised() bool {
	st, err := os.Stat(w.Path(MetaDir))
	return err == nil && st.IsDir()
}

// InitResult says what Init did.
type InitResult struct {
	Created   []string
	Kept      []string
	Gitignore string
}

// Init creates .cuedeck/{cards,docs} and config.toml and adds the cache
// directory and SCENE.md to .gitignore. An existing config.toml is kept
// unless force; files it rewrites keep their permissions.
func (w *Workspace) Init(force bool) (InitResult, error) {
	var res InitResult
	for _, d := range []string{MetaDir, MetaDir + "/cards", MetaDir + "/docs"} {
		p := w.Path(d)
		if _, err := os.Stat(p); err == nil {
			res.Kept = append(res.Kept, d+"/")
			continue
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return res, fmt.Errorf("workspace: create %s: %w", d, err)
		}
		res.Created = append(res.Created, d+"/")
	}
	cfgPath := w.Path(ConfigFile)
	if _, err := os.Stat(cfgPath); err == nil && !force {
		res.Kept = append(res.Kept, ConfigFile+" (use --force to overwrite)")
	} else {
		// A new config is private: it may come to hold a query token.
		if err := writeFileAtomic(cfgPath, []byte(DefaultConfigTOML(filepath.Base(w.Root))), 0o600); err != nil {
			return res, err
		}
		res.Created = append(res.Created, ConfigFile)
	}
	added, err := ensureLines(w.Path(".gitignore"), Ignored)
	if err != nil {
		return res, err
	}
	switch {
	case len(added) == 0:
		res.Gitignore = "already ignores " + strings.Join(Ignored, ", ")
	default:
		res.Gitignore = "added " + strings.Join(added, ", ")
	}
	return res, nil
}

// ensureLines appends to the file each line no equivalent line is there
// for, and returns those it added.
func ensureLines(path string, lines []string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("workspace: read %s: %w", path, err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.Trim(strings.TrimSpace(l), "/")] = true
	}
	var added []string
	for _, l := range lines {
		if !have[strings.Trim(l, "/")] {
			added = append(added, l)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	out := string(data)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	out += "# CueDeck: the cache (rebuildable) and the rendered scene\n" + strings.Join(added, "\n") + "\n"
	return added, writeFileAtomic(path, []byte(out), 0o644)
}

// writeFileAtomic writes through a temp file and rename, so a crash leaves
// the old file or the new one, never half of one. A file that exists keeps
// its permission bits; a new one gets perm.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	// The temporary file is created 0600 whatever the umask.
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("workspace: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("workspace: sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	return nil
}
