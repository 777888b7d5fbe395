package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/webtest"
)

// revisions are the MCP revisions Parley serves: each test runs over both.
var revisions = []string{"2026-07-28", "2025-11-25"}

func serve(t *testing.T) *webtest.Server {
	t.Helper()
	return webtest.Serve(t, nil, web.NewServerOptions{MCP: web.MCPOptions{Progress: 50 * time.Millisecond}})
}

// connect is a go-sdk client of Parley's /mcp, as the client named, with the token.
func connect(t *testing.T, s *webtest.Server, rev, token, client string, onProgress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if onProgress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { onProgress(req.Params) }
	}
	c := mcp.NewClient(&mcp.Implementation{Name: strings.ToLower(strings.ReplaceAll(client, " ", "-")), Title: client, Version: "1.0"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL + "/mcp",
		HTTPClient: &http.Client{Transport: webtest.Bearer{Token: token}}}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		t.Fatalf("connect over %s: %v", rev, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != rev {
		t.Fatalf("negotiated %s, want %s", got, rev)
	}
	return cs
}

// call calls a tool and returns its structured result (nil for an error result) and text.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (map[string]any, string, bool) {
	t.Helper()
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	return callWith(t, cs, params)
}

func callWith(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) (map[string]any, string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("call %s: %v", params.Name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return nil, text, true
	}
	var got map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("structured content: %v", err)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil || fmt.Sprint(fromText) != fmt.Sprint(got) {
		t.Fatalf("text content %s is not the structured content %v", text, got)
	}
	return got, text, false
}

// pendingQuestion waits until the person has a pending question in their Inbox, and returns it.
func pendingQuestion(t *testing.T, s *webtest.Server, token string) map[string]any {
	t.Helper()
	var q map[string]any
	webtest.WaitFor(t, "a pending question", func() bool {
		_, body := s.API(t, token, "GET", "/questions", nil)
		qs, _ := body["questions"].([]any)
		if len(qs) == 0 {
			return false
		}
		q = qs[0].(map[string]any)
		return true
	})
	return q
}

func qid(q map[string]any) int64 { return int64(q["id"].(float64)) }

func TestAskPerson_TheAnswerComesBackOverBothRevisions(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := serve(t)
			// Three people ask at once, each from their own client; each gets their own answer.
			people := []string{"ann", "bob", "cy"}
			var wg sync.WaitGroup
			for _, name := range people {
				token := s.Person(t, name, domain.RoleUser)
				cs := connect(t, s, rev, token, "Claude Code", nil)
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, text, isErr := call(t, cs, "ask_person", map[string]any{
						"message":    "Which **branch** should I push to?",
						"fields":     []any{map[string]any{"name": "branch", "label": "Branch", "kind": "text", "required": true}, map[string]any{"name": "force", "kind": "boolean"}},
						"context":    "The CI is green on main.",
						"request_id": "push-1",
					})
					if isErr {
						t.Errorf("%s: error result: %s", name, text)
						return
					}
					if got["outcome"] != "answered" || got["by"] != name || got["at"] == nil {
						t.Errorf("%s: result %s", name, text)
					}
					if v := got["values"].(map[string]any); v["branch"] != "release-"+name || v["force"] != true {
						t.Errorf("%s: values %v", name, v)
					}
					if !strings.Contains(got["url"].(string), fmt.Sprintf("#q-%d", int64(got["question_id"].(float64)))) {
						t.Errorf("%s: url %v does not lead to the card", name, got["url"])
					}
				}()
				q := pendingQuestion(t, s, token)
				if q["asker"] != "Claude Code" || q["message"] != "Which **branch** should I push to?" || q["context"] != "The CI is green on main." {
					t.Fatalf("%s's question as stored: %v", name, q)
				}
				conv := q["conversation"].(map[string]any)
				if conv["title"] != "Questions from Claude Code" || conv["kind"] != "inbound" || conv["agent"] != "" || conv["agent_title"] != "agents over MCP" {
					t.Fatalf("conversation %v: want the person's inbound conversation with the client, of no agent", conv)
				}
				// An invalid answer is refused and loses nothing; then the real one.
				if st, body := s.API(t, token, "POST", fmt.Sprintf("/questions/%d/answer", qid(q)), map[string]any{"values": map[string]any{"branch": ""}}); st != 422 {
					t.Fatalf("empty branch: %d %v", st, body)
				}
				if st, body := s.API(t, token, "POST", fmt.Sprintf("/questions/%d/answer", qid(q)), map[string]any{"values": map[string]any{"branch": "release-" + name, "force": true}}); st != 200 {
					t.Fatalf("answer: %d %v", st, body)
				}
			}
			wg.Wait()
			// The conversation is done (nothing waits) and the audit log names the client.
			entries, err := s.DB.AuditLog(context.Background(), 0, 50)
			if err != nil {
				t.Fatal(err)
			}
			asked := 0
			for _, e := range entries {
				if e.Action == "ask over mcp" && strings.Contains(e.Detail, "from Claude Code with token") {
					asked++
				}
			}
			if asked != len(people) {
				t.Fatalf("audit: %d asks logged, want %d: %v", asked, len(people), entries)
			}
			// The exchanges are on the review desk, with who asked through what, and who answered.
			s.Person(t, "carol", domain.RoleStaff)
			desk := s.Browser(t, "carol")
			page := get(t, desk, s.URL+"/review")
			if strings.Count(page, "Questions from Claude Code") != len(people) {
				t.Fatalf("the review desk lists %d of the MCP conversations: %.3000s", strings.Count(page, "Questions from Claude Code"), page)
			}
			// Their figures are of the agents over MCP, chosen apart from Parley's agents.
			figures := get(t, desk, s.URL+"/review/figures?days=7&kind=inbound")
			if !strings.Contains(figures, `<strong aria-current="page">agents over MCP</strong>`) || !strings.Contains(figures, `href="/review/figures?days=7"`) ||
				!strings.Contains(figures, fmt.Sprintf("%d questions asked", len(people))) {
				t.Errorf("the figures of the agents over MCP: %.3000s", figures)
			}
			timeline := get(t, desk, fmt.Sprintf("%s/c/%d/timeline", s.URL, 1))
			for _, want := range []string{"ask over mcp", "from Claude Code with token", "release-"} {
				if !strings.Contains(timeline, want) {
					t.Errorf("the timeline does not show %q: %.3000s", want, timeline)
				}
			}
		})
	}
}

func TestAskPerson_DeclinedExpiredAndPending(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := serve(t)
			token := s.Person(t, "ann", domain.RoleUser)
			cs := connect(t, s, rev, token, "Codex", nil)
			schema := map[string]any{"type": "object", "properties": map[string]any{
				"budget": map[string]any{"type": "integer", "title": "Budget (EUR)", "minimum": 100},
				"venue":  map[string]any{"type": "string", "enum": []string{"hall", "garden"}},
			}, "required": []string{"budget"}}
			// wait 0s returns at once, pending, with the question asked.
			first, text, _ := call(t, cs, "ask_person", map[string]any{"message": "What budget?", "requestedSchema": schema, "request_id": "budget", "wait": "0s"})
			if first["outcome"] != "pending" || first["by"] != nil {
				t.Fatalf("wait 0s: %s", text)
			}
			// Called again with the same id: the same question, still pending past a short wait.
			again, text, _ := call(t, cs, "ask_person", map[string]any{"message": "What budget?", "requestedSchema": schema, "request_id": "budget", "wait": "100ms"})
			if again["outcome"] != "pending" || again["question_id"] != first["question_id"] {
				t.Fatalf("again: %s (first %v)", text, first["question_id"])
			}
			// The same id with other arguments is the caller's mistake.
			if _, text, isErr := call(t, cs, "ask_person", map[string]any{"message": "What budget now?", "requestedSchema": schema, "request_id": "budget"}); !isErr || !strings.Contains(text, "different question") {
				t.Fatalf("reused id: %v %s", isErr, text)
			}
			_, body := s.API(t, token, "GET", "/questions", nil)
			if n := len(body["questions"].([]any)); n != 1 {
				t.Fatalf("%d questions asked, want 1", n)
			}
			// The person declines with a reason; the next call with the id has it.
			id := int64(first["question_id"].(float64))
			if st, body := s.API(t, token, "POST", fmt.Sprintf("/questions/%d/decline", id), map[string]any{"reason": "Ask Bob."}); st != 200 {
				t.Fatalf("decline: %d %v", st, body)
			}
			got, text, isErr := call(t, cs, "ask_person", map[string]any{"message": "What budget?", "requestedSchema": schema, "request_id": "budget"})
			if isErr || got["outcome"] != "declined" || got["reason"] != "Ask Bob." || got["by"] != "ann" || len(got["values"].(map[string]any)) != 0 {
				t.Fatalf("declined: %s", text)
			}
			// A timeout expires the question, and the waiting call says so.
			got, text, _ = call(t, cs, "ask_person", map[string]any{"message": "Quick: hall or garden?", "requestedSchema": schema, "timeout": "1s"})
			if got["outcome"] != "expired" || got["by"] != "parley" {
				t.Fatalf("timeout: %s", text)
			}
		})
	}
}

func TestAskPerson_BadArgumentsAreToolErrors(t *testing.T) {
	s := serve(t)
	token := s.Person(t, "ann", domain.RoleUser)
	s.Person(t, "bob", domain.RoleUser)
	cs := connect(t, s, revisions[0], token, "script", nil)
	field := []any{map[string]any{"name": "x", "kind": "text"}}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"message": "Both?", "fields": field, "requestedSchema": map[string]any{"type": "object"}}, "both"},
		{map[string]any{"message": "Neither?"}, "neither"},
		{map[string]any{"fields": field}, "message is required"},
		{map[string]any{"message": "Colour?", "fields": []any{map[string]any{"name": "c", "kind": "color"}}}, `kind "color"`},
		{map[string]any{"message": "Who?", "fields": field, "to": "bob"}, `may not ask "bob"`},
		{map[string]any{"message": "Who?", "fields": field, "to": "nobody"}, `may not ask "nobody"`},
		{map[string]any{"message": "When?", "fields": field, "wait": "ten minutes"}, "Go duration"},
		{map[string]any{"message": "When?", "fields": field, "timeout": "-5m"}, "Go duration"},
		{map[string]any{"message": "Key?", "fields": []any{map[string]any{"name": "api_key", "kind": "text"}}}, "will not ask"},
		{map[string]any{"message": "Extra?", "fields": field, "urgency": "high"}, `no argument "urgency"`},
	} {
		if _, text, isErr := call(t, cs, "ask_person", c.args); !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%v: isError %v, %q; want it to say %q", c.args, isErr, text, c.want)
		}
	}
	if _, text, isErr := call(t, cs, "request_approval", map[string]any{"action": "Deploy", "arguments": []any{1}}); !isErr || !strings.Contains(text, "arguments must be a JSON object") {
		t.Errorf("approval with a list: %v %q", isErr, text)
	}
	_, body := s.API(t, token, "GET", "/questions", nil)
	if n := len(body["questions"].([]any)); n != 0 {
		t.Fatalf("bad calls asked %d questions", n)
	}
}

func TestRequestApproval_ApprovedWithEditedArgumentsOrRejected(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := serve(t)
			token := s.Person(t, "ann", domain.RoleUser)
			cs := connect(t, s, rev, token, "CI job", nil)
			args := map[string]any{"action": "Deploy build 1432 to production", "details": "Adds the **invoice** export.",
				"arguments": map[string]any{"build": 1432, "environment": "production", "canary": true}, "request_id": "deploy-1432"}
			done := make(chan map[string]any, 1)
			go func() {
				got, text, isErr := call(t, cs, "request_approval", args)
				if isErr {
					t.Errorf("approval: %s", text)
				}
				done <- got
			}()
			q := pendingQuestion(t, s, token)
			if !strings.Contains(q["message"].(string), "Deploy build 1432 to production") || !strings.Contains(q["message"].(string), "**invoice**") ||
				q["submit_label"] != "Approve" || q["decline_label"] != "Reject" {
				t.Fatalf("approval card: %v", q)
			}
			// The person changes the environment before approving.
			if st, body := s.API(t, token, "POST", fmt.Sprintf("/questions/%d/answer", qid(q)), map[string]any{"values": map[string]any{"build": 1432, "environment": "staging", "canary": true}}); st != 200 {
				t.Fatalf("approve: %d %v", st, body)
			}
			got := <-done
			if got["outcome"] != "approved" || got["approved"] != true || got["by"] != "ann" {
				t.Fatalf("approved: %v", got)
			}
			if a := got["arguments"].(map[string]any); a["environment"] != "staging" || a["build"] != float64(1432) || a["canary"] != true {
				t.Fatalf("approved arguments %v", a)
			}
			// Rejected with a reason: not approved, and the reason comes back.
			args["request_id"], args["wait"] = "deploy-1433", "0s"
			call(t, cs, "request_approval", args)
			q = pendingQuestion(t, s, token)
			if st, body := s.API(t, token, "POST", fmt.Sprintf("/questions/%d/decline", qid(q)), map[string]any{"reason": "Not on a Friday."}); st != 200 {
				t.Fatalf("reject: %d %v", st, body)
			}
			delete(args, "wait")
			got, text, _ := call(t, cs, "request_approval", args)
			if got["outcome"] != "rejected" || got["approved"] != false || got["reason"] != "Not on a Friday." || got["arguments"] != nil {
				t.Fatalf("rejected: %s", text)
			}
		})
	}
}

func TestAskPerson_WaitingSendsProgressAndShutdownLeavesTheQuestion(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := serve(t)
			token := s.Person(t, "ann", domain.RoleUser)
			progress := make(chan *mcp.ProgressNotificationParams, 100)
			cs := connect(t, s, rev, token, "goose", func(p *mcp.ProgressNotificationParams) { progress <- p })
			params := &mcp.CallToolParams{Name: "ask_person", Arguments: map[string]any{"message": "Ready?", "fields": []any{map[string]any{"name": "ok", "kind": "boolean"}}, "request_id": "ready"}}
			params.SetProgressToken("tok-1")
			done := make(chan map[string]any, 1)
			go func() {
				got, _, _ := callWith(t, cs, params)
				done <- got
			}()
			for range 2 {
				select {
				case p := <-progress:
					if p.ProgressToken != "tok-1" || !strings.Contains(p.Message, "Waiting for ann") {
						t.Fatalf("progress %+v", p)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no progress notification while waiting")
				}
			}
			// Parley stops: the waiting call ends at once, pending; the question stays asked.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown with a call waiting: %v", err)
			}
			select {
			case got := <-done:
				if got["outcome"] != "pending" {
					t.Fatalf("at shutdown: %v", got)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the waiting call outlived the shutdown")
			}
			rec, err := s.DB.Question(context.Background(), 1)
			if err != nil || !rec.Pending() {
				t.Fatalf("question after shutdown: %+v %v", rec, err)
			}
		})
	}
}

func TestMCP_RefusesWithoutTokenAndFromOtherSites(t *testing.T) {
	s := serve(t)
	token := s.Person(t, "ann", domain.RoleUser)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(auth, origin string) *http.Response {
		req, _ := http.NewRequest("POST", s.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, auth := range []string{"", "Bearer parley_nope", "Basic YW5uOnB3"} {
		resp := post(auth, "")
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer realm="parley"` {
			t.Errorf("auth %q: %d %q", auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if resp := post("Bearer "+token, "https://evil.example"); resp.StatusCode != 403 {
		t.Errorf("another site's page: %d", resp.StatusCode)
	}
	if resp := post("Bearer "+token, s.URL); resp.StatusCode != 200 {
		t.Errorf("Parley's own page: %d", resp.StatusCode)
	}
	if resp := post("Bearer "+token, ""); resp.StatusCode != 200 {
		t.Errorf("a program: %d", resp.StatusCode)
	}
	// A revoked token is refused from then on.
	u, _, _ := s.DB.UserByName(context.Background(), "ann")
	if _, err := s.DB.RevokeToken(context.Background(), u.ID, "ann-laptop"); err != nil {
		t.Fatal(err)
	}
	if resp := post("Bearer "+token, ""); resp.StatusCode != 401 {
		t.Errorf("revoked token: %d", resp.StatusCode)
	}
}

func TestAskPerson_RequestIDsArePerPerson(t *testing.T) {
	s := serve(t)
	ann, bob := s.Person(t, "ann", domain.RoleUser), s.Person(t, "bob", domain.RoleUser)
	annCS, bobCS := connect(t, s, revisions[0], ann, "Claude Code", nil), connect(t, s, revisions[1], bob, "Claude Code", nil)
	args := map[string]any{"message": "Name?", "fields": []any{map[string]any{"name": "name", "kind": "text"}}, "request_id": "same", "wait": "0s"}
	a, _, _ := call(t, annCS, "ask_person", args)
	q := pendingQuestion(t, s, ann)
	if st, _ := s.API(t, ann, "POST", fmt.Sprintf("/questions/%d/answer", qid(q)), map[string]any{"values": map[string]any{"name": "Ann's secret plan"}}); st != 200 {
		t.Fatal(st)
	}
	// Bob, with Ann's request id: his own question, pending, never her answer.
	b, text, _ := call(t, bobCS, "ask_person", args)
	if b["outcome"] != "pending" || b["question_id"] == a["question_id"] || strings.Contains(text, "secret plan") {
		t.Fatalf("bob got %s", text)
	}
	// Nor can Bob read or answer Ann's question by its id.
	if st, _ := s.API(t, bob, "GET", fmt.Sprintf("/questions/%d", qid(q)), nil); st != 404 {
		t.Fatalf("bob reads ann's question: %d", st)
	}
	got, _, _ := call(t, annCS, "ask_person", args)
	if got["outcome"] != "answered" || got["values"].(map[string]any)["name"] != "Ann's secret plan" {
		t.Fatalf("ann: %v", got)
	}
}

// group makes the group with its members (and askers, who may only ask it).
func group(t *testing.T, s *webtest.Server, name string, members []string, askers ...string) {
	t.Helper()
	if _, err := s.DB.AddToGroup(context.Background(), name, members, domain.RoleMember, "operator"); err != nil {
		t.Fatal(err)
	}
	if len(askers) > 0 {
		if _, err := s.DB.AddToGroup(context.Background(), name, askers, domain.RoleAsker, "operator"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAskPerson_AGroupQuestionIsInEveryMembersInboxAndAnsweredOnce(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := serve(t)
			ann := s.Person(t, "ann", domain.RoleUser)
			tokens := map[string]string{"bob": s.Person(t, "bob", domain.RoleUser), "cy": s.Person(t, "cy", domain.RoleUser)}
			eve := s.Person(t, "eve", domain.RoleUser)
			group(t, s, "ops", []string{"bob", "cy"}, "ann")
			cs := connect(t, s, rev, ann, "CI job", nil)
			done := make(chan map[string]any, 1)
			go func() {
				got, text, isErr := call(t, cs, "ask_person", map[string]any{"message": "Which **runner** pool?", "to": "ops", "request_id": "pool",
					"fields": []any{map[string]any{"name": "pool", "kind": "select", "options": []any{"small", "large"}, "required": true}}})
				if isErr {
					t.Errorf("group question: %s", text)
				}
				done <- got
			}()
			// Both members have it in their Inbox; ann (who may only ask ops) and eve do not.
			q := pendingQuestion(t, s, tokens["bob"])
			if c := pendingQuestion(t, s, tokens["cy"]); qid(c) != qid(q) || c["to"] != "ops" {
				t.Fatalf("cy's inbox: %v", c)
			}
			for who, token := range map[string]string{"ann": ann, "eve": eve} {
				if _, body := s.API(t, token, "GET", "/questions", nil); len(body["questions"].([]any)) != 0 {
					t.Fatalf("%s's inbox holds the group's question", who)
				}
			}
			if st, _ := s.API(t, eve, "GET", fmt.Sprintf("/questions/%d", qid(q)), nil); st != 404 {
				t.Fatalf("eve reads ops' question: %d", st)
			}
			// Ann asked it for ops: she does not answer it herself.
			if st, _ := s.API(t, ann, "POST", fmt.Sprintf("/questions/%d/answer", qid(q)), map[string]any{"values": map[string]any{"pool": "small"}}); st != 403 {
				t.Fatalf("ann answers ops' question: %d", st)
			}
			// Bob and cy answer at once: one answer is stored, the other is told it came late.
			statuses := make(chan string, 2)
			for who, pool := range map[string]string{"bob": "small", "cy": "large"} {
				go func() {
					st, _ := s.API(t, tokens[who], "POST", fmt.Sprintf("/questions/%d/answer", qid(q)), map[string]any{"values": map[string]any{"pool": pool}})
					statuses <- fmt.Sprintf("%s:%d", who, st)
				}()
			}
			a, b := <-statuses, <-statuses
			winner := ""
			for _, st := range []string{a, b} {
				if strings.HasSuffix(st, ":200") {
					winner = strings.TrimSuffix(st, ":200")
				}
			}
			if winner == "" || !(strings.HasSuffix(a, ":409") || strings.HasSuffix(b, ":409")) {
				t.Fatalf("answers at once: %s, %s", a, b)
			}
			got := <-done
			want := map[string]string{"bob": "small", "cy": "large"}[winner]
			if got["outcome"] != "answered" || got["by"] != winner || got["values"].(map[string]any)["pool"] != want {
				t.Fatalf("result %v, want %s's answer %s", got, winner, want)
			}
			for _, token := range tokens {
				if _, body := s.API(t, token, "GET", "/questions", nil); len(body["questions"].([]any)) != 0 {
					t.Fatal("the answered question is still in an Inbox")
				}
			}
			// Deleting the group calls off its questions still waiting: ann is told, and they
			// do not fall to her to answer.
			again := map[string]any{"message": "And the cache pool?", "to": "ops", "request_id": "cache", "wait": "0s",
				"fields": []any{map[string]any{"name": "pool", "kind": "text"}}}
			call(t, cs, "ask_person", again)
			if err := s.DB.RemoveFromGroup(context.Background(), "ops", nil, "carol"); err != nil {
				t.Fatal(err)
			}
			if got, text, _ := call(t, cs, "ask_person", again); got["outcome"] != "cancelled" || got["reason"] != "The group ops was deleted." {
				t.Fatalf("after ops was deleted: %s", text)
			}
			if _, body := s.API(t, ann, "GET", "/questions", nil); len(body["questions"].([]any)) != 0 {
				t.Fatal("the deleted group's question fell to ann")
			}
			group(t, s, "ops", []string{"bob", "cy"}, "ann")
			// Eve belongs to no group: asking ops is refused, and asking a person is too.
			evecs := connect(t, s, rev, eve, "script", nil)
			for _, to := range []string{"ops", "bob", "nobody"} {
				_, text, isErr := call(t, evecs, "ask_person", map[string]any{"message": "Hi?", "to": to, "fields": []any{map[string]any{"name": "x", "kind": "text"}}})
				if !isErr || !strings.Contains(text, fmt.Sprintf("may not ask %q", to)) {
					t.Fatalf("eve asks %s: %v %s", to, isErr, text)
				}
			}
		})
	}
}

func TestRequestApproval_TwoOfThreeDistinctApprovers(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := serve(t)
			tokens := map[string]string{}
			for _, p := range []string{"ann", "bob", "cy", "dee"} {
				tokens[p] = s.Person(t, p, domain.RoleUser)
			}
			group(t, s, "release", []string{"bob", "cy", "dee"}, "ann")
			cs := connect(t, s, rev, tokens["ann"], "Claude Code", nil)
			args := map[string]any{"action": "Drop the table invoices_old", "to": "release", "approvals": 2, "request_id": "drop",
				"arguments": map[string]any{"table": "invoices_old", "backup": true}}
			if _, text, isErr := call(t, cs, "request_approval", map[string]any{"action": "x", "to": "release", "approvals": 4}); !isErr || !strings.Contains(text, "3 members") {
				t.Fatalf("4 of 3: %v %s", isErr, text)
			}
			if _, text, isErr := call(t, cs, "request_approval", map[string]any{"action": "x", "approvals": 2}); !isErr || !strings.Contains(text, "group") {
				t.Fatalf("2 approvals of oneself: %v %s", isErr, text)
			}
			args["wait"] = "0s"
			first, _, _ := call(t, cs, "request_approval", args)
			id := int64(first["question_id"].(float64))
			answer := func(who string, values map[string]any) int {
				st, _ := s.API(t, tokens[who], "POST", fmt.Sprintf("/questions/%d/answer", id), map[string]any{"values": values})
				return st
			}
			// Ann asked: she does not approve it herself.
			if st := answer("ann", map[string]any{"table": "invoices_old", "backup": true}); st != 403 {
				t.Fatalf("ann approves her own request: %d", st)
			}
			// Bob approves without backup; approving twice does not count twice.
			edited := map[string]any{"table": "invoices_old", "backup": false}
			if st := answer("bob", edited); st != 200 {
				t.Fatalf("bob approves: %d", st)
			}
			if st := answer("bob", edited); st != 409 {
				t.Fatalf("bob approves again: %d", st)
			}
			// Cy approves the proposal as it was: not the same approval, it waits on.
			if st := answer("cy", map[string]any{"table": "invoices_old", "backup": true}); st != 200 {
				t.Fatalf("cy approves: %d", st)
			}
			if got, text, _ := call(t, cs, "request_approval", args); got["outcome"] != "pending" {
				t.Fatalf("after bob's and cy's different approvals: %s", text)
			}
			_, q := s.API(t, tokens["dee"], "GET", fmt.Sprintf("/questions/%d", id), nil)
			if len(q["approved"].([]any)) != 2 || q["state"] != "pending" {
				t.Fatalf("the question shows its approvals: %v", q)
			}
			// Dee approves what bob approved: two of them, it is approved so.
			if st := answer("dee", edited); st != 200 {
				t.Fatalf("dee approves: %d", st)
			}
			delete(args, "wait")
			got, text, _ := call(t, cs, "request_approval", args)
			if got["approved"] != true || got["by"] != "bob, dee" || got["arguments"].(map[string]any)["backup"] != false {
				t.Fatalf("two of three: %s", text)
			}
			// A member who asks two of the others: the members besides them count, and their
			// own approval does not.
			bobcs := connect(t, s, rev, tokens["bob"], "Claude Code", nil)
			if _, text, isErr := call(t, bobcs, "request_approval", map[string]any{"action": "x", "to": "release", "approvals": 3}); !isErr || !strings.Contains(text, "2 members besides you") {
				t.Fatalf("3 of bob's 2 colleagues: %v %s", isErr, text)
			}
			own, _, _ := call(t, bobcs, "request_approval", map[string]any{"action": "Rotate the keys", "to": "release", "approvals": 2, "wait": "0s"})
			if st, _ := s.API(t, tokens["bob"], "POST", fmt.Sprintf("/questions/%v/answer", own["question_id"]), map[string]any{"values": map[string]any{}}); st != 403 {
				t.Fatalf("bob approves his own request: %d", st)
			}
			// One rejection rejects, whatever the approvals before it.
			args["request_id"], args["wait"] = "drop-2", "0s"
			second, _, _ := call(t, cs, "request_approval", args)
			id = int64(second["question_id"].(float64))
			if st := answer("bob", map[string]any{"table": "invoices_old", "backup": true}); st != 200 {
				t.Fatalf("approve: %d", st)
			}
			if st, _ := s.API(t, tokens["cy"], "POST", fmt.Sprintf("/questions/%d/decline", id), map[string]any{"reason": "Keep it a week."}); st != 200 {
				t.Fatalf("reject: %d", st)
			}
			delete(args, "wait")
			got, text, _ = call(t, cs, "request_approval", args)
			if got["approved"] != false || got["outcome"] != "rejected" || got["by"] != "cy" || got["reason"] != "Keep it a week." {
				t.Fatalf("rejected after an approval: %s", text)
			}
		})
	}
}

// sseLines opens an SSE stream and returns its lines as they come, until the test ends.
func sseLines(t *testing.T, client *http.Client, url string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d", url, resp.StatusCode)
	}
	lines := make(chan string, 1000)
	go func() {
		defer resp.Body.Close()
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

func TestAskPerson_AGroupMembersPagesCountItLive(t *testing.T) {
	s := serve(t)
	ann := s.Person(t, "ann", domain.RoleUser)
	s.Person(t, "bob", domain.RoleUser)
	cy := s.Person(t, "cy", domain.RoleUser)
	group(t, s, "ops", []string{"bob", "cy"}, "ann")
	cs := connect(t, s, revisions[0], ann, "Claude Code", nil)
	// Bob's open page: its live stream says first that nothing waits.
	live := sseLines(t, s.Browser(t, "bob"), s.URL+"/live?c=0")
	webtest.WaitLine(t, live, `data-waiting="0"`)
	// Ann's agent asks ops: bob's page counts the question...
	got, _, _ := call(t, cs, "ask_person", map[string]any{"message": "Which pool?", "to": "ops", "wait": "0s",
		"fields": []any{map[string]any{"name": "x", "kind": "text"}}})
	webtest.WaitLine(t, live, `data-waiting="1"`)
	// ...and hears it answered by cy.
	if st, _ := s.API(t, cy, "POST", fmt.Sprintf("/questions/%v/answer", got["question_id"]), map[string]any{"values": map[string]any{"x": "large"}}); st != 200 {
		t.Fatalf("cy answers: %d", st)
	}
	webtest.WaitLine(t, live, `data-waiting="0"`)
}

// get is a page, as the client's person sees it.
func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d", url, resp.StatusCode)
	}
	return string(b)
}

// Under every way of signing in, /mcp takes the same personal tokens, and only them.
func TestMCP_TokensUnderEveryAuthMode(t *testing.T) {
	for _, auth := range []web.AuthOptions{{Mode: web.AuthNone}, {Mode: web.AuthProxy, ProxyHeaders: []string{"X-Forwarded-User"},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}} {
		t.Run(auth.Mode, func(t *testing.T) {
			s := webtest.Serve(t, nil, web.NewServerOptions{Auth: auth})
			token := s.Person(t, "ann", domain.RoleUser)
			req, _ := http.NewRequest("POST", s.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("X-Forwarded-User", "ann") // a proxy's word is not a token
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer realm="parley"` {
				t.Fatalf("without a token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
			cs := connect(t, s, revisions[1], token, "script", nil)
			if _, text, isErr := call(t, cs, "ask_person", map[string]any{"message": "Hi?", "wait": "0s", "fields": []any{map[string]any{"name": "x", "kind": "text"}}}); isErr {
				t.Fatalf("with a token: %s", text)
			}
		})
	}
}

// Whoever asks never answers their own question to a group, even as a member and with one
// approval asked (the default): over /mcp as for an agent's approvers.
func TestGroupQuestions_TheAskerNeverAnswersThem(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			s := serve(t)
			tokens := map[string]string{}
			for _, p := range []string{"ann", "bob", "solo"} {
				tokens[p] = s.Person(t, p, domain.RoleUser)
			}
			group(t, s, "ops", []string{"ann", "bob"})
			group(t, s, "alone", []string{"solo"})
			cs := connect(t, s, rev, tokens["ann"], "Claude Code", nil)
			restart := map[string]any{"action": "Restart the API", "to": "ops", "wait": "0s", "request_id": "restart"}
			approval, _, _ := call(t, cs, "request_approval", restart)
			question, _, _ := call(t, cs, "ask_person", map[string]any{"message": "Which region?", "to": "ops", "wait": "0s",
				"fields": []any{map[string]any{"name": "region", "kind": "text"}}})
			for i, q := range []map[string]any{approval, question} {
				values := []map[string]any{{}, {"region": "eu"}}[i]
				path := fmt.Sprintf("/questions/%v", q["question_id"])
				if st, body := s.API(t, tokens["ann"], "POST", path+"/answer", map[string]any{"values": values}); st != 403 {
					t.Errorf("ann answers her own %s: %d %v", path, st, body)
				}
				if st, _ := s.API(t, tokens["ann"], "POST", path+"/decline", map[string]any{"reason": "no"}); st != 403 {
					t.Errorf("ann declines her own %s: %d", path, st)
				}
				if _, body := s.API(t, tokens["ann"], "GET", "/questions", nil); len(body["questions"].([]any)) != 0 {
					t.Errorf("ann's Inbox holds her own group question")
				}
				if st, _ := s.API(t, tokens["bob"], "POST", path+"/answer", map[string]any{"values": values}); st != 200 {
					t.Errorf("bob answers %s: %d", path, st)
				}
			}
			if got, text, _ := call(t, cs, "request_approval", restart); got["outcome"] != "approved" || got["by"] != "bob" {
				t.Errorf("the approval: %s", text)
			}
			// A group of the asker alone has nobody to answer.
			solocs := connect(t, s, rev, tokens["solo"], "script", nil)
			for _, tool := range []string{"ask_person", "request_approval"} {
				args := map[string]any{"message": "?", "action": "x", "to": "alone", "fields": []any{map[string]any{"name": "x", "kind": "text"}}}
				if tool == "ask_person" {
					delete(args, "action")
				} else {
					delete(args, "message")
					delete(args, "fields")
				}
				if _, text, isErr := call(t, solocs, tool, args); !isErr || !strings.Contains(text, "no members besides you") {
					t.Errorf("%s to a group of oneself: %v %s", tool, isErr, text)
				}
			}
		})
	}
}
