// Package humanize writes counts, shares and durations for people: the
// progress notices of read_context (internal/edge), `cue status` and
// `cue doctor`.
package humanize

import (
	"fmt"
	"strconv"
	"time"
)

// Thousands writes n with a comma between groups of three digits:
// 3979 is "3,979".
func Thousands[T ~int | ~int64 | ~uint64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	if _, isUnsigned := any(n).(uint64); isUnsigned {
		s = strconv.FormatUint(uint64(n), 10)
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Percent writes n of total as "15 %", rounded down, but never "0 %" for
// some nor "100 %" for not all: "<1 %" and "99 %" instead.
func Percent(n, total int) string {
	switch {
	case total <= 0 || n <= 0:
		return "0 %"
	case n >= total:
		return "100 %"
	}
	pc := n * 100 / total
	switch {
	case pc == 0:
		return "<1 %"
	case pc == 100:
		pc = 99
	}
	return strconv.Itoa(pc) + " %"
}

// Duration writes d to two units, rounded up so an estimate is never
// optimistic: "45s", "1m05s", "3h07m", "2d04h".
func Duration(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m" + pad2(s%60) + "s"
	case s < 86400:
		m := (s + 59) / 60
		return strconv.FormatInt(m/60, 10) + "h" + pad2(m%60) + "m"
	}
	h := (s + 3599) / 3600
	return strconv.FormatInt(h/24, 10) + "d" + pad2(h%24) + "h"
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// Bytes is n in B, KiB, MiB or GiB, to one decimal above 10 only when it
// matters: "0 B", "396 KiB", "64 MiB", "1.5 GiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	if v < 10 && v != float64(int64(v)) {
		return fmt.Sprintf("%.1f %s", v, suffix)
	}
	return fmt.Sprintf("%d %s", int64(v), suffix)
}
