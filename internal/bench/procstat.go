package bench

import (
	"bufio"
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	_, apparent, allocated, err = diskParts(dir)
	return apparent, allocated, err
}

// DiskPart is what one part of a workspace cache holds on disk: a stream
// of the embedded server (KV_cue_vectors, CUE_INGEST), a role's state
// (state/edge, state/embed), or "other".
type DiskPart struct {
	Name           string `json:"name"`
	AllocatedBytes int64  `json:"allocated_bytes"`
}

// diskParts is diskUsage with the allocated bytes per part of the cache
// at dir, largest first: where a cache's size comes from, which the total
// alone does not say.
func diskParts(dir string) (parts []DiskPart, apparent, allocated int64, err error) {
	by := map[string]int64{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
		rel, _ := filepath.Rel(dir, p)
		by[cachePart(filepath.ToSlash(rel))] += allocatedBytes(fi)
		return nil
	})
	for name, n := range by {
		parts = append(parts, DiskPart{Name: name, AllocatedBytes: n})
	}
	slices.SortFunc(parts, func(a, b DiskPart) int {
		return cmp.Or(cmp.Compare(b.AllocatedBytes, a.AllocatedBytes), strings.Compare(a.Name, b.Name))
	})
	return parts, apparent, allocated, err
}

// cachePart names the part of the cache a file under it belongs to, from
// its path from the cache: nats/jetstream/<account>/streams/<stream>/…
// is the stream, state/<role>/… the role's state.
func cachePart(rel string) string {
	ps := strings.Split(rel, "/")
	switch {
	case len(ps) > 5 && ps[0] == "nats" && ps[1] == "jetstream" && ps[3] == "streams":
		return ps[4]
	case len(ps) > 2 && ps[0] == "state":
		return "state/" + ps[1]
	}
	return "other"
}
