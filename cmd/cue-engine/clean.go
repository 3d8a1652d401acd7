package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/cuedeck/cuedeck/internal/workspace"
)

func cmdClean(args []string) error {
	fs, c := newFlags("clean")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	return cleanCache(ws, os.Stdout)
}

// cleanCache removes the workspace's cache directory and says what it
// removed. It takes the daemon lock first and holds it while removing, so
// a daemon can neither be running nor start meanwhile; a daemon holding it
// is a *workspace.LockError naming its pid.
func cleanCache(ws *workspace.Workspace, w io.Writer) error {
	cache := ws.Cache()
	if _, err := os.Stat(cache); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(w, "nothing to clean: %s does not exist\n", workspace.CacheDir)
		return nil
	}
	lock, err := ws.AcquireLock()
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(cache)
	if err != nil {
		lock.Release()
		return err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	var total int64
	for _, e := range ents {
		p := filepath.Join(cache, e.Name())
		if p == ws.LockPath() {
			continue // ours until released below
		}
		size := du(p)
		if err := os.RemoveAll(p); err != nil {
			lock.Release()
			return fmt.Errorf("clean: %w", err)
		}
		total += size
		fmt.Fprintf(w, "removed %-40s %s\n", filepath.ToSlash(filepath.Join(workspace.CacheDir, e.Name())), humanBytes(size))
	}
	if err := lock.Release(); err != nil {
		return err
	}
	if err := os.RemoveAll(cache); err != nil {
		return fmt.Errorf("clean: %w", err)
	}
	fmt.Fprintf(w, "removed %s (%s in all)\n", workspace.CacheDir, humanBytes(total))
	return nil
}

// du is the apparent size of the files under p.
func du(p string) int64 {
	var n int64
	_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
