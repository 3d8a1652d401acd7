package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockError is error 1007: another process holds the workspace lock.
type LockError struct {
	LockFile  string
	HolderPID int
}

func (e *LockError) Error() string {
	return fmt.Sprintf("Lock Error (1007): %s is held by pid %d; close the other CueDeck instance (`cue down`) or, if that process is not CueDeck, remove the stale lock", e.LockFile, e.HolderPID)
}

// Lock is a held workspace lock.
type Lock struct {
	f *os.File
}

// AcquireLock takes the workspace's daemon lock without waiting. The lock is
// an flock on the lock file, so the kernel releases it when its holder dies
// however it dies: a lock left by a dead process (a stale lock) is simply
// taken over. If a live process holds it, the error is a *LockError naming
// the lock file and the holder's pid.
func (w *Workspace) AcquireLock() (*Lock, error) {
	path := w.LockPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("workspace: open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockError{LockFile: relOrAbs(w.Root, path), HolderPID: readPID(f)}
		}
		return nil, fmt.Errorf("workspace: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &Lock{f: f}, nil
}

// LockHolder returns the pid holding the lock, or 0 when nobody holds it.
func (w *Workspace) LockHolder() int {
	f, err := os.Open(w.LockPath())
	if err != nil {
		return 0
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0
	}
	return readPID(f)
}

// Release unlocks. The file stays; its pid is cleared.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing drops the flock
	l.f = nil
	return err
}

// Intact reports whether path is still the file l locks. Deleting the
// cache, or replacing it (a restored backup), under a running daemon
// takes its lock file with it: another daemon could then lock a new one
// and both would run on the workspace.
func (l *Lock) Intact(path string) bool {
	if l == nil || l.f == nil {
		return false
	}
	held, err := l.f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	if err != nil {
		// Only a missing file says the cache went: a stat that fails
		// otherwise (an I/O error, a permission briefly changed) is not
		// evidence enough to stop a daemon.
		return !errors.Is(err, fs.ErrNotExist)
	}
	return os.SameFile(held, now)
}

func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	return pid
}

func relOrAbs(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}
