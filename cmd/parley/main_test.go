package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/netip"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/web"
)

// syncBuffer is a bytes.Buffer safe for the server's logger and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRun_ServeHealthAndGracefulShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan error, 1)
	db := filepath.Join(t.TempDir(), "p.db")
	go func() {
		done <- run(ctx, nil, env(map[string]string{"PARLEY_ADDR": "127.0.0.1:0", "PARLEY_DB": db, "PARLEY_METRICS_TOKEN": testMetricsToken}), stdio{out: io.Discard, err: &logs})
	}()
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no listening line in logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.HasSuffix(base, ":0") {
		t.Fatalf("logged %s, want the real port", base)
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("healthz = %d %q", resp.StatusCode, body)
	}
	// PARLEY_METRICS_TOKEN serves the metrics to its bearer.
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+testMetricsToken)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "parley_open_streams") {
		t.Fatalf("metrics = %d %.200q", resp.StatusCode, body)
	}
	cancel() // what SIGINT/SIGTERM do through signal.NotifyContext
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v after shutdown", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no graceful shutdown within 15 s")
	}
}

const testMetricsToken = "0123456789abcdef0123"

var (
	defaultUploads = web.UploadLimits{MaxBytes: 10_000_000, MaxFiles: 10}
	defaultAuth    = web.AuthOptions{Mode: web.AuthLocal, Signup: true, Session: store.SessionLimits{Idle: 30 * time.Minute, Max: 12 * time.Hour}}
	defaultLimits  = web.Limits{Streams: 12, MessagesPerMinute: 20}
)

func TestParseServe(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"defaults", nil, nil, Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads}, ""},
		{"env", nil, map[string]string{"PARLEY_ADDR": ":9000", "PARLEY_DB": "/tmp/x.db", "PARLEY_LOG_FORMAT": "json", "PARLEY_BUILTIN_PACE": "0s", "PARLEY_MAX_UPLOAD": "512KB", "PARLEY_MAX_FILES": "3"},
			Config{Addr: ":9000", DB: "/tmp/x.db", LogLevel: "info", LogFormat: "json", Uploads: web.UploadLimits{MaxBytes: 512_000, MaxFiles: 3}}, ""},
		{"flag beats env", []string{"--addr", "127.0.0.1:0", "--log-level", "debug", "--max-upload", "2.5MB"}, map[string]string{"PARLEY_ADDR": ":9000", "PARLEY_MAX_UPLOAD": "1MB"},
			Config{Addr: "127.0.0.1:0", DB: "./parley.db", LogLevel: "debug", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: web.UploadLimits{MaxBytes: 2_500_000, MaxFiles: 10}}, ""},
		{"synchronous", []string{"--synchronous", "full"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, Synchronous: "full"}, ""},
		{"synchronous from env", nil, map[string]string{"PARLEY_SYNCHRONOUS": "FULL"},
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, Synchronous: "FULL"}, ""},
		{"skip the database check", []string{"--skip-db-check"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, SkipDBCheck: true}, ""},
		{"skip the database check from env", nil, map[string]string{"PARLEY_SKIP_DB_CHECK": "1"},
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, SkipDBCheck: true}, ""},
		{"bad synchronous", []string{"--synchronous", "off"}, nil, Config{}, `--synchronous "off": use normal or full`},
		{"bad upload size", []string{"--max-upload", "lots"}, nil, Config{}, `"lots" is not a size`},
		{"bad upload size in env", nil, map[string]string{"PARLEY_MAX_UPLOAD": "-1MB"}, Config{}, "PARLEY_MAX_UPLOAD"},
		{"no files", []string{"--max-files", "0"}, nil, Config{}, "--max-files must be at least 1"},
		{"bad pace", nil, map[string]string{"PARLEY_BUILTIN_PACE": "fast"}, Config{}, "PARLEY_BUILTIN_PACE"},
		{"stray argument", []string{"extra"}, nil, Config{}, "unexpected argument"},
		{"a2a without PARLEY_A2A_TOKEN", []string{"--a2a"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, A2A: true, Uploads: defaultUploads}, ""},
		{"proxy", []string{"--auth", "proxy", "--trusted-proxies", "10.0.0.0/8, 127.0.0.1", "--proxy-header", "X-Auth-User"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads,
				Auth: web.AuthOptions{Mode: web.AuthProxy, Signup: true, Session: defaultAuth.Session, ProxyHeaders: []string{"X-Auth-User"},
					TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}}, Limits: defaultLimits}, ""},
		{"accounts from env", nil, map[string]string{"PARLEY_SIGNUP": "false", "PARLEY_STAFF_ANSWER": "1", "PARLEY_SESSION_IDLE": "10m", "PARLEY_SESSION_MAX": "1h", "PARLEY_MAX_STREAMS": "3", "PARLEY_MESSAGE_RATE": "5"},
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads,
				Auth: web.AuthOptions{Mode: web.AuthLocal, StaffAnswer: true, Session: store.SessionLimits{Idle: 10 * time.Minute, Max: time.Hour}}, Limits: web.Limits{Streams: 3, MessagesPerMinute: 5}}, ""},
		{"proxy without proxies", []string{"--auth", "proxy"}, nil, Config{}, "needs --trusted-proxies"},
		{"no sign-in on a public address", []string{"--auth", "none", "--addr", "0.0.0.0:8080"}, nil, Config{}, "loopback address"},
		{"no sign-in on localhost", []string{"--auth", "none", "--addr", "localhost:0"}, nil,
			Config{Addr: "localhost:0", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads,
				Auth: web.AuthOptions{Mode: web.AuthNone, Signup: true, Session: defaultAuth.Session}, Limits: defaultLimits}, ""},
		{"unknown auth", []string{"--auth", "ldap"}, nil, Config{}, `--auth "ldap"`},
		{"bad proxy address", nil, map[string]string{"PARLEY_TRUSTED_PROXIES": "10.0.0.300"}, Config{}, "not an IP address"},
		{"bad session", nil, map[string]string{"PARLEY_SESSION_IDLE": "soon"}, Config{}, "PARLEY_SESSION_IDLE"},
		{"metrics token from env", nil, map[string]string{"PARLEY_METRICS_TOKEN": testMetricsToken},
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, Metrics: web.MetricsOptions{Token: testMetricsToken}}, ""},
		{"metrics open", []string{"--metrics", "open"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, Metrics: web.MetricsOptions{Open: true}}, ""},
		{"metrics off beats the token", []string{"--metrics", "off"}, map[string]string{"PARLEY_METRICS_TOKEN": testMetricsToken},
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads}, ""},
		{"metrics token without a token", nil, map[string]string{"PARLEY_METRICS": "token"}, Config{}, "needs PARLEY_METRICS_TOKEN"},
		{"metrics token too short", nil, map[string]string{"PARLEY_METRICS_TOKEN": "secret"}, Config{}, "16 characters or more"},
		{"metrics open with a token", []string{"--metrics", "open"}, map[string]string{"PARLEY_METRICS_TOKEN": testMetricsToken}, Config{}, "unset it"},
		{"unknown metrics mode", []string{"--metrics", "yes"}, nil, Config{}, `--metrics "yes"`},
		{"lease", []string{"--lease", "3s"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, Lease: 3 * time.Second}, ""},
		{"lease from env", nil, map[string]string{"PARLEY_LEASE": "1m"},
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, Lease: time.Minute}, ""},
		{"pool", []string{"--db-pool", "40"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, DBPool: 40}, ""},
		{"pool from env", nil, map[string]string{"PARLEY_DB_POOL": "8"},
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, DBPool: 8}, ""},
		{"bad pool", []string{"--db-pool", "1"}, nil, Config{}, "--db-pool 1: 2 or more"},
		{"bad pool in env", nil, map[string]string{"PARLEY_DB_POOL": "many"}, Config{}, "PARLEY_DB_POOL"},
		{"lease too short", []string{"--lease", "100ms"}, nil, Config{}, "a second or more"},
		{"bad lease in env", nil, map[string]string{"PARLEY_LEASE": "long"}, Config{}, "PARLEY_LEASE"},
		{"oidc", []string{"--auth", "oidc", "--oidc-issuer", "https://id.example/realms/acme", "--oidc-client-id", "parley", "--oidc-staff-group", "ops",
			"--oidc-scopes", "openid,profile email", "--public-url", "https://parley.example", "--addr", "0.0.0.0:8080"},
			map[string]string{"PARLEY_OIDC_CLIENT_SECRET": "s3cret", "PARLEY_OIDC_NAME_CLAIM": "email"},
			Config{Addr: "0.0.0.0:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads, PublicURL: "https://parley.example",
				Auth: web.AuthOptions{Mode: web.AuthOIDC, Signup: true, Session: defaultAuth.Session, OIDC: web.OIDCOptions{Issuer: "https://id.example/realms/acme",
					ClientID: "parley", ClientSecret: "s3cret", Scopes: []string{"openid", "profile", "email"}, NameClaim: "email", StaffGroup: "ops"}}, Limits: defaultLimits}, ""},
		{"oidc without an issuer", []string{"--auth", "oidc", "--oidc-client-id", "parley"}, nil, Config{}, "needs --oidc-issuer"},
		{"oidc without a client", []string{"--auth", "oidc", "--oidc-issuer", "https://id.example"}, nil, Config{}, "needs --oidc-client-id"},
		{"oidc over http beyond this machine", []string{"--auth", "oidc", "--oidc-issuer", "http://id.example", "--oidc-client-id", "parley"}, nil, Config{}, "only on a loopback address"},
		{"oidc over http on loopback", []string{"--auth", "oidc", "--oidc-issuer", "http://127.0.0.1:9998", "--oidc-client-id", "parley"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads,
				Auth: web.AuthOptions{Mode: web.AuthOIDC, Signup: true, Session: defaultAuth.Session, OIDC: web.OIDCOptions{Issuer: "http://127.0.0.1:9998", ClientID: "parley"}}, Limits: defaultLimits}, ""},
		{"oidc staff group Parley cannot take", []string{"--auth", "oidc", "--oidc-issuer", "https://id.example", "--oidc-client-id", "parley", "--oidc-staff-group", "Équipe"}, nil, Config{}, "nobody would be staff"},
		{"oidc without openid", []string{"--auth", "oidc", "--oidc-issuer", "https://id.example", "--oidc-client-id", "parley", "--oidc-scopes", "profile"}, nil, Config{}, "must include openid"},
		{"oidc beyond this machine without a public url", []string{"--auth", "oidc", "--oidc-issuer", "https://id.example", "--oidc-client-id", "parley", "--addr", ":8080"}, nil, Config{}, "needs --public-url"},
		{"proxy groups", []string{"--auth", "proxy", "--trusted-proxies", "127.0.0.1", "--proxy-groups-header", "Remote-Groups"}, nil,
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, Uploads: defaultUploads,
				Auth: web.AuthOptions{Mode: web.AuthProxy, Signup: true, Session: defaultAuth.Session, ProxyGroupsHeader: "Remote-Groups",
					TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, Limits: defaultLimits}, ""},
		{"proxy groups without a proxy", []string{"--proxy-groups-header", "Remote-Groups"}, nil, Config{}, "goes with --auth proxy"},
		{"a2a from env", nil, map[string]string{"PARLEY_A2A": "1", "PARLEY_A2A_TOKEN": "t", "ENABLE_STRUCTURED_OUTPUT": "true"},
			Config{Addr: "127.0.0.1:8080", DB: "./parley.db", LogLevel: "info", LogFormat: "text", Pace: 25 * time.Millisecond, A2A: true, A2AToken: "t", StructuredOutput: true, Uploads: defaultUploads}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseServe(tt.args, env(tt.env), io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if tt.want.Auth.Mode == "" {
				tt.want.Auth, tt.want.Limits = defaultAuth, defaultLimits
			}
			if tt.want.Lease == 0 {
				tt.want.Lease = store.Lease
			}
			if tt.want.DBPool == 0 {
				tt.want.DBPool = store.PoolSize
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("parseServe = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestRun_Errors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, nil, `unknown command "frobnicate"`},
		{"bad log format", []string{"serve", "--log-format", "xml"}, nil, "--log-format"},
		{"bad log level", []string{"--log-level", "loud"}, nil, "--log-level"},
		{"bad address", []string{"--addr", "256.0.0.1:1", "--db", filepath.Join(t.TempDir(), "p.db")}, nil, "listen on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, env(tt.env), stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run(%v) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}
