//go:build unix

package bench

import "syscall"

func syncDisks() { syscall.Sync() }
