package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cuedeck/cuedeck/internal/scenes"
	"github.com/cuedeck/cuedeck/internal/workspace"
)

// watchDebounce is seed 002's debounce for `cue watch`.
const watchDebounce = 500 * time.Millisecond

func cmdWatch(args []string) error {
	fs, c := newFlags("watch")
	limit := fs.Int("token-limit", 0, "token budget (default: [scene] token_limit in config.toml, else 32000)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return fmt.Errorf("watch takes at most one CARD_ID, got %d", len(pos))
	}
	ws, err := c.findWorkspace()
	if err != nil {
		return err
	}
	opts := scenes.Options{Budget: sceneBudget(ws, *limit, os.Stderr)}
	if len(pos) == 1 {
		opts.CardID = pos[0]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	addTree(w, ws, ws.Root, os.Stderr)
	render := func() {
		if err := renderScene(ws, opts, false, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "cue:", err)
		}
	}
	render()
	fmt.Fprintf(os.Stderr, "watching %s; Ctrl-C to stop\n", ws.Root)
	return watchLoop(ctx, w.Events, w.Errors, watchDebounce,
		func(ev fsnotify.Event) bool { return relevant(ws, ev) },
		func(dir string) { addTree(w, ws, dir, os.Stderr) },
		render, os.Stderr)
}

// watchLoop renders once events have stopped arriving for debounce: a burst
// of saves costs one scene. New directories are handed to onDir so that
// their files are watched too. It returns when ctx is done or the watcher
// closes.
func watchLoop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error, debounce time.Duration,
	relevant func(fsnotify.Event) bool, onDir func(string), render func(), stderr io.Writer) error {
	timer := time.NewTimer(debounce)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			if !relevant(ev) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
					onDir(ev.Name)
				}
			}
			timer.Reset(debounce)
		case err, ok := <-errs:
			if !ok {
				return nil
			}
			fmt.Fprintln(stderr, "cue: watch:", err)
		case <-timer.C:
			render()
		}
	}
}

// relevant drops events that cannot change the scene, among them the
// scene's own writes, which would otherwise re-render forever.
func relevant(ws *workspace.Workspace, ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	rel, err := filepath.Rel(ws.Root, ev.Name)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	if rel == scenes.SceneFile || strings.HasPrefix(filepath.Base(rel), ".scene-") {
		return false
	}
	return !ignoredDir(rel)
}

// ignoredDir reports whether rel lies in a directory the watcher skips:
// hidden ones but .cuedeck, the cache and vendored trees.
func ignoredDir(rel string) bool {
	if rel == workspace.CacheDir || strings.HasPrefix(rel, workspace.CacheDir+"/") {
		return true
	}
	for _, seg := range strings.Split(rel, "/") {
		if (strings.HasPrefix(seg, ".") && seg != workspace.MetaDir && seg != ".") || seg == "node_modules" || seg == "vendor" {
			return true
		}
	}
	return false
}

// addTree watches dir and every directory under it that is not ignored.
func addTree(w *fsnotify.Watcher, ws *workspace.Workspace, dir string, stderr io.Writer) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if rel, err := filepath.Rel(ws.Root, p); err == nil && rel != "." && ignoredDir(filepath.ToSlash(rel)) {
			return filepath.SkipDir
		}
		if err := w.Add(p); err != nil {
			fmt.Fprintf(stderr, "cue: watch %s: %v\n", p, err)
		}
		return nil
	})
}
