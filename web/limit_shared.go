package web

import (
	"context"
	"log/slog"
	"time"

	"github.com/parley-chat/parley/domain"
)

// limiter spends the tokens of per-key buckets (see bucket): counted in memory by one
// instance, or in the database for all the instances sharing it (sharedBucket).
type limiter interface {
	take(key string) (ok bool, wait time.Duration)
	refund(key string)
	reset(key string)
}

// SharedLimits keeps the limits' counts in the database, so that several instances behind
// one load balancer count together (store.DB on PostgreSQL; Shared is false on SQLite).
type SharedLimits interface {
	Shared() bool
	TakeToken(ctx context.Context, key string, b domain.Bucket) (ok bool, wait time.Duration, err error)
	RefundToken(ctx context.Context, key string, b domain.Bucket) error
	ResetTokens(ctx context.Context, key string) error
	OpenStream(ctx context.Context, userID int64, max int) (id int64, ok bool, err error)
	CloseStream(ctx context.Context, id int64) error
}

// sharedBucket is a limit counted in the database. Should the database fail, the limit
// lets the request through: what it guards fails with the database anyway.
type sharedBucket struct {
	db   SharedLimits
	name string
	rule domain.Bucket
	log  *slog.Logger
}

func (b *sharedBucket) take(key string) (bool, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), limitTimeout)
	defer cancel()
	ok, wait, err := b.db.TakeToken(ctx, b.name+":"+key, b.rule)
	if err != nil {
		b.log.Error("limit", "limit", b.name, "error", err)
		return true, 0
	}
	return ok, wait
}

func (b *sharedBucket) refund(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), limitTimeout)
	defer cancel()
	if err := b.db.RefundToken(ctx, b.name+":"+key, b.rule); err != nil {
		b.log.Error("limit", "limit", b.name, "error", err)
	}
}

func (b *sharedBucket) reset(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), limitTimeout)
	defer cancel()
	if err := b.db.ResetTokens(ctx, b.name+":"+key); err != nil {
		b.log.Error("limit", "limit", b.name, "error", err)
	}
}

// limitTimeout bounds a limit's trip to the database: past it, the request goes on.
const limitTimeout = 5 * time.Second

// newLimiter is a limit of capacity a per: shared through db when it shares its counts.
func newLimiter(db any, name string, capacity int, per time.Duration, now func() time.Time, log *slog.Logger) limiter {
	if sl, ok := db.(SharedLimits); ok && sl.Shared() {
		return &sharedBucket{db: sl, name: name, rule: domain.Bucket{Capacity: capacity, Per: per}, log: log}
	}
	return newBucket(capacity, per, now)
}
