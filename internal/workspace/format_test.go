package workspace_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuedeck/cuedeck/internal/version"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

func put(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree lists every file under dir with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func marker(t *testing.T, ws *workspace.Workspace) string {
	t.Helper()
	b, err := os.ReadFile(ws.FormatPath())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPrepareCacheMarksANewCache(t *testing.T) {
	ws := &workspace.Workspace{Root: t.TempDir()}
	lock, err := ws.AcquireLock() // creates the cache, as the daemon does
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	moved, err := ws.PrepareCache(time.Now())
	if err != nil || moved != "" {
		t.Fatalf("PrepareCache on a new cache = %q, %v; want nothing moved", moved, err)
	}
	if got, want := marker(t, ws), strconv.Itoa(version.DataFormat)+"\n"; got != want {
		t.Fatalf("marker %q, want %q", got, want)
	}
	put(t, filepath.Join(ws.StateDir("edge"), "db"), "state")
	before := tree(t, ws.Cache())
	if moved, err := ws.PrepareCache(time.Now()); err != nil || moved != "" {
		t.Fatalf("second PrepareCache = %q, %v; want nothing moved", moved, err)
	}
	if after := tree(t, ws.Cache()); len(after) != len(before) {
		t.Fatalf("second PrepareCache changed the cache:\n%v\n%v", before, after)
	}
}

func TestPrepareCacheMovesAnOlderFormatAside(t *testing.T) {
	for _, tc := range []struct{ name, marker string }{{"no marker", ""}, {"format 0", "0\n"}} {
		t.Run(tc.name, func(t *testing.T) {
			ws := &workspace.Workspace{Root: t.TempDir()}
			put(t, filepath.Join(ws.StateDir("edge"), "000001.vlog"), "edge state")
			put(t, filepath.Join(ws.StateDir("ingest"), "MANIFEST"), "ingest state")
			put(t, filepath.Join(ws.NATSStoreDir(), "jetstream", "stream.dat"), "the streams")
			put(t, ws.LogPath(), "earlier log\n")
			if tc.marker != "" {
				put(t, ws.FormatPath(), tc.marker)
			}
			if f, err := ws.CacheFormat(); err != nil || f != 0 {
				t.Fatalf("CacheFormat = %d, %v; want 0", f, err)
			}
			lock, err := ws.AcquireLock()
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Release()
			now := time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC)
			moved, err := ws.PrepareCache(now)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(ws.Cache(), "format0-20261125T093000Z"); moved != want {
				t.Fatalf("moved to %q, want %q", moved, want)
			}
			// The derived state moved aside, whole; nothing was deleted.
			if b, err := os.ReadFile(filepath.Join(moved, "state", "edge", "000001.vlog")); err != nil || string(b) != "edge state" {
				t.Fatalf("moved edge state: %q, %v", b, err)
			}
			if _, err := os.Stat(ws.StateDir("edge")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("edge state still in place (%v): the roles would read the old format", err)
			}
			// The streams, the log and the lock stayed.
			for p, want := range map[string]string{filepath.Join(ws.NATSStoreDir(), "jetstream", "stream.dat"): "the streams", ws.LogPath(): "earlier log\n"} {
				if b, err := os.ReadFile(p); err != nil || string(b) != want {
					t.Errorf("%s: %q, %v; want it kept", p, b, err)
				}
			}
			if _, err := os.Stat(ws.LockPath()); err != nil {
				t.Errorf("lock moved: %v", err)
			}
			if got, want := marker(t, ws), strconv.Itoa(version.DataFormat)+"\n"; got != want {
				t.Fatalf("marker %q, want %q", got, want)
			}
			if f, err := ws.CacheFormat(); err != nil || f != version.DataFormat {
				t.Fatalf("CacheFormat after = %d, %v", f, err)
			}
		})
	}
}

func TestNewerCacheFormatIsRefusedUntouched(t *testing.T) {
	ws := &workspace.Workspace{Root: t.TempDir()}
	newer := strconv.Itoa(version.DataFormat + 1)
	put(t, ws.FormatPath(), newer+"\n")
	put(t, filepath.Join(ws.StateDir("edge"), "db"), "newer state")
	before := tree(t, ws.Cache())
	for name, call := range map[string]func() error{
		"CheckCacheFormat": ws.CheckCacheFormat,
		"PrepareCache":     func() error { _, err := ws.PrepareCache(time.Now()); return err },
	} {
		err := call()
		var nf *workspace.NewerFormatError
		if !errors.As(err, &nf) || nf.Format != version.DataFormat+1 {
			t.Fatalf("%s: %v, want a NewerFormatError", name, err)
		}
		for _, part := range []string{"written by a newer CueDeck (data format " + newer, "cue upgrade", "newer binary"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%s: error %q does not say %q", name, err, part)
			}
		}
	}
	after := tree(t, ws.Cache())
	if len(after) != len(before) {
		t.Fatalf("refusal changed the cache:\n%v\n%v", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("refusal changed %s", k)
		}
	}
}

func TestGarbledMarkerSaysWhatToDo(t *testing.T) {
	ws := &workspace.Workspace{Root: t.TempDir()}
	put(t, ws.FormatPath(), "one\n")
	err := ws.CheckCacheFormat()
	if err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Fatalf("garbled marker: %v", err)
	}
}
