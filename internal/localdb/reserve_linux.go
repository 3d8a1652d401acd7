package localdb

import (
	"os"
	"syscall"
)

// Reserve gives every byte of file its disk blocks now. Badger maps its
// memtables (the write-ahead log) as sparse files and writes them through
// memory: on a full disk the first write to a page without a block kills
// the process with SIGBUS instead of returning an error. A reserved file
// takes its writes whatever the disk holds.
func Reserve(file string) error {
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	return syscall.Fallocate(int(f.Fd()), 0, 0, fi.Size())
}
