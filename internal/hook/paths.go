package hook

import (
	"encoding/hex"
	"hash/fnv"
	"os"
	"path/filepath"
)

// These mirror internal/workspace (MetaDir, CacheDir, LogPath, LockPath).
// That package parses config.toml and so links the TOML decoder, the
// embedding providers and more; the hook binary must start in a
// millisecond, so the few paths it needs are repeated here.
// TestPathsMatchWorkspace in internal/hookserver keeps the two in step.
const (
	metaDir  = ".cuedeck"
	cacheDir = ".cuedeck/.cache"
)

// Find returns the workspace root for dir: the nearest ancestor (dir
// included) holding a .cuedeck directory. ok is false when there is none.
func Find(dir string) (root string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for d := abs; ; {
		if st, err := os.Stat(filepath.Join(d, metaDir)); err == nil && st.IsDir() {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// ProjectRoot is where a new workspace for dir would go, as `cue init`
// chooses it: the nearest ancestor holding .git, else dir itself.
func ProjectRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}

// CacheDir is the workspace's cache directory (.cuedeck/.cache).
func CacheDir(root string) string { return filepath.Join(root, filepath.FromSlash(cacheDir)) }

// CachePath is the file the daemon keeps the project context in for the
// hooks to inject.
func CachePath(root string) string { return filepath.Join(CacheDir(root), "hook-context.json") }

// SessionsDir holds one marker per session: the hash of the context that
// session last received.
func SessionsDir(root string) string { return filepath.Join(CacheDir(root), "hook-sessions") }

// LogPath is the log of a daemon started in the background.
func LogPath(root string) string { return filepath.Join(CacheDir(root), "daemon.log") }

// LockPath is the daemon's lock file.
func LockPath(root string) string { return filepath.Join(CacheDir(root), "lock") }

// maxSocketPath keeps a socket path inside sun_path (108 bytes on Linux,
// 104 on the BSDs and macOS), with room for the terminating NUL.
const maxSocketPath = 100

// SocketPath is the daemon's hook socket for the workspace at root: in the
// cache directory when the path fits in a sockaddr_un, else in the
// temporary directory under a name derived from root. The hook and the
// daemon both call it, so they always agree.
func SocketPath(root string) string {
	p := filepath.Join(CacheDir(root), "hook.sock")
	if len(p) <= maxSocketPath {
		return p
	}
	return filepath.Join(os.TempDir(), "cuedeck-"+shortHash(root)+".sock")
}

// shortHash is a stable 64-bit FNV-1a hash of s in hex. FNV rather than
// SHA-256: the names need no collision resistance against an adversary,
// and the crypto packages' initialisation costs the hook binary time.
func shortHash(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil))
}

// ProjectHash identifies the workspace at root in the cache file.
func ProjectHash(root string) string { return shortHash(root)[:8] }
