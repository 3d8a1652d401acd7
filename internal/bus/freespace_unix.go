//go:build unix

package bus

import (
	"fmt"
	"os"
	"syscall"
)

// FreeBytes is the space available to an unprivileged writer on the
// filesystem holding dir, which is created if missing.
func FreeBytes(dir string) (uint64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("bus: create %s: %w", dir, err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return 0, fmt.Errorf("bus: free space of %s: %w", dir, err)
	}
	return uint64(fs.Bavail) * uint64(fs.Bsize), nil
}
