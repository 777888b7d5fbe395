package intake

import (
	"strings"
	"testing"
)

const javaTrace = `Exception in thread "main" java.lang.NullPointerException: Cannot invoke "com.acme.billing.Invoice.total()" because "invoice" is null
	at com.acme.billing.InvoiceService.charge(InvoiceService.java:118)
	at com.acme.billing.InvoiceService.chargeAll(InvoiceService.java:74)
	at com.acme.billing.jobs.NightlyBilling.run(NightlyBilling.java:41)
	at java.base/java.util.concurrent.Executors$RunnableAdapter.call(Executors.java:572)
	at java.base/java.util.concurrent.FutureTask.run(FutureTask.java:317)
Caused by: java.lang.IllegalStateException: no invoice for customer 4411
	at com.acme.billing.InvoiceRepository.latest(InvoiceRepository.java:52)
	... 4 more`

const goPanic = `panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x6b8f2a]

goroutine 42 [running]:
github.com/parley-chat/parley/store.(*DB).Conversation(0x0, {0x8a6e40, 0xc0001a2000}, 0x7)
	/home/dev/src/parley/store/conversation.go:88 +0x2a
github.com/parley-chat/parley/web.(*Server).handleConversationShow(0xc0000f6000, {0x8ad1b8, 0xc00028e0a0})
	/home/dev/src/parley/web/conversation_show.go:31 +0x125
created by net/http.(*Server).Serve in goroutine 1
	/usr/local/go/src/net/http/server.go:3454 +0x485
exit status 2`

const pythonTrace = `Traceback (most recent call last):
  File "/srv/app/import.py", line 88, in <module>
    main(sys.argv[1:])
  File "/srv/app/import.py", line 61, in main
    rows = load(path)
  File "/srv/app/import.py", line 23, in load
    amount=int(rec["amount_cents"]),
ValueError: invalid literal for int() with base 10: '12.50'`

const rustPanic = `thread 'main' panicked at src/store.rs:41:27:
called ` + "`Result::unwrap()`" + ` on an ` + "`Err`" + ` value: Os { code: 2, kind: NotFound, message: "No such file or directory" }
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:665:5
   1: core::result::unwrap_failed
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/result.rs:1679:5
   2: parley_import::store::open
             at ./src/store.rs:41:27
note: Some details are omitted, run with ` + "`RUST_BACKTRACE=full`" + ` for a verbose backtrace.`

const dotnetTrace = `System.InvalidOperationException: Sequence contains no matching element
   at System.Linq.ThrowHelper.ThrowNoMatchException()
   at System.Linq.Enumerable.First[TSource](IEnumerable` + "`1" + ` source, Func` + "`2" + ` predicate)
   at Acme.Billing.InvoiceService.Charge(Int32 customerId) in /src/Billing/InvoiceService.cs:line 118
--- End of stack trace from previous location ---
   at Acme.Billing.Jobs.NightlyBilling.RunAsync() in /src/Billing/Jobs/NightlyBilling.cs:line 41`

const payments = `order_id,customer,country,created_at,amount_eur,status
100231,Jana Novak,CZ,2025-02-01T10:22:13Z,149.90,paid
100232,Luis García,ES,2025-02-01T10:25:40Z,89.00,refunded
100233,Ahmed Saleh,DE,2025-02-01T11:02:08Z,1299.00,paid
100234,Mia Keller,CH,2025-02-01T11:15:55Z,45.50,failed
100235,Tom O'Brien,IE,2025-02-01T12:01:31Z,310.25,paid`

const manifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: parley
  labels:
    app: parley
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: parley
          image: ghcr.io/parley-chat/parley:1.4.2
          ports:
            - containerPort: 8080`

const webhook = `{
  "id": "evt_01HQZ3K9T7",
  "type": "invoice.payment_failed",
  "data": {
    "object": {
      "customer": "cus_PxY12ab",
      "amount_due": 4900,
      "currency": "eur",
      "attempt_count": 3,
      "metadata": {"workspace": "acme-eu", "region": "eu-central-1"}
    }
  },
  "livemode": false
}`

const chat = `Anna: The import failed again last night, same error as on Monday.
Ben: Did you check the disk on the worker? It was at 95% last week.
Anna: Yes, plenty of space now. It fails on the first file already.
Ben: Then it's probably the new CSV export from the shop, they changed the amount column.
Anna: That would explain the ValueError. I'll ask them.`

const quoted = `> We moved the import to the new worker on Friday.
> Since then the job fails every night at 02:10 with a ValueError,
> always on the first file of the batch, whatever the file is.
> Rolling back the worker image did not help either.`

const checklist = `- Rename the "Conversations" page to "Chats"
- Show the number of unread messages next to each chat
- Let people pin a chat to the top of the list
- Add a search box above the list that filters as you type
- Keep the scroll position when coming back from a chat
- Show the agent's avatar next to its messages
- Collapse long tool outputs behind a "Show more" link
- Add keyboard shortcuts: j/k to move, Enter to open
- Remember the last opened chat per device`

const mdTable = `| endpoint                  | p50   | p95    | errors |
|---------------------------|-------|--------|--------|
| GET /conversations        | 12 ms | 48 ms  | 0.0 %  |
| GET /conversations/{id}   | 9 ms  | 31 ms  | 0.1 %  |
| POST /messages            | 22 ms | 140 ms | 0.4 %  |`

const ndjson = `{"level":"info","ts":"2025-03-14T09:12:01Z","msg":"server starting","addr":":8080"}
{"level":"warn","ts":"2025-03-14T09:12:02Z","msg":"slow query","ms":812,"table":"events"}
{"level":"error","ts":"2025-03-14T09:12:03Z","msg":"step failed","run":88,"err":"deadline"}`

func TestSplit(t *testing.T) {
	type item struct{ title, mime, content string }
	tests := []struct {
		name       string
		text       string
		wantIntent string
		wantItems  []item
		wantLang   string
	}{
		{
			name:       "JavaTraceAndQuestion",
			text:       "Why does the nightly billing job crash?\n\n" + javaTrace,
			wantIntent: "Why does the nightly billing job crash?",
			wantItems:  []item{{"Stack trace", "text/plain", javaTrace}},
			wantLang:   "en",
		},
		{
			name:       "GoPanicAndQuestion",
			text:       goPanic + "\n\nWhich pointer is nil here, and how do I fix the handler?",
			wantIntent: "Which pointer is nil here, and how do I fix the handler?",
			wantItems:  []item{{"Stack trace", "text/plain", goPanic}},
			wantLang:   "en",
		},
		{
			name:       "PythonTraceback",
			text:       "The importer dies on this file:\n" + pythonTrace + "\nThe CSV comes from the shop export. What changed?",
			wantIntent: "The importer dies on this file:\n\nThe CSV comes from the shop export. What changed?",
			wantItems:  []item{{"Stack trace", "text/plain", pythonTrace}},
			wantLang:   "en",
		},
		{
			name:       "RustPanic",
			text:       rustPanic + "\n\nWhat file is it looking for?",
			wantIntent: "What file is it looking for?",
			wantItems:  []item{{"Stack trace", "text/plain", rustPanic}},
		},
		{
			name:       "DotnetException",
			text:       "Our billing job throws this since the last deploy:\n\n" + dotnetTrace + "\n\nAny idea?",
			wantIntent: "Our billing job throws this since the last deploy:\n\nAny idea?",
			wantItems:  []item{{"Stack trace", "text/plain", dotnetTrace}},
		},
		{
			name:       "CSVAndQuestion",
			text:       "Which of these orders should we refund, and how much in total?\n" + payments,
			wantIntent: "Which of these orders should we refund, and how much in total?",
			wantItems:  []item{{"CSV table", "text/csv", payments}},
			wantLang:   "en",
		},
		{
			name: "GermanQuestionEnglishLog",
			text: "Hallo zusammen, seit dem Update stürzt der Dienst beim Start ab. Könnt ihr euch das Protokoll ansehen und mir sagen, woran es liegt?\n\n" +
				appLog(12),
			wantIntent: "Hallo zusammen, seit dem Update stürzt der Dienst beim Start ab. Könnt ihr euch das Protokoll ansehen und mir sagen, woran es liegt?",
			wantItems:  []item{{"Log excerpt", "text/x-log", appLog(12)}},
			wantLang:   "de",
		},
		{
			name:       "LogNamedByProse",
			text:       "Here is app.log from this morning:\n" + appLog(8) + "\nWhy are the responses so slow?",
			wantIntent: "Here is app.log from this morning:\n\nWhy are the responses so slow?",
			wantItems:  []item{{"app.log", "text/x-log", appLog(8)}},
		},
		{
			name:       "FencedJSONNamedByProse",
			text:       "These are the contents of webhook.json, which our handler rejects:\n\n```json\n" + webhook + "\n```\n\nIs the payload valid?",
			wantIntent: "These are the contents of webhook.json, which our handler rejects:\n\nIs the payload valid?",
			wantItems:  []item{{"webhook.json", "application/json", webhook}},
		},
		{
			name:       "BareJSON",
			text:       "Stripe sent us this:\n" + webhook + "\nShould we retry the charge?",
			wantIntent: "Stripe sent us this:\n\nShould we retry the charge?",
			wantItems:  []item{{"JSON", "application/json", webhook}},
		},
		{
			name:       "JSONLines",
			text:       ndjson + "\nWhich step failed?",
			wantIntent: "Which step failed?",
			wantItems:  []item{{"JSON lines", "application/x-ndjson", ndjson}},
		},
		{
			name:       "FencedCodeWithFileName",
			text:       "Review this please:\n```python import.py\n" + strings.Repeat("print('a fairly long line of python code')\n", 6) + "```",
			wantIntent: "Review this please:",
			wantItems:  []item{{"import.py", "text/x-python", strings.TrimSuffix(strings.Repeat("print('a fairly long line of python code')\n", 6), "\n")}},
		},
		{
			name:       "FencedUnknownLanguage",
			text:       "What does this do?\n~~~elixir\n" + strings.Repeat("IO.puts(\"a fairly long line of elixir code here\")\n", 5) + "~~~",
			wantIntent: "What does this do?",
			wantItems:  []item{{"Code (elixir)", "text/plain", strings.TrimSuffix(strings.Repeat("IO.puts(\"a fairly long line of elixir code here\")\n", 5), "\n")}},
		},
		{
			name:       "YAML",
			text:       "Here is our deployment.yaml:\n\n" + manifest + "\n\nWhy does the rollout hang at one replica?",
			wantIntent: "Here is our deployment.yaml:\n\nWhy does the rollout hang at one replica?",
			wantItems:  []item{{"deployment.yaml", "application/yaml", manifest}},
		},
		{
			name:       "SpeakerTranscript",
			text:       "Summarize what we found out:\n\n" + chat,
			wantIntent: "Summarize what we found out:",
			wantItems:  []item{{"Transcript", "text/plain", chat}},
		},
		{
			name:       "QuotedTranscript",
			text:       "A customer wrote:\n" + quoted + "\nDraft a reply that asks for the file.",
			wantIntent: "A customer wrote:\n\nDraft a reply that asks for the file.",
			wantItems:  []item{{"Transcript", "text/markdown", quoted}},
		},
		{
			name:       "LongList",
			text:       "Plan these for the next sprint:\n" + checklist + "\n\nWhich ones are quick wins?",
			wantIntent: "Plan these for the next sprint:\n\nWhich ones are quick wins?",
			wantItems:  []item{{"List", "text/markdown", checklist}},
		},
		{
			name:       "MarkdownTable",
			text:       "Latency after the release:\n\n" + mdTable + "\n\nIs POST /messages a regression?",
			wantIntent: "Latency after the release:\n\nIs POST /messages a regression?",
			wantItems:  []item{{"Table", "text/markdown", mdTable}},
		},
		{
			name:       "SmallBlockStaysInline",
			text:       "Why does this fail?\n\n```go\nx := m[\"a\"]\n```\n\nIt compiles.",
			wantIntent: "Why does this fail?\n\n```go\nx := m[\"a\"]\n```\n\nIt compiles.",
		},
		{
			name:       "ShortListStaysProse",
			text:       "Steps:\n- open the page\n- click Export\n- wait",
			wantIntent: "Steps:\n- open the page\n- click Export\n- wait",
		},
		{
			name:       "SentencesWithCommasAreNotCSV",
			text:       "Hi, I tried again this morning, with the new build.\nIt failed, as before, on the first file.\nThen I restarted, cleared the cache, and retried.\nCould you take a look, please?",
			wantIntent: "Hi, I tried again this morning, with the new build.\nIt failed, as before, on the first file.\nThen I restarted, cleared the cache, and retried.\nCould you take a look, please?",
		},
		{
			name:       "OnlyBlocks",
			text:       javaTrace,
			wantIntent: noProseIntent,
			wantItems:  []item{{"Stack trace", "text/plain", javaTrace}},
		},
		{
			name:       "WhitespaceTidied",
			text:       "First line.   \n\n\n\n\nSecond line.\r\n\r\n\r\nThird.\n\n\n",
			wantIntent: "First line.\n\nSecond line.\n\nThird.",
		},
		{
			name:       "CRLF",
			text:       strings.ReplaceAll("Why?\n"+javaTrace, "\n", "\r\n"),
			wantIntent: "Why?",
			wantItems:  []item{{"Stack trace", "text/plain", strings.ReplaceAll(javaTrace, "\n", "\r\n")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Split(tt.text)
			if a.Intent != tt.wantIntent {
				t.Errorf("intent:\ngot  %q\nwant %q", a.Intent, tt.wantIntent)
			}
			if len(a.Items) != len(tt.wantItems) {
				for _, it := range a.Items {
					t.Logf("item %q %s %q", it.Title, it.MimeType, it.Content)
				}
				t.Fatalf("got %d items, want %d", len(a.Items), len(tt.wantItems))
			}
			for i, want := range tt.wantItems {
				got := a.Items[i]
				if got.Title != want.title || got.MimeType != want.mime || got.Content != want.content {
					t.Errorf("item %d:\ngot  %q %s %q\nwant %q %s %q", i+1, got.Title, got.MimeType, got.Content, want.title, want.mime, want.content)
				}
			}
			if tt.wantLang != "" && a.Language != tt.wantLang {
				t.Errorf("language: got %q, want %q", a.Language, tt.wantLang)
			}
			if a.Via != "builtin" {
				t.Errorf("via: got %q, want builtin", a.Via)
			}
			assertKept(t, tt.text, a)
			assertVerbatim(t, clean(tt.text), a)
		})
	}
}

const patch = `diff --git a/store/conversation.go b/store/conversation.go
index 3b18e51..a9f0c2d 100644
--- a/store/conversation.go
+++ b/store/conversation.go
@@ -85,7 +85,10 @@ func (db *DB) Conversation(ctx context.Context, id int64) (agent.Conversation, error) {
 	var c agent.Conversation
-	err := db.read.QueryRowContext(ctx, q, id).Scan(&c.ID, &c.Title)
-	return c, err
+	if err := db.read.QueryRowContext(ctx, q, id).Scan(&c.ID, &c.Title); err != nil {
+		return agent.Conversation{}, fmt.Errorf("conversation %d: %w", id, err)
+	}
+	return c, nil
 }`

func TestSplit_Diff(t *testing.T) {
	text := "Is this fix enough?\n\n" + patch + "\n\nThe tests pass."
	a := Split(text)
	if a.Intent != "Is this fix enough?\n\nThe tests pass." || len(a.Items) != 1 {
		t.Fatalf("got intent %q, %d items", a.Intent, len(a.Items))
	}
	if it := a.Items[0]; it.Title != "Diff" || it.MimeType != "text/x-diff" || it.Content != patch {
		t.Errorf("got %q %s %q", it.Title, it.MimeType, it.Content)
	}
}
