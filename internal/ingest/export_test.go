package ingest

import (
	"time"

	"github.com/fsnotify/fsnotify"
)

// BreakWatching makes every repo's file watcher fail to start, as when the
// inotify instance limit is reached, until restore is called.
func BreakWatching(err error) (restore func()) {
	prev := newWatcher
	newWatcher = func() (*fsnotify.Watcher, error) { return nil, err }
	return func() { newWatcher = prev }
}

// CheckTaskLogEvery makes services created after it compare the task log
// with the one card write-back follows every d, until restore is called.
func CheckTaskLogEvery(d time.Duration) (restore func()) {
	prev := taskLogCheck
	taskLogCheck = d
	return func() { taskLogCheck = prev }
}
