//go:build unix

package ingest_test

import "syscall"

func mkfifo(path string) (bool, error) { return true, syscall.Mkfifo(path, 0o644) }
