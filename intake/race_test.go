//go:build race

package intake

// raceEnabled relaxes timing checks, which the race detector slows tenfold.
const raceEnabled = true
