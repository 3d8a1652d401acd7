package humanize

import (
	"testing"
	"time"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 3979: "3,979", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Thousands(uint64(18446744073709551615)); got != "18,446,744,073,709,551,615" {
		t.Errorf("max uint64: %q", got)
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		n, total int
		want     string
	}{{0, 10, "0 %"}, {1, 1000, "<1 %"}, {999, 1000, "99 %"}, {1000, 1000, "100 %"}, {5, 0, "0 %"}, {15, 100, "15 %"}, {1201, 3530, "34 %"}} {
		if got := Percent(c.n, c.total); got != c.want {
			t.Errorf("Percent(%d, %d) = %q, want %q", c.n, c.total, got, c.want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                 "0s",
		300 * time.Millisecond:            "1s",
		45 * time.Second:                  "45s",
		65 * time.Second:                  "1m05s",
		time.Hour - time.Second:           "59m59s",
		3*time.Hour + 6*time.Minute + 1:   "3h07m",
		52*time.Hour + 30*time.Minute + 1: "2d05h",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 396 << 10: "396 KiB", 64 << 20: "64 MiB", 3 << 29: "1.5 GiB", 5 << 40: "5 TiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
