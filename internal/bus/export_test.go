package bus

import "os"

// NewGroupSyncWith is a GroupSync whose syncs call sync instead of
// syncing a file system.
func NewGroupSyncWith(sync func() error) *GroupSync {
	return &GroupSync{sync: func(*os.File) error { return sync() }, sooner: make(chan struct{}, 1)}
}
