package domain

import (
	"math"
	"time"
)

// Bucket is a token bucket's rule: capacity tokens, refilled evenly over per (a limit of
// capacity a per, in bursts of up to capacity). The counts themselves live in memory, or in
// the database for several instances; the rule is the same for both.
type Bucket struct {
	Capacity int
	Per      time.Duration
}

func (b Bucket) rate() float64 { return float64(b.Capacity) / b.Per.Seconds() }

// Refill is how many tokens a bucket that held n at last holds at now. A clock set back
// refills nothing (and takes nothing back).
func (b Bucket) Refill(n float64, last, now time.Time) float64 {
	if elapsed := now.Sub(last); elapsed > 0 {
		return math.Min(float64(b.Capacity), n+elapsed.Seconds()*b.rate())
	}
	return n
}

// Take spends a token of a bucket holding n: what is left and true, or, when there is none,
// n and how long until there is one.
func (b Bucket) Take(n float64) (left float64, ok bool, wait time.Duration) {
	if n >= 1 {
		return n - 1, true, 0
	}
	return n, false, time.Duration((1 - n) / b.rate() * float64(time.Second))
}

// FullAt is when a bucket holding n at now is full again: after that its count can be
// forgotten.
func (b Bucket) FullAt(n float64, now time.Time) time.Time {
	return now.Add(time.Duration((float64(b.Capacity) - n) / b.rate() * float64(time.Second)))
}
