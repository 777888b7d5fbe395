package web

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-chat/parley/agent"
)

// ledgerCollector reads at each scrape what the database knows anyway: conversations by
// the state of their run and the questions waiting, as they stand; and the questions
// resolved since the last scrape, which move the resolution counters and the histogram of
// how long answers took. Nothing is counted in the write path, and a scrape reads only
// what is new.
type ledgerCollector struct {
	db      LedgerStats
	runs    *prometheus.Desc
	pending *prometheus.Desc

	mu       sync.Mutex // one scrape at a time reads the new resolutions
	after    int64      // the newest event read: resolutions are counted after it
	started  bool
	resolved *prometheus.CounterVec
	waits    prometheus.Histogram
}

func newLedgerCollector(db LedgerStats) *ledgerCollector {
	l := &ledgerCollector{db: db,
		runs: prometheus.NewDesc("parley_runs", "Conversations by the state of their current run.", []string{"state"}, nil),
		pending: prometheus.NewDesc("parley_questions_pending",
			"Questions waiting for an answer.", nil, nil),
		resolved: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_questions_resolved_total",
			Help: "Questions resolved, by outcome: answered, declined, cancelled (by a person), expired, superseded."}, []string{"outcome"}),
		waits: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "parley_question_answer_wait_seconds",
			Help:    "How long answered questions waited, from asked to answered.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400, 259200, 604800}}),
	}
	for _, o := range []agent.Outcome{agent.Answered, agent.Declined, agent.Cancelled, agent.Expired, agent.Superseded} {
		l.resolved.WithLabelValues(string(o))
	}
	return l
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

// Describe implements prometheus.Collector.
func (l *ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- l.runs
	ch <- l.pending
	l.resolved.Describe(ch)
	l.waits.Describe(ch)
}

// Collect implements prometheus.Collector. A read that fails is logged by the handler; the
// other metrics are served, and the resolutions not read yet are counted at the next scrape.
func (l *ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.readResolved(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(l.waits.Desc(), err)
	} else {
		l.resolved.Collect(ch)
		l.waits.Collect(ch)
	}
	if counts, err := l.db.RunStateCounts(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(l.runs, err)
	} else {
		for _, st := range agent.RunStates {
			ch <- prometheus.MustNewConstMetric(l.runs, prometheus.GaugeValue, float64(counts[st]), string(st))
		}
	}
	if n, _, err := l.db.Waiting(ctx, 0); err != nil {
		ch <- prometheus.NewInvalidMetric(l.pending, err)
	} else {
		ch <- prometheus.MustNewConstMetric(l.pending, prometheus.GaugeValue, float64(n))
	}
}

// readResolved counts the questions resolved since the last read.
func (l *ledgerCollector) readResolved(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started {
		return nil // the server has not started: nothing is counted yet
	}
	facts, after, err := l.db.ResolvedSince(ctx, l.after)
	if err != nil {
		return err
	}
	for _, f := range facts {
		l.resolved.WithLabelValues(string(f.Outcome)).Inc()
		if f.Outcome == agent.Answered {
			l.waits.Observe(f.ResolvedAt.Sub(f.AskedAt).Seconds())
		}
	}
	l.after = after
	return nil
}
