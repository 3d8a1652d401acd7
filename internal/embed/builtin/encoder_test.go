package builtin

import (
	"math"
	"testing"
)

func TestExpNonPositive(t *testing.T) {
	for x := float32(0); x > -90; x -= 0.0137 {
		got := float64(expNonPositive(x))
		want := math.Exp(float64(x))
		if x < -80 {
			want = 0
		}
		if math.Abs(got-want) > 4e-7*want {
			t.Fatalf("exp(%g) = %g, want %g", x, got, want)
		}
	}
}
