package builtin

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
)

const springLog = `2025-03-14 09:12:01.114  INFO 4242 --- [           main] c.a.shop.ShopApplication                 : Started ShopApplication in 4.21 seconds
2025-03-14 09:12:07.530  WARN 4242 --- [nio-8080-exec-2] c.a.shop.cart.CartService                : Cart 8812 has a stale price for SKU 10-442
2025-03-14 09:13:44.002 ERROR 4242 --- [nio-8080-exec-5] c.a.shop.pay.PaymentClient               : Payment gateway timeout after 30000 ms for order 18231
2025-03-14 09:13:51.778 ERROR 4242 --- [nio-8080-exec-1] c.a.shop.pay.PaymentClient               : Payment gateway timeout after 30000 ms for order 18240
2025-03-14 09:14:02.310 ERROR 4242 --- [nio-8080-exec-3] o.a.c.c.C.[.[.[/].[dispatcherServlet]    : Servlet.service() threw exception
java.lang.IllegalStateException: Order 18244 has no shipping address
	at com.acme.shop.order.OrderService.ship(OrderService.java:212)
	at org.springframework.aop.framework.ReflectiveMethodInvocation.proceed(ReflectiveMethodInvocation.java:186)
2025-03-14 09:15:30.001  INFO 4242 --- [nio-8080-exec-4] c.a.shop.order.OrderController           : GET /orders/18245 200
2025-03-14 09:16:12.993 ERROR 4242 --- [nio-8080-exec-7] c.a.shop.pay.PaymentClient               : Payment gateway timeout after 31000 ms for order 18252
`

const pythonLog = `2025-03-14 10:00:00,001 - worker - INFO - Starting worker pid=311
2025-03-14 10:00:05,250 - worker - WARNING - Queue depth 812 above 500
2025-03-14 10:02:10,917 - worker - ERROR - Job 7f3a9c21e4 failed: redis.exceptions.ConnectionError: Error 111 connecting to redis:6379
2025-03-14 10:02:11,020 - worker - INFO - Retrying job 7f3a9c21e4
`

const slogJSON = `{"time":"2025-03-14T11:00:00.000Z","level":"INFO","msg":"server started","addr":":8080"}
{"time":"2025-03-14T11:00:09.512Z","level":"ERROR","msg":"query failed","err":"pq: deadlock detected","table":"orders"}
{"time":"2025-03-14T11:01:00.000Z","level":"INFO","msg":"request","path":"/healthz","status":200}
{"time":"2025-03-14T11:02:30.250Z","level":"ERROR","msg":"query failed","err":"pq: deadlock detected","table":"orders"}
`

const logfmtLog = `time=2025-03-14T12:00:00Z level=info msg="listening" port=9090
time=2025-03-14T12:00:42Z level=warn msg="slow request" path=/api/search duration=2.4s
time=2025-03-14T12:05:42Z level=info msg="listening" port=9091
`

const nginxErrors = `2025/03/14 13:00:01 [notice] 1#1: start worker processes
2025/03/14 13:04:19 [error] 29#29: *1412 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.3.17, server: shop.example.com
2025/03/14 13:04:20 [error] 29#29: *1413 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.3.22, server: shop.example.com
`

const klogLines = `I0314 14:00:00.000000       1 controller.go:120] Starting controller
E0314 14:00:03.512331       1 reflector.go:138] failed to list *v1.Pod: Unauthorized
I0314 14:01:00.000000       1 controller.go:180] Synced
`

const goPanic = `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x6b2f4d]

goroutine 41 [running]:
github.com/acme/shop/internal/orders.(*Service).Charge(0x0, {0x8a3e60, 0xc0001a2000}, 0xc000214180)
	/src/internal/orders/service.go:88 +0x2d
github.com/acme/shop/internal/web.(*Server).checkout(0xc0000b6000, {0x8a1f40, 0xc0002b4000}, 0xc000290100)
	/src/internal/web/checkout.go:41 +0x1a5
net/http.HandlerFunc.ServeHTTP(0xc000290000?, {0x8a1f40?, 0xc0002b4000?}, 0x0?)
	/usr/local/go/src/net/http/server.go:2220 +0x29
created by net/http.(*Server).Serve in goroutine 1
	/usr/local/go/src/net/http/server.go:3360 +0x485
`

const goPanicStdlibFirst = `panic: assignment to entry in nil map

goroutine 1 [running]:
sync.(*Map).Store(...)
	/usr/local/go/src/sync/map.go:155
main.load({0x4b8f2a, 0x9})
	/home/dev/tool/main.go:23 +0x65
main.main()
	/home/dev/tool/main.go:12 +0x25
`

const javaTrace = `Exception in thread "main" org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'dataSource'
	at org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.initializeBean(AbstractAutowireCapableBeanFactory.java:1804)
	at com.acme.billing.BillingApplication.main(BillingApplication.java:14)
Caused by: java.sql.SQLException: Access denied for user 'billing'@'10.0.4.2'
	at com.mysql.cj.jdbc.exceptions.SQLError.createSQLException(SQLError.java:130)
	... 12 more
`

const pythonTraceback = `Traceback (most recent call last):
  File "/app/manage.py", line 22, in <module>
    main()
  File "/app/billing/invoices.py", line 57, in render
    total = sum(line.amount for line in lines)
  File "/usr/local/lib/python3.12/site-packages/decimal_utils/sum.py", line 9, in add
    return a + b
TypeError: unsupported operand type(s) for +: 'Decimal' and 'NoneType'
`

const nodeTrace = `TypeError: Cannot read properties of undefined (reading 'id')
    at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)
    at getUser (/app/src/routes/users.js:42:17)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
`

const ordersCSV = `order_id,customer,amount,currency,created_at
18231,ACME GmbH,129.90,EUR,2025-03-14T09:13:44Z
18240,"Doe, Jane",15.00,EUR,2025-03-14T09:13:51Z
18252,Initech,980.00,USD,2025-03-14T09:16:12Z
`

const prettyJSON = `{
  "created_at": "2025-03-14T09:13:44Z",
  "updated_at": "2025-03-14T09:16:12Z",
  "items": 3
}
`

func TestAnalyzeDocument(t *testing.T) {
	tests := []struct {
		name, file, mimeType, content string
		check                         func(t *testing.T, tr triage)
	}{
		{"SpringLog", "app.log", "text/x-log", springLog, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindLog)
			lg := tr.Log
			wantLevels(t, lg, map[string]int{"INFO": 2, "WARN": 1, "ERROR": 4})
			if lg.FirstErrorAt != 3 || !strings.HasPrefix(lg.FirstError, "2025-03-14 09:13:44.002 ERROR 4242") {
				t.Errorf("got first error %d %q", lg.FirstErrorAt, lg.FirstError)
			}
			if lg.Count != 3 || lg.Errors != 4 || lg.Common != "Payment gateway timeout after 30000 ms for order 18231" {
				t.Errorf("got most frequent %d of %d: %q", lg.Count, lg.Errors, lg.Common)
			}
			if lg.From != "2025-03-14 09:12:01.114" || lg.To != "2025-03-14 09:16:12.993" || lg.Span != 4*time.Minute+11*time.Second+879*time.Millisecond {
				t.Errorf("got span %q → %q (%v)", lg.From, lg.To, lg.Span)
			}
			if lg.Trace == nil || lg.Trace.Message != "java.lang.IllegalStateException: Order 18244 has no shipping address" ||
				lg.Trace.Frame != "at com.acme.shop.order.OrderService.ship(OrderService.java:212)" {
				t.Errorf("got trace %+v", lg.Trace)
			}
		}},
		{"PythonLogging", "worker.log", "text/plain", pythonLog, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindLog)
			wantLevels(t, tr.Log, map[string]int{"INFO": 2, "WARN": 1, "ERROR": 1})
			if tr.Log.FirstErrorAt != 3 || tr.Log.Span != 2*time.Minute+11*time.Second+19*time.Millisecond {
				t.Errorf("got first error at %d, span %v", tr.Log.FirstErrorAt, tr.Log.Span)
			}
		}},
		{"SlogJSON", "api.ndjson", "application/x-ndjson", slogJSON, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindLog)
			wantLevels(t, tr.Log, map[string]int{"INFO": 2, "ERROR": 2})
			if tr.Log.Common != "query failed" || tr.Log.Count != 2 || tr.Log.Span != 2*time.Minute+30*time.Second+250*time.Millisecond {
				t.Errorf("got %+v", tr.Log)
			}
		}},
		{"Logfmt", "svc.log", "text/plain", logfmtLog, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindLog)
			wantLevels(t, tr.Log, map[string]int{"INFO": 2, "WARN": 1})
			if !tr.Log.FirstIsWarn || tr.Log.FirstErrorAt != 2 || tr.Log.Span != 5*time.Minute+42*time.Second {
				t.Errorf("got %+v", tr.Log)
			}
		}},
		{"NginxErrorLog", "error.log", "text/plain", nginxErrors, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindLog)
			wantLevels(t, tr.Log, map[string]int{"INFO": 1, "ERROR": 2})
			if tr.Log.Count != 2 || !strings.HasPrefix(tr.Log.Common, "29#29: *1412 connect() failed") {
				t.Errorf("got most frequent %d %q", tr.Log.Count, tr.Log.Common)
			}
		}},
		{"Klog", "controller.log", "text/plain", klogLines, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindLog)
			wantLevels(t, tr.Log, map[string]int{"INFO": 2, "ERROR": 1})
			if tr.Log.Span != time.Minute || !strings.HasPrefix(tr.Log.FirstError, "E0314 14:00:03.512331") {
				t.Errorf("got %+v", tr.Log)
			}
		}},
		{"GoPanic", "panic.txt", "text/plain", goPanic, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindTrace)
			wantTrace(t, tr.Trace, traceSummary{Language: "Go",
				Message: "panic: runtime error: invalid memory address or nil pointer dereference",
				Frame:   "github.com/acme/shop/internal/orders.(*Service).Charge(0x0, {0x8a3e60, 0xc0001a2000}, 0xc000214180) at /src/internal/orders/service.go:88"})
		}},
		{"GoPanicInMain", "panic.txt", "text/plain", goPanicStdlibFirst, func(t *testing.T, tr triage) {
			wantTrace(t, tr.Trace, traceSummary{Language: "Go", Message: "panic: assignment to entry in nil map",
				Frame: "main.load({0x4b8f2a, 0x9}) at /home/dev/tool/main.go:23"})
		}},
		{"JavaTrace", "trace.txt", "text/plain", javaTrace, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindTrace)
			wantTrace(t, tr.Trace, traceSummary{Language: "Java",
				Message: `Exception in thread "main" org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'dataSource'`,
				Cause:   `Caused by: java.sql.SQLException: Access denied for user 'billing'@'10.0.4.2'`,
				Frame:   "at com.acme.billing.BillingApplication.main(BillingApplication.java:14)"})
		}},
		{"PythonTraceback", "trace.txt", "text/plain", pythonTraceback, func(t *testing.T, tr triage) {
			wantTrace(t, tr.Trace, traceSummary{Language: "Python",
				Message: "TypeError: unsupported operand type(s) for +: 'Decimal' and 'NoneType'",
				Frame:   `File "/app/billing/invoices.py", line 57, in render`})
		}},
		{"NodeTrace", "trace.txt", "text/plain", nodeTrace, func(t *testing.T, tr triage) {
			wantTrace(t, tr.Trace, traceSummary{Language: "JavaScript",
				Message: "TypeError: Cannot read properties of undefined (reading 'id')",
				Frame:   "at getUser (/app/src/routes/users.js:42:17)"})
		}},
		{"CSV", "orders.csv", "text/csv", ordersCSV, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindTable)
			if *tr.Table != (tableSummary{Rows: 3, Columns: 5, Header: "order_id,customer,amount,currency,created_at"}) {
				t.Errorf("got table %+v", *tr.Table)
			}
		}},
		{"TSVByName", "sizes.tsv", "text/plain", "node\tcpu\tmemory\nn1\t4\t16Gi\nn2\t8\t32Gi\r\n", func(t *testing.T, tr triage) {
			wantKind(t, tr, kindTable)
			if tr.Table.Rows != 2 || tr.Table.Columns != 3 {
				t.Errorf("got table %+v", *tr.Table)
			}
		}},
		{"JSONWithTimestamps", "order.json", "application/json", prettyJSON, func(t *testing.T, tr triage) {
			wantKind(t, tr, kindText)
			if tr.Lines != 5 || tr.FirstLine != "{" {
				t.Errorf("got %d lines, first %q", tr.Lines, tr.FirstLine)
			}
		}},
		{"Text", "notes.md", "text/markdown", "\n# Rollout notes\n\nStep one.\n", func(t *testing.T, tr triage) {
			wantKind(t, tr, kindText)
			if tr.Lines != 4 || tr.FirstLine != "# Rollout notes" {
				t.Errorf("got %d lines, first %q", tr.Lines, tr.FirstLine)
			}
		}},
		{"Binary", "shot.png", "image/png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", func(t *testing.T, tr triage) {
			wantKind(t, tr, kindBinary)
		}},
		{"TextWithoutAType", "build.log", "application/octet-stream", "ERROR: build failed\nERROR: see above\n", func(t *testing.T, tr triage) {
			wantKind(t, tr, kindLog)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := domain.DocumentRef{ID: 1, Name: tt.file, MimeType: tt.mimeType, Size: int64(len(tt.content))}
			tt.check(t, analyzeDocument(ref, []byte(tt.content)))
		})
	}
}

func wantKind(t *testing.T, tr triage, kind string) {
	t.Helper()
	if tr.Kind != kind {
		t.Fatalf("got kind %q, want %q (%+v)", tr.Kind, kind, tr)
	}
}

func wantLevels(t *testing.T, lg *logSummary, want map[string]int) {
	t.Helper()
	if !maps.Equal(lg.Levels, want) {
		t.Errorf("got levels %v, want %v", lg.Levels, want)
	}
}

func wantTrace(t *testing.T, got *traceSummary, want traceSummary) {
	t.Helper()
	if got == nil {
		t.Fatal("got no trace")
	}
	if *got != want {
		t.Errorf("got trace\n%+v\nwant\n%+v", *got, want)
	}
}

func TestErrorKey(t *testing.T) {
	tests := []struct{ a, b string }{
		{"timeout after 30000 ms for order 18231", "timeout after 31000 ms for order 18252"},
		{"job 7f3a9c21e4 failed", "job 0b2c44aa91 failed"},
		{"request 3fa85f64-5717-4562-b3fc-2c963f66afa6 denied", "request 9b2e1c3d-0000-4562-b3fc-2c963f66afa6 denied"},
	}
	for _, tt := range tests {
		if ka, kb := errorKey(tt.a), errorKey(tt.b); ka != kb {
			t.Errorf("errorKey(%q) = %q, errorKey(%q) = %q; want them equal", tt.a, ka, tt.b, kb)
		}
	}
	if errorKey("connection refused") == errorKey("connection reset") {
		t.Error("different messages got the same key")
	}
}

func TestRenderTriage_QuotesVerbatim(t *testing.T) {
	ref := domain.DocumentRef{ID: 1, Name: "app_prod.log", MimeType: "text/x-log", Size: int64(len(springLog))}
	got := renderTriage("", []triage{analyzeDocument(ref, []byte(springLog)),
		{Ref: domain.DocumentRef{Name: "shot.png", MimeType: "image/png", Size: 14200}, Kind: kindBinary}})
	for _, want := range []string{
		"### What I found in the documents\n",
		"**app\\_prod.log** · log · 10 lines · " + ref.SizeLabel() + "\n",
		"- Levels: 4 ERROR · 1 WARN · 2 INFO\n",
		"- `2025-03-14 09:12:01.114` → `2025-03-14 09:16:12.993` (4m12s)\n",
		"- First error, line 3: `2025-03-14 09:13:44.002 ERROR 4242 --- [nio-8080-exec-5] c.a.shop.pay.PaymentClient               : Payment gateway timeout after 30000 ms for order 18231`\n",
		"- Most frequent error, 3 of 4 (numbers and ids vary): `Payment gateway timeout after 30000 ms for order 18231`\n",
		"- First stack trace: `java.lang.IllegalStateException: Order 18244 has no shipping address`, `at com.acme.shop.order.OrderService.ship(OrderService.java:212)`\n",
		"**shot.png** · image/png, " + domain.ByteSize(14200) + ": not text, so I can't read it.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("triage lacks %q:\n%s", want, got)
		}
	}
}

func TestVerbatim(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "`plain`"},
		{"uses `code`", "`` uses `code` ``"},
		{"`starts", "`` `starts ``"},
		{"  indented", "`   indented `"},
		{strings.Repeat("x", maxQuoted+5), "`" + strings.Repeat("x", maxQuoted) + "…`"},
		{"   ", ""},
	}
	for _, tt := range tests {
		if got := verbatim(tt.in); got != tt.want {
			t.Errorf("verbatim(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

var formatVerb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// Every sentence has English, and every translation the English format verbs, in order.
func TestCatalog(t *testing.T) {
	for _, key := range slices.Sorted(maps.Keys(catalog)) {
		m := catalog[key]
		en, ok := m["en"]
		if !ok {
			t.Errorf("%s: no English", key)
			continue
		}
		for lang, s := range m {
			if !slices.Equal(formatVerb.FindAllString(s, -1), formatVerb.FindAllString(en, -1)) {
				t.Errorf("%s[%s] = %q: its format verbs differ from English %q", key, lang, s, en)
			}
		}
	}
	if got := phrase("pt", "triage.heading"); got != catalog["triage.heading"]["en"] {
		t.Errorf("an untranslated language got %q, want English", got)
	}
}
