//go:build race

package edge

// raceEnabled is set when the tests run under the race detector, which
// makes each step of a long single-goroutine property check several times
// slower and finds no race in it: such checks take fewer steps then, and
// the Makefile runs them at full size without the detector.
const raceEnabled = true
