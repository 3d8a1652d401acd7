//go:build !linux

package bus

import (
	"errors"
	"os"
)

// Elsewhere the server syncs each write itself (sync_always).
const canSyncFS = false

var errNoSyncFS = errors.New("bus: this system cannot sync a file system as a whole")

func syncFS(*os.File) error { return errNoSyncFS }
