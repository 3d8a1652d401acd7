package bus

import (
	"os"

	"golang.org/x/sys/unix"
)

const canSyncFS = true

var errNoSyncFS error

// syncFS writes out every dirty page of the file system holding f.
func syncFS(f *os.File) error { return unix.Syncfs(int(f.Fd())) }
