package web

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/parley-chat/parley/domain"
)

// ledgerCollector reads at each scrape what the database knows anyway: conversations by
// the state of their run and the questions waiting, as they stand; and the questions
// resolved since the last scrape, which move the resolution counters and the histogram of
// how long answers took. Nothing is counted in the write path, and a scrape reads only
// what is new.
type ledgerCollector struct {
	db LedgerStats

	mu       sync.Mutex // one scrape at a time reads the new resolutions
	after    int64      // the newest event read: resolutions are counted after it
	started  bool
	resolved map[domain.Outcome]uint64
	waits    *histogram
}

// outcomes are the resolutions counted, in the order of their names.
var outcomes = []domain.Outcome{domain.Answered, domain.Cancelled, domain.Declined, domain.Expired, domain.Superseded}

func newLedgerCollector(db LedgerStats) *ledgerCollector {
	return &ledgerCollector{db: db, resolved: map[domain.Outcome]uint64{},
		waits: newHistogram([]float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400, 259200, 604800})}
}

// start counts the questions resolved from now on.
func (l *ledgerCollector) start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	after, err := l.db.NewestEventID(ctx)
	if err != nil {
		return err
	}
	l.after, l.started = after, true
	return nil
}

// write writes the ledger's metrics. A read that fails leaves its metrics out and is
// returned; the others are written, and the resolutions not read yet are counted at the
// next scrape.
func (l *ledgerCollector) write(ctx context.Context, e *expo) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var errs []error
	resolved, err := l.readResolved(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("read resolved questions: %w", err))
	} else {
		e.histogram("parley_question_answer_wait_seconds", "How long answered questions waited, from asked to answered.", l.waits)
	}
	if n, _, err := l.db.Waiting(ctx, 0); err != nil {
		errs = append(errs, fmt.Errorf("read pending questions: %w", err))
	} else {
		e.one("parley_questions_pending", "gauge", "Questions waiting for an answer.", float64(n))
	}
	if resolved != nil {
		e.family("parley_questions_resolved_total", "counter", "Questions resolved, by outcome: answered, declined, cancelled (by a person), expired, superseded.")
		for _, o := range outcomes {
			e.sample("parley_questions_resolved_total", float64(resolved[o]), "outcome", string(o))
		}
	}
	if counts, err := l.db.RunStateCounts(ctx); err != nil {
		errs = append(errs, fmt.Errorf("read run states: %w", err))
	} else {
		e.family("parley_runs", "gauge", "Conversations by the state of their current run.")
		for _, st := range slices.Sorted(slices.Values(domain.RunStates)) {
			e.sample("parley_runs", float64(counts[st]), "state", string(st))
		}
	}
	return errors.Join(errs...)
}

// readResolved counts the questions resolved since the last read, and returns the counts
// so far.
func (l *ledgerCollector) readResolved(ctx context.Context) (map[domain.Outcome]uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started { // before the server has started nothing is counted yet
		facts, after, err := l.db.ResolvedSince(ctx, l.after)
		if err != nil {
			return nil, err
		}
		for _, f := range facts {
			l.resolved[f.Outcome]++
			if f.Outcome == domain.Answered {
				l.waits.Observe(f.ResolvedAt.Sub(f.AskedAt).Seconds())
			}
		}
		l.after = after
	}
	return maps.Clone(l.resolved), nil
}
