package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parley-chat/parley/agent"
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
// kept in a registry of the server's own (not the process's global one), so that servers
// side by side (tests) count apart. They are kept whether or not /metrics is served: each
// costs an atomic add where it is counted.
type metrics struct {
	handler http.Handler
	// pageStreams and apiStreams are the SSE streams open now, a browser's and programs'.
	pageStreams, apiStreams prometheus.Gauge
	// signin* count failed sign-ins: a wrong name or password, one refused by the rate
	// limit, an API request with a token that is not (or no longer) valid.
	signinPassword, signinLimited, signinToken prometheus.Counter
	writeSeconds                               prometheus.Histogram
	writeErrors                                prometheus.Counter
	ledger                                     *ledgerCollector
}

// newMetrics registers Parley's metrics, with the Go runtime's and the process's, and
// starts timing db's write transactions; stats are read at each scrape.
func newMetrics(db Health, stats LedgerStats, hub *agent.Hub, log *slog.Logger) *metrics {
	m := &metrics{ledger: newLedgerCollector(stats)}
	streams := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "parley_open_streams",
		Help: "SSE streams open now, by kind: page (a browser's pages) or api (programs)."}, []string{"kind"})
	m.pageStreams, m.apiStreams = streams.WithLabelValues("page"), streams.WithLabelValues("api")
	signin := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_signin_failures_total",
		Help: "Failed sign-ins, by reason: password (wrong name or password), limited (refused by the rate limit), token (an API request with a token that is not valid)."},
		[]string{"reason"})
	m.signinPassword, m.signinLimited, m.signinToken = signin.WithLabelValues("password"), signin.WithLabelValues("limited"), signin.WithLabelValues("token")
	m.writeSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "parley_sqlite_write_duration_seconds",
		Help:    "How long each SQLite write transaction held the writer, from begin to commit.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}})
	m.writeErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "parley_sqlite_write_errors_total",
		Help: "SQLite write transactions that failed (busy, full disk, I/O, constraint), not counting refusals such as a question answered twice."})
	deltas := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "parley_streamed_deltas_total",
		Help: "Pieces of text agents have streamed (about one a token for a model): rate() is tokens per second."},
		func() float64 { return float64(hub.Deltas()) })
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		streams, signin, m.writeSeconds, m.writeErrors, deltas, m.ledger)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: promLog{log}, ErrorHandling: promhttp.ContinueOnError})
	db.ObserveWrites(m.observeWrite)
	return m
}

// observeWrite records one write transaction. A refusal (a domain error: not found,
// conflict, invalid) is the transaction working as meant; a failure of the storage (a full
// disk: EUNAVAILABLE) or anything unexpected counts, but a request that went away while it
// waited.
func (m *metrics) observeWrite(took time.Duration, err error) {
	m.writeSeconds.Observe(took.Seconds())
	switch code := agent.ErrorCode(err); {
	case err == nil, errors.Is(err, context.Canceled):
	case code == agent.EINTERNAL, code == agent.EUNAVAILABLE:
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
			return agent.Errorf(agent.EUNAUTHORIZED, "Send the metrics token (PARLEY_METRICS_TOKEN) as \"Authorization: Bearer …\".")
		}
	}
	s.metrics.handler.ServeHTTP(c.Response(), c.Request())
	return nil
}

// promLog logs what goes wrong while the metrics are gathered (the rest are still served).
type promLog struct{ log *slog.Logger }

func (l promLog) Println(v ...any) { l.log.Error("metrics", "error", fmt.Sprint(v...)) }
