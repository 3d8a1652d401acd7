package ingest

import "github.com/fsnotify/fsnotify"

// BreakWatching makes every repo's file watcher fail to start, as when the
// inotify instance limit is reached, until restore is called.
func BreakWatching(err error) (restore func()) {
	prev := newWatcher
	newWatcher = func() (*fsnotify.Watcher, error) { return nil, err }
	return func() { newWatcher = prev }
}
