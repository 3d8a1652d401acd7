package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxCacheFile bounds what a hook reads of the cache file; the daemon
// writes a context of about 1,500 tokens, far below it.
const MaxCacheFile = 256 << 10

// CacheFile is the cached project context, in seed 004 §1's format.
type CacheFile struct {
	Timestamp       int64    `json:"timestamp"` // Unix seconds of the write
	ProjectHash     string   `json:"project_hash"`
	Context         string   `json:"context"`
	NodesIncluded   []string `json:"nodes_included"`
	ExperienceCount int      `json:"experience_count"`
}

// ErrNoCache means no context is cached yet; ReadCache also returns it,
// wrapped, for a file that is not a cache file.
var ErrNoCache = errors.New("no cached context")

// ReadCache reads the cache file of the workspace at root.
func ReadCache(root string) (CacheFile, error) {
	f, err := os.Open(CachePath(root))
	if errors.Is(err, os.ErrNotExist) {
		return CacheFile{}, ErrNoCache
	}
	if err != nil {
		return CacheFile{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxCacheFile+1))
	if err != nil {
		return CacheFile{}, err
	}
	if len(b) > MaxCacheFile {
		return CacheFile{}, fmt.Errorf("%w: %s is larger than %d bytes", ErrNoCache, CachePath(root), MaxCacheFile)
	}
	var c CacheFile
	if err := json.Unmarshal(b, &c); err != nil {
		return CacheFile{}, fmt.Errorf("%w: %s is corrupt (%v); the daemon rewrites it", ErrNoCache, CachePath(root), err)
	}
	return c, nil
}

// WriteCache replaces the cache file of the workspace at root atomically
// (a temporary file renamed over it), so a hook never reads half a file.
func WriteCache(root string, c CacheFile) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return writeFileAtomic(CachePath(root), b, 0o644)
}

// writeFileAtomic writes data to a temporary file in path's directory and
// renames it over path.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
