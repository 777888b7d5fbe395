package web

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Limits are the per-person caps that keep one person (or one script) from crowding out
// the rest: open streams, messages, sign-in attempts.
type Limits struct {
	// Streams is how many conversation streams (pages) one account may have open at once.
	Streams int
	// MessagesPerMinute is how many messages one account may send in a minute (a burst of
	// that many, refilled evenly).
	MessagesPerMinute int
	// LoginAttempts is how many failed sign-ins are allowed per name and per address in
	// LoginWindow.
	LoginAttempts int
	LoginWindow   time.Duration
	// ProviderSignIns is how many sign-ins through the identity provider one address may
	// begin (and come back with) in a minute: each is a write asked by nobody signed in.
	ProviderSignIns int
}

func (l Limits) withDefaults() Limits {
	if l.Streams <= 0 {
		l.Streams = 12
	}
	if l.MessagesPerMinute <= 0 {
		l.MessagesPerMinute = 20
	}
	if l.LoginAttempts <= 0 {
		l.LoginAttempts = 10
	}
	if l.LoginWindow <= 0 {
		l.LoginWindow = 15 * time.Minute
	}
	if l.ProviderSignIns <= 0 {
		l.ProviderSignIns = 30
	}
	return l
}

// bucket is a token bucket per key (see domain.Bucket), counted in memory.
type bucket struct {
	mu    sync.Mutex
	rule  domain.Bucket
	now   func() time.Time
	keys  map[string]*tokens
	calls int
}

type tokens struct {
	n    float64
	last time.Time
}

func newBucket(capacity int, per time.Duration, now func() time.Time) *bucket {
	return &bucket{rule: domain.Bucket{Capacity: capacity, Per: per}, now: now, keys: map[string]*tokens{}}
}

// refill brings key's tokens up to now; callers hold mu.
func (b *bucket) refill(key string) *tokens {
	now := b.now()
	t := b.keys[key]
	if t == nil {
		t = &tokens{n: float64(b.rule.Capacity), last: now}
		b.keys[key] = t
	}
	if n := b.rule.Refill(t.n, t.last, now); now.After(t.last) {
		t.n, t.last = n, now
	}
	if b.calls++; len(b.keys) > 10000 && b.calls%1000 == 0 {
		b.sweep(now)
	}
	return t
}

// sweep forgets full buckets, so that the map stays small; callers hold mu.
func (b *bucket) sweep(now time.Time) {
	for k, t := range b.keys {
		if !b.rule.FullAt(t.n, t.last).After(now) {
			delete(b.keys, k)
		}
	}
}

// take spends one of key's tokens. When there is none left it returns how long until
// there is.
func (b *bucket) take(key string) (ok bool, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.refill(key)
	t.n, ok, wait = b.rule.Take(t.n)
	return ok, wait
}

// refund gives key back the token its last take spent (an attempt that turned out fine).
func (b *bucket) refund(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if t, ok := b.keys[key]; ok {
		t.n = min(float64(b.rule.Capacity), t.n+1)
	}
}

// reset fills key's bucket again (a successful sign-in clears its failures).
func (b *bucket) reset(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.keys, key)
}

// tooMany is the 429 error of a limit, saying when to try again.
func tooMany(what string, wait time.Duration) error {
	secs := int(math.Ceil(wait.Seconds()))
	when := fmt.Sprintf("%d seconds", secs)
	switch {
	case secs <= 1:
		when = "a second"
	case secs >= 90:
		when = fmt.Sprintf("%d minutes", (secs+59)/60)
	}
	return &retryAfter{wait: time.Duration(secs) * time.Second, err: domain.Errorf(domain.ETOOMANY, "%s Try again in %s.", what, when)}
}

// retryAfter is a 429 error with the time a client should wait (the Retry-After header).
type retryAfter struct {
	wait time.Duration
	err  *domain.Error
}

func (r *retryAfter) Error() string { return r.err.Error() }
func (r *retryAfter) Unwrap() error { return r.err }

// streamCounter counts each account's open streams: in memory, or with shared in the
// database, for all the instances serving it.
type streamCounter struct {
	shared SharedLimits
	log    *slog.Logger
	mu     sync.Mutex
	open   map[int64]int
	// freed is closed, and replaced, whenever a stream closes; waiting counts the streams
	// that wait for it.
	freed   chan struct{}
	waiting int
}

// streamSwitch is how long a stream over its person's cap waits for one of theirs to close:
// a page that goes to another (a sent first message opens its conversation) closes its
// stream only as the next page opens one, and the server may learn of it just after.
const streamSwitch = 3 * time.Second

// acquire opens one of the user's streams, unless max are open already and none closes
// within streamSwitch (or before ctx ends); release closes it.
func (sc *streamCounter) acquire(ctx context.Context, userID int64, max int) (release func(), ok bool) {
	if sc.shared != nil {
		return sc.acquireShared(ctx, userID, max)
	}
	timer := time.NewTimer(streamSwitch)
	defer timer.Stop()
	ok = true
	sc.mu.Lock()
	for {
		if sc.open == nil {
			sc.open, sc.freed = map[int64]int{}, make(chan struct{})
		}
		if sc.open[userID] < max {
			break
		}
		freed := sc.freed
		sc.waiting++
		sc.mu.Unlock()
		select {
		case <-freed:
		case <-timer.C:
			ok = false
		case <-ctx.Done():
			ok = false
		}
		sc.mu.Lock()
		sc.waiting--
		if !ok {
			sc.mu.Unlock()
			return nil, false
		}
	}
	defer sc.mu.Unlock()
	sc.open[userID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			sc.mu.Lock()
			defer sc.mu.Unlock()
			if sc.open[userID]--; sc.open[userID] <= 0 {
				delete(sc.open, userID)
			}
			close(sc.freed)
			sc.freed = make(chan struct{})
		})
	}, true
}

// acquireShared is acquire counted in the database, for every instance: it asks again as a
// stream of this instance closes, and every sharedRetry for those of the others. Should the
// database fail, the stream goes on: it fails with the database anyway.
func (sc *streamCounter) acquireShared(ctx context.Context, userID int64, max int) (release func(), ok bool) {
	timer := time.NewTimer(streamSwitch)
	defer timer.Stop()
	tick := time.NewTicker(sharedRetry)
	defer tick.Stop()
	for {
		sc.mu.Lock()
		if sc.freed == nil {
			sc.freed = make(chan struct{})
		}
		freed := sc.freed
		sc.mu.Unlock()
		id, ok, err := sc.shared.OpenStream(ctx, userID, max)
		switch {
		case err != nil:
			sc.log.Error("count the open streams", "error", err)
			return func() {}, true
		case ok:
			var once sync.Once
			return func() {
				once.Do(func() {
					ctx, cancel := context.WithTimeout(context.Background(), limitTimeout)
					defer cancel()
					if err := sc.shared.CloseStream(ctx, id); err != nil {
						sc.log.Error("count the open streams", "error", err)
					}
					sc.mu.Lock()
					close(sc.freed)
					sc.freed = make(chan struct{})
					sc.mu.Unlock()
				})
			}, true
		}
		select {
		case <-freed:
		case <-tick.C:
		case <-timer.C:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
}

// sharedRetry is how often a stream over its person's cap asks again whether one of theirs
// closed on another instance.
const sharedRetry = 200 * time.Millisecond
