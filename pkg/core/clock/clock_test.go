package clock

import (
	"testing"
	"time"
)

func TestDeterministicClock(t *testing.T) {
	c := NewDeterministicMillis(time.Date(2025, 1, 1, 23, 59, 59, 0, time.UTC).UnixMilli())
	c.Advance(time.Second)
	if got := c.Now(); !got.Equal(time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("after advance: %v", got)
	}
	c.Reset(time.Unix(0, 0))
	if c.Now().Unix() != 0 {
		t.Fatal("reset")
	}
}

func TestLCGMatchesSeed003(t *testing.T) {
	r := NewDeterministicRNG(12345)
	// seed = (12345*1103515245 + 12345) & 0x7fffffff, computed by hand.
	want := float64((int64(12345)*1103515245+12345)&0x7fffffff) / 0x7fffffff
	if got := r.NextFloat(); got != want {
		t.Fatalf("first value %v, want %v", got, want)
	}
	a, b := NewDeterministicRNG(7), NewDeterministicRNG(7)
	for i := range 1000 {
		x, y := a.NextFloat(), b.NextFloat()
		if x != y || x < 0 || x >= 1 {
			t.Fatalf("step %d: %v %v", i, x, y)
		}
	}
	r.Reset(12345)
	if got := r.NextFloat(); got != want {
		t.Fatal("Reset must restart the sequence")
	}
}

func TestSequence(t *testing.T) {
	r := NewDeterministicRNG(1)
	r.SetSequence([]float64{0.1, 0.5})
	for i, want := range []float64{0.1, 0.5, 0.1} {
		if got := r.NextFloat(); got != want {
			t.Fatalf("value %d = %v", i, got)
		}
	}
	r.SetSequence(nil)
	if r.NextFloat() == 0.5 {
		t.Fatal("nil sequence must return to the LCG")
	}
}
