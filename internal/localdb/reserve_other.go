//go:build !linux

package localdb

// Reserve does nothing where the disk blocks of a file cannot be
// reserved; see the Linux version.
func Reserve(string) error { return nil }
