//go:build unix

package ingest

import "syscall"

const openNonBlock = syscall.O_NONBLOCK
