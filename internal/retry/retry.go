// Package retry holds what the project's HTTP clients of Ollama share when
// they wait between attempts: reading a server's Retry-After, and a sleep
// that ends with its context.
package retry

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"
)

// ParseAfter reads a Retry-After of seconds or an HTTP date; zero if
// absent or unreadable.
func ParseAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, math.MaxInt64/int64(time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// Sleep waits d, returning early with ctx's error if ctx ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
