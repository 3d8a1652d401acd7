package localdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// ErrDamaged is wrapped by CheckTables' errors.
var ErrDamaged = errors.New("store is damaged")

// CheckTables reads every table (*.sst) of the Badger store in dir as
// opts would and verifies each block's checksum, before Badger opens it:
// Badger reads tables on goroutines of its own, where a truncated or
// garbled table panics the process, and without verification serves
// garbage. A table that fails, or panics while being read, is an error
// wrapping ErrDamaged. A missing dir has no tables.
func CheckTables(dir string, opts badger.Options) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := checkTable(p, opts); err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
	}
	return nil
}

func checkTable(path string, opts badger.Options) (err error) {
	mf, ferr := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if ferr != nil && !errors.Is(ferr, z.NewFile) {
		return fmt.Errorf("table %s: %v", filepath.Base(path), ferr)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("table %s: reading it panicked: %v", filepath.Base(path), p)
		}
		_ = mf.Close(-1)
	}()
	// OpenTable verifies every block's checksum in this mode. Closing mf
	// again after a failure that closed it is harmless.
	t, err := table.OpenTable(mf, table.Options{
		ReadOnly: true, BlockSize: opts.BlockSize, BloomFalsePositive: opts.BloomFalsePositive,
		ChkMode: options.OnTableAndBlockRead, Compression: opts.Compression, ZSTDCompressionLevel: opts.ZSTDCompressionLevel,
	})
	if err != nil {
		return fmt.Errorf("table %s: %v", filepath.Base(path), err)
	}
	_ = t // closed with mf; DecrRef would delete the file
	return nil
}

// MoveAside moves the damaged store in dir into corrupt-<time>/ beside it
// (for a workspace, .cuedeck/.cache/corrupt-<time>/<store>), where it stays
// for a person to look at or delete, and returns that path, so a new store
// can be made in dir.
func MoveAside(dir string) (string, error) {
	parent := filepath.Join(filepath.Dir(dir), "corrupt-"+time.Now().UTC().Format("20060102T150405Z"))
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", err
	}
	aside := filepath.Join(parent, filepath.Base(dir))
	// The same store damaged twice within a second keeps both copies.
	for i := 2; ; i++ {
		if _, err := os.Lstat(aside); os.IsNotExist(err) {
			break
		}
		aside = filepath.Join(parent, fmt.Sprintf("%s.%d", filepath.Base(dir), i))
	}
	return aside, os.Rename(dir, aside)
}

// AsideOf lists where MoveAside put earlier copies of dir.
func AsideOf(dir string) []string {
	found, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "corrupt-*", filepath.Base(dir)+"*"))
	return found
}

// MappedFiles are the files of the Badger store in dir that Badger writes
// through memory maps while it runs: its memtables and its discard stats.
func MappedFiles(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	if _, err := os.Stat(filepath.Join(dir, "DISCARD")); err == nil {
		files = append(files, filepath.Join(dir, "DISCARD"))
	}
	return files
}
