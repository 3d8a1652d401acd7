package tasks

// OnAtomicCommit sets a function the board calls with the task id of a
// batch's first event just before it commits the batch.
func OnAtomicCommit(b *Board, f func(firstTask string)) { b.beforeAtomicCommit = f }

// AtomicRounds is how many rounds the board stored as atomic batches.
func AtomicRounds(b *Board) int64 { return b.atomicRounds.Load() }

// Unready makes b unready as a suspicion that the log was replaced does
// (Sync), without stopping its follower.
func Unready(b *Board) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unreadyLocked()
}
