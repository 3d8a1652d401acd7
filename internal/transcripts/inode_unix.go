//go:build unix

package transcripts

import (
	"io/fs"
	"os"
	"syscall"
)

// fileID is the device and inode of fi, to tell a file replaced under the
// same name from one that grew.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino) //nolint:unconvert // Dev is int32 on some platforms
	}
	return 0, 0
}

// openNoFollow opens path for reading, refusing a symlink put in its place
// after the path was checked.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
