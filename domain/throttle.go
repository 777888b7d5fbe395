package domain

import (
	"sync/atomic"
	"time"
)

// Throttle runs a background attempt at most once an interval: a remote agent's description
// read again until it can be, without a request each time a page lists the agent.
type Throttle struct{ last atomic.Int64 }

// Mark records an attempt made now.
func (t *Throttle) Mark() { t.last.Store(time.Now().UnixNano()) }

// Go runs f in a goroutine, unless an attempt was made within interval.
func (t *Throttle) Go(interval time.Duration, f func()) {
	now := time.Now().UnixNano()
	last := t.last.Load()
	if now-last < int64(interval) || !t.last.CompareAndSwap(last, now) {
		return
	}
	go f()
}
