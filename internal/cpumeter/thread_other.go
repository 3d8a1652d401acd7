//go:build !linux

package cpumeter

import "time"

// Supported is whether this platform has a per-thread CPU clock.
const Supported = false

func threadTime() (time.Duration, bool) { return 0, false }
