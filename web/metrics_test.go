package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
)

const metricsToken = "metrics-4f9c2a7e1b8d3c6a"

// newMetricsServer is an accounts server (ann, bob, carol) that serves /metrics to the
// holder of metricsToken.
func newMetricsServer(t *testing.T, limits web.Limits, agents ...domain.Agent) *accountsServer {
	t.Helper()
	return newAccountsServerWith(t, web.NewServerOptions{Heartbeat: time.Hour, Limits: limits, Metrics: web.MetricsOptions{Token: metricsToken}}, agents...)
}

// getMetrics sends GET /metrics with the header Authorization: auth (none when empty).
func getMetrics(t *testing.T, base, auth string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// scrape reads the metrics as Prometheus does, and parses them.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp := getMetrics(t, base, "Bearer "+metricsToken)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d, want 200", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sample is the value of the metric name with the labels given as name, value pairs: a
// counter's or gauge's value, a histogram's count of observations.
func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount())
		}
		t.Fatalf("%s is a %s", name, f.GetType())
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

// waitSample scrapes until the metric has the value want.
func waitSample(t *testing.T, base string, want float64, name string, labels ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := sample(t, scrape(t, base), name, labels...)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v = %v, want %v", name, labels, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMetrics_Token(t *testing.T) {
	as := newMetricsServer(t, web.Limits{})
	for _, auth := range []string{"", "Bearer wrong-token", "Basic " + metricsToken} {
		resp := getMetrics(t, as.URL, auth)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("GET /metrics with %q = %d (WWW-Authenticate %q), want 401 asking for a bearer token",
				auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// A session does not open them either: the token does.
	ann := as.signIn(t, "ann")
	if code, _, _ := ann.do(http.MethodGet, "/metrics", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics signed in without the token = %d, want 401", code)
	}
	fams := scrape(t, as.URL)
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "parley_open_streams", "parley_runs",
		"parley_questions_pending", "parley_questions_resolved_total", "parley_question_answer_wait_seconds",
		"parley_sqlite_write_duration_seconds", "parley_sqlite_write_errors_total", "parley_signin_failures_total",
		"parley_streamed_deltas_total"} {
		if fams[name] == nil {
			t.Errorf("no metric %s", name)
		}
	}
}

// TestMetrics_OffUnlessAsked: no /metrics by default; with Open, anyone reads them.
func TestMetrics_OffUnlessAsked(t *testing.T) {
	ts := newTestServer(t, newDB(t))
	if code, body := ts.get(t, "/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics = %d %q, want 404 when not asked for", code, body)
	}
	as := newAccountsServerWith(t, web.NewServerOptions{Heartbeat: time.Hour, Metrics: web.MetricsOptions{Open: true}})
	if resp := getMetrics(t, as.URL, ""); resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("open GET /metrics = %d %s, want 200 text/plain", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestMetrics_SignInFailures(t *testing.T) {
	as := newMetricsServer(t, web.Limits{LoginAttempts: 2})
	as.signIn(t, "bob") // a success counts nothing
	p := as.browser(t)
	for i, want := range []int{401, 401, 429} {
		if code, _, _ := p.do(http.MethodPost, "/login", url.Values{"name": {"ann"}, "password": {"not her password"}}, nil); code != want {
			t.Fatalf("wrong password #%d = %d, want %d", i+1, code, want)
		}
	}
	bad := &apiClient{t: t, base: as.URL, token: "parley_not-a-real-token"}
	if code, body, _ := bad.do(http.MethodGet, "/api/v1/me", nil); code != http.StatusUnauthorized {
		t.Fatalf("API with a wrong token = %d %s, want 401", code, body)
	}
	fams := scrape(t, as.URL)
	for reason, want := range map[string]float64{"password": 2, "limited": 1, "token": 1} {
		if got := sample(t, fams, "parley_signin_failures_total", "reason", reason); got != want {
			t.Errorf("sign-in failures (%s) = %v, want %v", reason, got, want)
		}
	}
}

func TestMetrics_QuestionAnswered(t *testing.T) {
	as := newMetricsServer(t, web.Limits{}, askerAndReader())
	ann := as.signIn(t, "ann")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"Plan the offsite"}}, nil)
	id := convID(t, h.Get("Location"))
	as.waitState(t, id, domain.StateWaiting)
	before := scrape(t, as.URL)
	if got := sample(t, before, "parley_questions_pending"); got != 1 {
		t.Errorf("pending = %v, want 1", got)
	}
	if got := sample(t, before, "parley_runs", "state", "waiting"); got != 1 {
		t.Errorf("runs waiting = %v, want 1", got)
	}
	if got := sample(t, before, "parley_questions_resolved_total", "outcome", "answered"); got != 0 {
		t.Errorf("answered before the answer = %v", got)
	}
	as.clock.Add(42 * time.Second) // ann thinks it over
	if code, body, _ := ann.do(http.MethodPost, "/questions/1/answer", url.Values{"venue": {"Lisbon"}}, nil); code != http.StatusOK {
		t.Fatalf("answer = %d %.200s", code, body)
	}
	as.waitState(t, id, domain.StateDone)
	after := scrape(t, as.URL)
	if got := sample(t, after, "parley_questions_pending"); got != 0 {
		t.Errorf("pending after the answer = %v, want 0", got)
	}
	if got := sample(t, after, "parley_questions_resolved_total", "outcome", "answered"); got != 1 {
		t.Errorf("answered = %v, want 1", got)
	}
	if got := sample(t, after, "parley_questions_resolved_total", "outcome", "declined"); got != 0 {
		t.Errorf("declined = %v, want 0", got)
	}
	wait := after["parley_question_answer_wait_seconds"].GetMetric()[0].GetHistogram()
	if wait.GetSampleCount() != 1 || wait.GetSampleSum() != 42 {
		t.Errorf("answer wait: %d samples summing to %vs, want one of 42s", wait.GetSampleCount(), wait.GetSampleSum())
	}
	if got, want := sample(t, after, "parley_runs", "state", "done"), 1.0; got != want {
		t.Errorf("runs done = %v, want %v", got, want)
	}
	// The resume wrote its reply live ("Noted: Lisbon (answered).").
	if got := sample(t, after, "parley_streamed_deltas_total"); got < 1 {
		t.Errorf("streamed deltas = %v, want the reply's", got)
	}
	// A later scrape counts the answer once.
	if got := sample(t, scrape(t, as.URL), "parley_questions_resolved_total", "outcome", "answered"); got != 1 {
		t.Errorf("answered at the next scrape = %v, want still 1", got)
	}
}

func TestMetrics_SQLiteWrites(t *testing.T) {
	storetest.SQLiteOnly(t) // the database file refuses writes or fills up
	as := newMetricsServer(t, web.Limits{}, askerAndReader())
	before := sample(t, scrape(t, as.URL), "parley_sqlite_write_duration_seconds")
	ann := as.signIn(t, "ann") // a session is written
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"Plan"}}, nil)
	as.waitState(t, convID(t, h.Get("Location")), domain.StateWaiting)
	fams := scrape(t, as.URL)
	if got := sample(t, fams, "parley_sqlite_write_duration_seconds"); got <= before {
		t.Errorf("write transactions timed = %v, want more than the %v before", got, before)
	}
	if got := sample(t, fams, "parley_sqlite_write_errors_total"); got != 0 {
		t.Errorf("write errors = %v, want 0", got)
	}
	// A refusal is not an error (a second answer); a write SQLite fails is (a foreign key).
	if code, body, _ := ann.do(http.MethodPost, "/questions/1/answer", url.Values{"venue": {"Porto"}}, nil); code != http.StatusOK {
		t.Fatalf("answer = %d %.200s", code, body)
	}
	ctx := context.Background()
	if _, err := as.db.Resolve(ctx, domain.Resolution{QuestionID: 1, Outcome: domain.Declined}); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("second resolution: %v, want ECONFLICT", err)
	}
	if _, err := as.db.AppendEvent(ctx, domain.Event{ConversationID: 999, Kind: domain.EventPlan, Plan: &domain.Plan{}}); err == nil {
		t.Fatal("an event of no conversation was stored")
	}
	if got := sample(t, scrape(t, as.URL), "parley_sqlite_write_errors_total"); got != 1 {
		t.Errorf("write errors = %v, want 1", got)
	}
	// A write the storage refuses (a full disk, a read-only file system) counts too.
	if err := as.db.RefuseWrites(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := as.db.AppendEvent(ctx, domain.Event{ConversationID: 1, Kind: domain.EventPlan, Plan: &domain.Plan{}}); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("a write with writes refused: %v, want EUNAVAILABLE", err)
	}
	if err := as.db.RefuseWrites(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := sample(t, scrape(t, as.URL), "parley_sqlite_write_errors_total"); got != 2 {
		t.Errorf("write errors after a refused write = %v, want 2", got)
	}
}

func TestMetrics_OpenStreams(t *testing.T) {
	as := newMetricsServer(t, web.Limits{}, askerAndReader())
	ann := as.signIn(t, "ann")
	_, _, h := ann.do(http.MethodPost, "/conversations", url.Values{"agent": {"asker"}, "text": {"Plan"}}, nil)
	conv := h.Get("Location")
	as.waitState(t, convID(t, conv), domain.StateWaiting)
	ctx, closePage := context.WithCancel(context.Background())
	defer closePage()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, as.URL+conv+"/stream", nil)
	resp, err := ann.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("page stream = %d", resp.StatusCode)
	}
	_, closeAPI := as.token(t, "ann").events(convID(t, conv), "")
	fams := scrape(t, as.URL)
	if page, api := sample(t, fams, "parley_open_streams", "kind", "page"), sample(t, fams, "parley_open_streams", "kind", "api"); page != 1 || api != 1 {
		t.Errorf("open streams: page %v, api %v; want 1 and 1", page, api)
	}
	closePage()
	closeAPI()
	waitSample(t, as.URL, 0, "parley_open_streams", "kind", "page")
	waitSample(t, as.URL, 0, "parley_open_streams", "kind", "api")
}
