package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/runner"
)

// MetricsOptions says whether GET /metrics is served, and to whom. With neither field set
// (the default) there is no such route.
type MetricsOptions struct {
	// Token serves the metrics to requests that carry it as "Authorization: Bearer …".
	Token string
	// Open serves them to anyone who can reach the server (a scraper on a private network).
	Open bool
}

func (o MetricsOptions) enabled() bool { return o.Token != "" || o.Open }

// metrics are what Parley tells an operator at GET /metrics, in Prometheus's text format:
// kept by the server (not the process), so that servers side by side (tests) count apart.
// They are kept whether or not /metrics is served: each costs an atomic add where it is
// counted.
type metrics struct {
	log *slog.Logger
	hub *runner.Hub
	// pageStreams and apiStreams are the SSE streams open now, a browser's and programs'.
	pageStreams, apiStreams gauge
	// signin* count failed sign-ins: a wrong name or password, one refused by the rate
	// limit, an API request with a token that is not (or no longer) valid.
	signinPassword, signinLimited, signinToken, signinRefused counter
	writeSeconds                                              *histogram
	writeErrors                                               counter
	ledger                                                    *ledgerCollector
}

// newMetrics makes Parley's metrics and starts timing db's write transactions; stats are
// read at each scrape.
func newMetrics(db Health, stats LedgerStats, hub *runner.Hub, log *slog.Logger) *metrics {
	m := &metrics{log: log, hub: hub, ledger: newLedgerCollector(stats),
		writeSeconds: newHistogram([]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10})}
	db.ObserveWrites(m.observeWrite)
	return m
}

// write writes every metric, the Go runtime's and the process's among them, families in
// the order of their names. What cannot be read is logged and left out; the rest is written.
func (m *metrics) write(ctx context.Context, e *expo) {
	writeGoMetrics(e)
	e.family("parley_open_streams", "gauge", "SSE streams open now, by kind: page (a browser's pages) or api (programs).")
	e.sample("parley_open_streams", m.apiStreams.value(), "kind", "api")
	e.sample("parley_open_streams", m.pageStreams.value(), "kind", "page")
	if err := m.ledger.write(ctx, e); err != nil {
		m.log.Error("metrics", "error", err)
	}
	e.family("parley_signin_failures_total", "counter", "Failed sign-ins, by reason: password (wrong name or password), limited (refused by the rate limit), provider (a sign-in through the identity provider refused or failed), token (an API request with a token that is not valid).")
	e.sample("parley_signin_failures_total", m.signinLimited.value(), "reason", "limited")
	e.sample("parley_signin_failures_total", m.signinPassword.value(), "reason", "password")
	e.sample("parley_signin_failures_total", m.signinRefused.value(), "reason", "provider")
	e.sample("parley_signin_failures_total", m.signinToken.value(), "reason", "token")
	e.histogram("parley_sqlite_write_duration_seconds", "How long each SQLite write transaction held the writer, from begin to commit.", m.writeSeconds)
	e.one("parley_sqlite_write_errors_total", "counter", "SQLite write transactions that failed (busy, full disk, I/O, constraint), not counting refusals such as a question answered twice.", m.writeErrors.value())
	e.one("parley_streamed_deltas_total", "counter", "Pieces of text agents have streamed (about one a token for a model): rate() is tokens per second.", float64(m.hub.Deltas()))
	writeProcessMetrics(e)
}

// observeWrite records one write transaction. A refusal (a domain error: not found,
// conflict, invalid) is the transaction working as meant; a failure of the storage (a full
// disk: EUNAVAILABLE) or anything unexpected counts, but a request that went away while it
// waited.
func (m *metrics) observeWrite(took time.Duration, err error) {
	m.writeSeconds.Observe(took.Seconds())
	switch code := domain.ErrorCode(err); {
	case err == nil, errors.Is(err, context.Canceled):
	case code == domain.EINTERNAL, code == domain.EUNAVAILABLE:
		m.writeErrors.Inc()
	}
}

// handleMetrics serves the metrics to the holder of the metrics token, or to anyone when
// they are open.
func (s *Server) handleMetrics(c echo.Context) error {
	if want := s.metricsAccess.Token; want != "" {
		got, ok := bearer(c.Request())
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="parley metrics"`)
			return domain.Errorf(domain.EUNAUTHORIZED, "Send the metrics token (PARLEY_METRICS_TOKEN) as \"Authorization: Bearer …\".")
		}
	}
	var e expo
	s.metrics.write(c.Request().Context(), &e)
	return c.Blob(http.StatusOK, promContentType, e.Bytes())
}
