package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestParseAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"3", 3 * time.Second}, {"-1", 0}, {"soon", 0},
		{"Thu, 01 Jan 2026 00:01:30 GMT", 90 * time.Second},
		{"Wed, 31 Dec 2025 23:59:00 GMT", 0},
		{"99999999999999999999", 0},
		{"9223372036", 9223372036 * time.Second},
	} {
		if got := ParseAfter(tc.in, now); got != tc.want {
			t.Errorf("ParseAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context: %v", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep: %v", err)
	}
}
