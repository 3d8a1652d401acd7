package bench

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// peakRSS is a process's peak resident set size in bytes: VmHWM in
// /proc/PID/status, the kernel's high-water mark, so no peak between two
// readings is missed. ok is false where /proc does not say (not Linux, or
// the process is gone).
func peakRSS(pid int) (bytes int64, ok bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !found {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// diskUsage sums the regular files under dir: their apparent size, and
// the bytes the file system allocated for them where it says (sparse
// and preallocated files differ), else the apparent size again.
func diskUsage(dir string) (apparent, allocated int64, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		apparent += fi.Size()
		allocated += allocatedBytes(fi)
		return nil
	})
	return apparent, allocated, err
}
