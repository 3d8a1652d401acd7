package cpumeter

import (
	"time"

	"golang.org/x/sys/unix"
)

// Supported is whether this platform has a per-thread CPU clock.
const Supported = true

// threadTime is the calling thread's CPU time (user and system).
func threadTime() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
