package toolserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/toolserver"
	"github.com/parley-chat/parley/toolserver/demo"
	"github.com/parley-chat/parley/toolserver/mcptest"
)

// TestMain lets the test binary be the demo server over stdio, as an agent's command.
func TestMain(m *testing.M) {
	if os.Getenv("PARLEY_TEST_MCP_DEMO") == "1" {
		s := demo.New(demo.Options{Step: 20 * time.Millisecond})
		_, stop, err := s.ServePages("127.0.0.1:0")
		if err != nil {
			os.Exit(2)
		}
		defer stop()
		if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// stdioServer is the demo over stdio: this test binary, started again.
func stdioServer(name string) toolserver.ServerConfig {
	// GORACE: a test binary built with -race sleeps a second as it exits, and its guard too.
	return toolserver.ServerConfig{Name: name, Command: os.Args[0], Env: map[string]string{"PARLEY_TEST_MCP_DEMO": "1", "GORACE": "atexit_sleep_ms=0"}}
}

// httpServer is the demo over Streamable HTTP, answering only with the headers Parley must send.
func httpServer(t *testing.T, name string) (toolserver.ServerConfig, *demo.Server) {
	cfg, s := mcptest.HTTPDemo(t, name, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/mcp" && (r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Team") != "infra") {
				http.Error(w, "who are you?", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	cfg.Bearer, cfg.Headers = "s3cret", map[string]string{"X-Team": "infra"}
	return cfg, s
}

func startPool(t *testing.T, servers ...toolserver.ServerConfig) *toolserver.Pool {
	t.Helper()
	return mcptest.Pool(t, servers...)
}

func call(t *testing.T, p *toolserver.Pool, c toolserver.Call) toolserver.Result {
	t.Helper()
	res, err := p.Call(context.Background(), c)
	if err != nil {
		t.Fatalf("call %s: %v", c.Tool, err)
	}
	return res
}

// eachTransport runs a test against the demo over stdio and over HTTP.
func eachTransport(t *testing.T, f func(t *testing.T, p *toolserver.Pool, server string)) {
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		f(t, startPool(t, stdioServer("demo")), "demo")
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		cfg, _ := httpServer(t, "remote")
		f(t, startPool(t, cfg), "remote")
	})
}

func TestToolsAreNamespacedWithTheirSchemas(t *testing.T) {
	eachTransport(t, func(t *testing.T, p *toolserver.Pool, server string) {
		tools, missing := p.Tools()
		if len(missing) > 0 {
			t.Fatalf("missing: %+v", missing)
		}
		tool, ok := p.Tool(server + "__deploy")
		if !ok {
			t.Fatalf("no %s__deploy among %d tools", server, len(tools))
		}
		if tool.Tool != "deploy" || tool.Server != server || tool.Schema["type"] != "object" {
			t.Errorf("tool = %+v", tool)
		}
		if req, _ := tool.Schema["required"].([]any); len(req) != 1 || req[0] != "service" {
			t.Errorf("schema lost its required list: %v", tool.Schema)
		}
	})
}

func TestResultsOfEveryKindAreShownAndToldToTheModel(t *testing.T) {
	eachTransport(t, func(t *testing.T, p *toolserver.Pool, server string) {
		res := call(t, p, toolserver.Call{Server: server, Tool: "lookup", Arguments: json.RawMessage(`{"word":"parley"}`)})
		if len(res.Content) != 3 || res.Content[0].Type != "text" || res.Content[1].Type != "image" || res.Content[2].Type != "resource_link" {
			t.Fatalf("content = %+v", res.Content)
		}
		if res.Content[1].MIME != "image/png" || res.Content[1].Data == "" {
			t.Errorf("image = %+v", res.Content[1])
		}
		for _, want := range []string{"parley: a word of 6 letters.", "[image, image/png", "Resource link: dictionary entry <https://example.com/dictionary/parley>"} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("model text lacks %q:\n%s", want, res.Text)
			}
		}
	})
}

func TestAFormOfEveryFieldKindMapsAndItsAnswerGoesBack(t *testing.T) {
	eachTransport(t, func(t *testing.T, p *toolserver.Pool, server string) {
		res := call(t, p, toolserver.Call{Server: server, Tool: "book_table"})
		if !res.NeedsInput() || len(res.Inputs) != 1 {
			t.Fatalf("result = %+v", res)
		}
		in := res.Inputs[0]
		if in.Mode != "form" || in.Refusal != "" {
			t.Fatalf("input = %+v", in)
		}
		q := in.Question
		if q.Asker != toolserver.Asker(server) || q.Message != "Which table should I book?" || !q.AllowCancel {
			t.Errorf("question = %+v", q)
		}
		byName := map[string]domain.Field{}
		var order []string
		for _, f := range q.Fields {
			byName[f.Name] = f
			order = append(order, f.Name)
		}
		// Required fields first, in the order of "required".
		if got := strings.Join(order[:4], ","); got != "name,date,party_size,seating" {
			t.Errorf("order = %v", order)
		}
		check := func(name string, kind domain.FieldKind, ok bool) {
			t.Helper()
			f := byName[name]
			if f.Kind != kind || !ok {
				t.Errorf("%s = %+v", name, f)
			}
		}
		f := byName
		check("date", domain.KindDate, f["date"].Required)
		check("arrival", domain.KindText, f["arrival"].Format == domain.FormatDateTime && !f["arrival"].Required)
		check("party_size", domain.KindInteger, *f["party_size"].Min == 1 && *f["party_size"].Max == 12 && f["party_size"].Default == float64(2))
		check("budget", domain.KindNumber, *f["budget"].Min == 0 && *f["budget"].Max == 500)
		check("seating", domain.KindSelect, len(f["seating"].Options) == 2 && f["seating"].Options[1].Label == "On the terrace")
		check("cuisine", domain.KindSelect, f["cuisine"].Options[0] == domain.Option{Value: "it", Label: "Italian"})
		check("diets", domain.KindMultiselect, len(f["diets"].Options) == 3 && *f["diets"].MaxItems == 2)
		check("name", domain.KindText, *f["name"].MinLength == 2 && *f["name"].MaxLength == 40 && f["name"].Label == "Name for the booking")
		check("notes", domain.KindTextarea, *f["notes"].MaxLength == 1000)
		check("menu_url", domain.KindText, f["menu_url"].Format == domain.FormatURI)
		check("high_chair", domain.KindBoolean, f["high_chair"].Default == false)

		values := map[string][]string{"name": {"Ada"}, "date": {"2026-12-24"}, "party_size": {"4"}, "seating": {"terrace"},
			"cuisine": {"jp"}, "diets": {"vegan", "gluten-free"}, "budget": {"42.5"}, "arrival": {"2026-12-24T19:30"},
			"menu_url": {"https://example.com/menu"}, "high_chair": {"true"}}
		typed, errs := domain.Validate(q, values)
		if errs != nil {
			t.Fatal(errs)
		}
		r, err := toolserver.Respond(in, domain.Resolution{Outcome: domain.Answered, Values: typed})
		if err != nil {
			t.Fatal(err)
		}
		done := call(t, p, toolserver.Call{Server: server, Tool: "book_table", Responses: map[string]toolserver.Response{in.ID: r}, State: res.State})
		want := "Booked: arrival=2026-12-24T19:30:00Z, budget=42.5, cuisine=jp, date=2026-12-24, diets=[vegan gluten-free], high_chair=true, menu_url=https://example.com/menu, name=Ada, party_size=4, seating=terrace."
		if done.Text != want {
			t.Errorf("result = %q\nwant     %q", done.Text, want)
		}
	})
}

func TestDeclineAndCancelReachTheServer(t *testing.T) {
	p := startPool(t, stdioServer("demo"))
	for outcome, want := range map[domain.Outcome]string{domain.Declined: "decline", domain.Cancelled: "cancel", domain.Expired: "cancel"} {
		res := call(t, p, toolserver.Call{Server: "demo", Tool: "book_table"})
		r, err := toolserver.Respond(res.Inputs[0], domain.Resolution{Outcome: outcome})
		if err != nil {
			t.Fatal(err)
		}
		done := call(t, p, toolserver.Call{Server: "demo", Tool: "book_table", Responses: map[string]toolserver.Response{"details": r}, State: res.State})
		if done.Text != "No table booked: the person chose "+want+"." {
			t.Errorf("%s: %q", outcome, done.Text)
		}
	}
}

func TestATwoQuestionCallCarriesItsStateAcrossAFreshServer(t *testing.T) {
	// The first answer travels in the request state: the second round goes to another
	// process, as after a restart of Parley, and still ends well.
	first := startPool(t, stdioServer("demo"))
	res := call(t, first, toolserver.Call{Server: "demo", Tool: "deploy", Arguments: json.RawMessage(`{"service":"api"}`)})
	env := res.Inputs[0]
	if env.ID != "environment" || env.Question.Fields[0].Kind != domain.KindSelect {
		t.Fatalf("first question = %+v", env)
	}
	r, _ := toolserver.Respond(env, domain.Resolution{Outcome: domain.Answered, Values: map[string]any{"environment": "production"}})
	res = call(t, first, toolserver.Call{Server: "demo", Tool: "deploy", Arguments: json.RawMessage(`{"service":"api"}`),
		Responses: map[string]toolserver.Response{"environment": r}, State: res.State})
	if !res.NeedsInput() || res.Inputs[0].ID != "version" || res.Inputs[0].Question.Message != "Which version of api goes to production?" {
		t.Fatalf("second round = %+v", res)
	}
	first.Close()

	second := startPool(t, stdioServer("demo"))
	r, _ = toolserver.Respond(res.Inputs[0], domain.Resolution{Outcome: domain.Answered, Values: map[string]any{"version": "1.4.2"}})
	done := call(t, second, toolserver.Call{Server: "demo", Tool: "deploy", Arguments: json.RawMessage(`{"service":"api"}`),
		Responses: map[string]toolserver.Response{"version": r}, State: res.State})
	if done.Text != "Deployed api 1.4.2 to production." {
		t.Errorf("result = %q", done.Text)
	}
}

func TestAnswersThatDoNotFitTheSchemaAreNotSent(t *testing.T) {
	p := startPool(t, stdioServer("demo"))
	res := call(t, p, toolserver.Call{Server: "demo", Tool: "book_table"})
	_, err := toolserver.Respond(res.Inputs[0], domain.Resolution{Outcome: domain.Answered, Values: map[string]any{"party_size": int64(40)}})
	if err == nil {
		t.Fatal("an answer outside the schema was accepted")
	}
}

func TestSecretsAndUnshowableFormsAreDeclinedWithAReason(t *testing.T) {
	p := startPool(t, stdioServer("demo"))
	res := call(t, p, toolserver.Call{Server: "demo", Tool: "ask_secret"})
	if len(res.Inputs) != 1 || !strings.Contains(res.Inputs[0].Refusal, domain.SecretRefusal) {
		t.Fatalf("inputs = %+v", res.Inputs)
	}
	// A required field Parley will not ask declines the whole form, saying why.
	for property, want := range map[string]string{
		`"contact":{"type":"string","format":"email"}`:            domain.EmailRefusal,
		`"address":{"type":"object","properties":{}}`:             `the required field "address" is of the type "object"`,
		`"tags":{"type":"array","items":{"type":"string"}}`:       "a list of something other than choices",
		`"pin":{"type":"string","writeOnly":true}`:                "write-only",
		`"n":{"type":"number","exclusiveMinimum":0}`:              "exclusiveMinimum",
		`"n":{"type":"string","enum":[1,2]}`:                      "not all strings",
		`"github_token":{"type":"string","title":"GitHub token"}`: domain.SecretRefusal,
	} {
		name := property[1 : strings.Index(property[1:], `"`)+1]
		schema := fmt.Sprintf(`{"type":"object","properties":{"note":{"type":"string"},%s},"required":[%q]}`, property, name)
		if _, refusal := toolserver.FormQuestion("demo", "m", json.RawMessage(schema), false); !strings.Contains(refusal, want) {
			t.Errorf("%s: refusal %q, want it to say %q", schema, refusal, want)
		}
		// Optional, it is left out: the card says which and why, and the rest is asked.
		schema = fmt.Sprintf(`{"type":"object","properties":{"note":{"type":"string"},%s}}`, property)
		q, refusal := toolserver.FormQuestion("demo", "m", json.RawMessage(schema), false)
		if refusal != "" || len(q.Fields) != 1 || q.Fields[0].Name != "note" || len(q.Refused) != 1 || q.Refused[0].Name != name {
			t.Errorf("%s optional: refusal %q, question %+v", property, refusal, q)
		}
		// Alone, nothing would be left to ask: the form is declined.
		schema = fmt.Sprintf(`{"type":"object","properties":{%s}}`, property)
		if _, refusal := toolserver.FormQuestion("demo", "m", json.RawMessage(schema), false); refusal == "" {
			t.Errorf("%s alone: asked a form with nothing in it", property)
		}
	}
	q, refusal := toolserver.FormQuestion("demo", "m", json.RawMessage(`{"type":"object","properties":{"contact":{"type":"string","format":"email"}}}`), true)
	if refusal != "" || q.Fields[0].Format != domain.FormatEmail {
		t.Errorf("with allow_email: %q %+v", refusal, q.Fields)
	}
}

func TestURLModeOpensAPageAndTheServerSaysWhenItIsDone(t *testing.T) {
	eachTransport(t, func(t *testing.T, _ *toolserver.Pool, server string) {
		var cfg toolserver.ServerConfig
		if server == "demo" {
			cfg = stdioServer("demo")
		} else {
			cfg, _ = httpServer(t, server)
		}
		completed := make(chan string, 4)
		p := mcptest.PoolWith(t, toolserver.Options{Servers: []toolserver.ServerConfig{cfg}}, func(p *toolserver.Pool) {
			p.OnComplete(func(srv string, id int64) { completed <- fmt.Sprintf("%s %d", srv, id) })
		})

		// An input request of mode url.
		res := call(t, p, toolserver.Call{Server: server, Tool: "connect_account"})
		in := res.Inputs[0]
		if in.Mode != "url" || !strings.Contains(in.Question.Link, "/connect?id=signin-") || in.ElicitationID == "" {
			t.Fatalf("input = %+v", in)
		}
		p.Awaiting(server, in.ElicitationID, 7)
		visit(t, in.Question.Link)
		if server == "demo" {
			// Over stateless HTTP the server has no session to send the notification on.
			if got := waitFor(t, completed); got != server+" 7" {
				t.Errorf("completed = %q", got)
			}
		}
		r, _ := toolserver.Respond(in, domain.Resolution{Outcome: domain.Answered})
		done := call(t, p, toolserver.Call{Server: server, Tool: "connect_account", Responses: map[string]toolserver.Response{in.ID: r}, State: res.State})
		if done.Text != "Calendar connected." {
			t.Errorf("result = %q", done.Text)
		}

		// URLElicitationRequired (-32042): ask, then send the call again as it was.
		res = call(t, p, toolserver.Call{Server: server, Tool: "sync_calendar"})
		if !res.Retry || len(res.Inputs) != 1 || res.Inputs[0].Mode != "url" {
			t.Fatalf("result = %+v", res)
		}
		p.Awaiting(server, res.Inputs[0].ElicitationID, 8)
		visit(t, res.Inputs[0].Question.Link)
		if server == "demo" {
			if got := waitFor(t, completed); got != server+" 8" {
				t.Errorf("completed = %q", got)
			}
		}
		if done := call(t, p, toolserver.Call{Server: server, Tool: "sync_calendar"}); done.Text != "Synced 3 events." {
			t.Errorf("after the page: %q", done.Text)
		}
	})
}

func waitFor(t *testing.T, c <-chan string) string {
	t.Helper()
	select {
	case s := <-c:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("no notification came")
		return ""
	}
}

func visit(t *testing.T, u string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestProgressIsReportedWhileTheToolRuns(t *testing.T) {
	eachTransport(t, func(t *testing.T, p *toolserver.Pool, server string) {
		var mu sync.Mutex
		var seen []domain.ToolProgress
		res := call(t, p, toolserver.Call{Server: server, Tool: "count_slowly", Arguments: json.RawMessage(`{"n":5}`),
			Progress: func(pr domain.ToolProgress) { mu.Lock(); seen = append(seen, pr); mu.Unlock() }})
		if res.Text != "Counted to 5." {
			t.Errorf("result = %q", res.Text)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) < 3 || seen[0].Total != 5 || !strings.HasPrefix(seen[0].Message, "counted 1 of 5") {
			t.Errorf("progress = %+v", seen)
		}
	})
}

func TestASlowToolTimesOut(t *testing.T) {
	cfg := stdioServer("demo")
	cfg.Timeout = 100 * time.Millisecond
	p := startPool(t, cfg)
	_, err := p.Call(context.Background(), toolserver.Call{Server: "demo", Tool: "count_slowly", Arguments: json.RawMessage(`{"n":50}`)})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 100ms") {
		t.Fatalf("err = %v", err)
	}
	// The server is still there for the next call.
	if res := call(t, p, toolserver.Call{Server: "demo", Tool: "lookup", Arguments: json.RawMessage(`{"word":"ok"}`)}); !strings.HasPrefix(res.Text, "ok:") {
		t.Errorf("next call = %q", res.Text)
	}
}

func TestACrashedServerIsReportedAndStartedAgain(t *testing.T) {
	p := startPool(t, stdioServer("demo"))
	_, err := p.Call(context.Background(), toolserver.Call{Server: "demo", Tool: "crash"})
	if err == nil {
		t.Fatal("a crashing call succeeded")
	}
	// It comes back by itself, and serves again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := p.Call(context.Background(), toolserver.Call{Server: "demo", Tool: "lookup", Arguments: json.RawMessage(`{"word":"back"}`)})
		if err == nil && strings.HasPrefix(res.Text, "back:") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not come back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAServerThatCannotStartIsAProblemNamingAgentAndServer(t *testing.T) {
	p := startPool(t, toolserver.ServerConfig{Name: "ghost", Command: "/nonexistent/mcp-server"}, stdioServer("demo"))
	problems := p.Problems()
	if len(problems) != 1 || !strings.Contains(problems[0], `agent "helper": tool server "ghost" (/nonexistent/mcp-server)`) {
		t.Fatalf("problems = %q", problems)
	}
	tools, missing := p.Tools()
	if len(missing) != 1 || missing[0].Server != "ghost" || len(tools) == 0 {
		t.Errorf("tools %d, missing %+v", len(tools), missing)
	}
	if server, tool, ok := p.ServerOf("ghost__anything"); !ok || server != "ghost" || tool != "anything" {
		t.Errorf("ServerOf = %q %q %v", server, tool, ok)
	}
}

func TestSettingsAreChecked(t *testing.T) {
	for _, c := range []struct {
		cfg  toolserver.ServerConfig
		want string
	}{
		{toolserver.ServerConfig{Command: "x"}, "name is required"},
		{toolserver.ServerConfig{Name: "a b", Command: "x"}, "letters, digits"},
		{toolserver.ServerConfig{Name: "a"}, "command (a local server) or url"},
		{toolserver.ServerConfig{Name: "a", Command: "x", URL: "http://h"}, "not both"},
		{toolserver.ServerConfig{Name: "a", URL: "ftp://h"}, "must be an http"},
		{toolserver.ServerConfig{Name: "a", URL: "http://h", Env: map[string]string{"A": "b"}}, "are for a command"},
		{toolserver.ServerConfig{Name: "a", Command: "x", Bearer: "t"}, "are for a url"},
		{toolserver.ServerConfig{Name: "a", Command: "x", ApproveTools: []string{"t"}, ReadOnly: []string{"t"}}, "both in approve_tools and in read_only"},
	} {
		_, err := toolserver.NewPool(toolserver.Options{Agent: "helper", Servers: []toolserver.ServerConfig{c.cfg}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestStoppingALocalServerStopsWhatItStarted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfg := stdioServer("demo")
	cfg.Command, cfg.Args = "/bin/sh", []string{"-c", "sleep 300 & echo $! > " + pidFile + "; exec " + os.Args[0]}
	p := startPool(t, cfg)
	if _, missing := p.Tools(); len(missing) > 0 {
		t.Fatalf("missing: %+v", missing)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	proc := "/proc/" + strings.TrimSpace(string(b))
	if _, err := os.Stat(proc); err != nil {
		t.Fatalf("the grandchild is not running: %v", err)
	}
	p.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, err := os.ReadFile(proc + "/status")
		if err != nil || strings.Contains(string(status), "State:\tZ") {
			break // gone, or a zombie waiting for its reaper
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's child outlived it")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
