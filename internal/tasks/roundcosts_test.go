package tasks

import (
	"testing"
	"time"
)

// A round that may go either way goes the way that cost less per event
// lately, tries each once before it knows, and tries the dearer one again
// every probeEvery rounds, so that a disk that changes is followed.
func TestRoundsGoTheWayThatCostsLess(t *testing.T) {
	var c roundCosts
	if !c.batchNext() {
		t.Fatal("the first round did not try a batch")
	}
	c.observe(true, 32, 32*400*time.Microsecond)
	if c.batchNext() {
		t.Fatal("the round after a batch did not try a chain")
	}
	c.observe(false, 32, 32*150*time.Microsecond)
	ways := func(rounds int) (batches int) {
		for range rounds {
			if c.batchNext() {
				batches++
			}
		}
		return batches
	}
	if got := ways(4 * probeEvery); got != 4 {
		t.Fatalf("chains cheaper: %d of %d rounds went as batches, want the %d probes", got, 4*probeEvery, 4)
	}
	// The disk changes, and chains cost more than batches now.
	for range 8 {
		c.observe(false, 32, 32*900*time.Microsecond)
	}
	if got := ways(4 * probeEvery); got != 4*probeEvery-4 {
		t.Fatalf("batches cheaper: %d of %d rounds went as batches, want all but the %d probes", got, 4*probeEvery, 4)
	}
}
