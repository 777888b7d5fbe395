package a2aserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	a2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/a2av1"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/inbound/a2aserver"
	"github.com/parley-chat/parley/web/webtest"
)

// newA2AServer serves the agents over A2A, the first the default, with the shared token
// "s3cret", to one person without sign-in.
func newA2AServer(t *testing.T, structured bool, agents ...domain.Agent) *webtest.Server {
	t.Helper()
	return webtest.ServeA2A(t, nil, web.NewServerOptions{Auth: web.AuthOptions{Mode: web.AuthNone}},
		&a2aserver.Options{LegacyToken: "s3cret", StructuredOutput: structured, DefaultAgent: agents[0].Info().Name}, agents...)
}

func a2aClient(t *testing.T, base, agentName string) *a2aclient.Client {
	t.Helper()
	return a2aClientAs(t, base, agentName, "s3cret")
}

// a2aClientAs is an A2A client of the agent that sends token.
func a2aClientAs(t *testing.T, base, agentName, token string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	card, err := agentcard.NewResolver(http.DefaultClient).Resolve(ctx, base+"/a2a/"+agentName)
	if err != nil {
		t.Fatalf("agent card: %v", err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: webtest.Bearer{Token: token}}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// a2aClientV1 is a2aClient speaking A2A v1.0: every request and answer is v1.0 on the wire.
func a2aClientV1(t *testing.T, base, agentName string) *a2aclient.Client {
	t.Helper()
	card := &a2a.AgentCard{URL: base + "/a2a/" + agentName, PreferredTransport: a2a.TransportProtocolJSONRPC, Capabilities: a2a.AgentCapabilities{Streaming: true}}
	c, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: &a2av1.Transport{Next: webtest.Bearer{Token: "s3cret"}}}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// stream sends a message and collects the events up to the final one.
func stream(t *testing.T, c *a2aclient.Client, msg *a2a.Message) []a2a.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []a2a.Event
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		out = append(out, ev)
	}
	return out
}

func lastStatus(t *testing.T, evs []a2a.Event) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if s, ok := evs[i].(*a2a.TaskStatusUpdateEvent); ok {
			return s
		}
	}
	t.Fatalf("no status event in %v", evs)
	return nil
}

func TestA2AServer_QuestionAnswerAndCompletion(t *testing.T) {
	for _, tt := range []struct {
		structured bool
		version    string
	}{{false, "0.3"}, {true, "0.3"}, {false, "1.0"}, {true, "1.0"}} {
		name := "text final result, v" + tt.version
		if tt.structured {
			name = "structured final result, v" + tt.version
		}
		structured := tt.structured
		t.Run(name, func(t *testing.T) {
			ts := newA2AServer(t, structured, askerAgent(askerQuestion))
			c := a2aClient(t, ts.URL, "asker")
			if tt.version == a2av1.Version {
				c = a2aClientV1(t, ts.URL, "asker")
			}

			evs := stream(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Plan the launch"}))
			st := lastStatus(t, evs)
			if st.Status.State != a2a.TaskStateInputRequired {
				t.Fatalf("state = %s, want input-required", st.Status.State)
			}
			var sawPartial bool
			for _, ev := range evs {
				if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && (a.Artifact.Name == "partial_result" || a.Append) {
					sawPartial = true
				}
			}
			if !sawPartial {
				t.Error("no partial_result artifact for the streamed text")
			}
			parts := st.Status.Message.Parts
			data, ok := parts[0].(a2a.DataPart)
			if !ok {
				t.Fatalf("first part = %T, want a DataPart", parts[0])
			}
			fields := data.Data["metadata"].(map[string]any)["input_fields"].([]any)
			if len(fields) != 3 || data.Data["require_user_input"] != true {
				t.Fatalf("question data = %v", data.Data)
			}
			if txt, ok := parts[1].(a2a.TextPart); !ok || !strings.HasPrefix(txt.Text, "UserInputMetaData:") {
				t.Fatalf("second part = %v, want UserInputMetaData text", parts[1])
			}

			// A bad answer is asked again, naming the field.
			bad := a2a.NewMessageForTask(a2a.MessageRoleUser, st, a2a.DataPart{Data: map[string]any{"name": "ab", "count": 3}})
			evs = stream(t, c, bad)
			st = lastStatus(t, evs)
			if st.Status.State != a2a.TaskStateInputRequired || !strings.Contains(st.Status.Message.Parts[1].(a2a.TextPart).Text, "at least 3") {
				t.Fatalf("after a bad answer: %s %v", st.Status.State, st.Status.Message)
			}

			good := a2a.NewMessageForTask(a2a.MessageRoleUser, st, a2a.DataPart{Data: map[string]any{"name": "Apollo", "count": 7}}, a2a.TextPart{Text: "name: Apollo, count: 7"})
			evs = stream(t, c, good)
			if st := lastStatus(t, evs); st.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("state = %s, want completed", st.Status.State)
			}
			var last *a2a.TaskArtifactUpdateEvent
			for _, ev := range evs {
				if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
					last = a
				}
			}
			if last == nil || last.Artifact.Name != "final_result" {
				t.Fatalf("the task did not end on a final_result artifact: %+v", last)
			}
			switch p := last.Artifact.Parts[0].(type) {
			case a2a.DataPart:
				if !structured || p.Data["is_task_complete"] != true || !strings.Contains(p.Data["content"].(string), "name Apollo") {
					t.Fatalf("final DataPart = %v (structured %v)", p.Data, structured)
				}
			case a2a.TextPart:
				if structured || !strings.Contains(p.Text, "name Apollo") {
					t.Fatalf("final TextPart = %q (structured %v)", p.Text, structured)
				}
			default:
				t.Fatalf("final part %T", p)
			}
		})
	}
}

func TestA2AServer_NeedsTheToken(t *testing.T) {
	ts := newA2AServer(t, false, askerAgent(askerQuestion))
	resp, err := http.Post(ts.URL+"/a2a/asker", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401", resp.StatusCode)
	}
	card, err := http.Get(ts.URL + "/.well-known/agent-card.json")
	if err != nil || card.StatusCode != 200 {
		t.Fatalf("agent card: %v %v", card.StatusCode, err)
	}
	card.Body.Close()
}

func TestA2AServer_TaskSurvivesRestartAndShowsAsAConversation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	open := func() (*httptest.Server, *webtest.Parley, *store.DB) {
		db := storetest.Open(t, path)
		srv, err := webtest.Start(context.Background(), db, web.NewServerOptions{DB: db, Auth: web.AuthOptions{Mode: web.AuthNone}, Runner: webtest.Runner(db, askerAgent(askerQuestion)), Heartbeat: time.Hour},
			&a2aserver.Options{LegacyToken: "s3cret", DefaultAgent: "asker"})
		if err != nil {
			t.Fatal(err)
		}
		return httptest.NewServer(srv), srv, db
	}
	ts, srv, db := open()
	c := a2aClient(t, ts.URL, "asker")
	st := lastStatus(t, stream(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Plan the launch"})))
	if st.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("state = %s", st.Status.State)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	ts.Close()
	db.Close()

	ts, srv, db = open()
	defer func() { srv.Shutdown(ctx); ts.Close() }()
	c = a2aClient(t, ts.URL, "asker")
	task, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: st.TaskID})
	if err != nil || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task after restart = %+v, %v", task, err)
	}
	answer := a2a.NewMessageForTask(a2a.MessageRoleUser, st, a2a.DataPart{Data: map[string]any{"values": map[string]any{"name": "Gemini", "count": 2}}})
	if st := lastStatus(t, stream(t, c, answer)); st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s, want completed", st.Status.State)
	}
	list, _, _ := db.ListConversations(ctx, domain.ConversationFilter{Limit: 10})
	if len(list) != 1 || list[0].State != domain.StateDone || list[0].Title != "Plan the launch" {
		t.Fatalf("conversations = %+v, want the A2A task as a done conversation", list)
	}
}

func TestA2AServer_TextAnswersAndChangingTheSubject(t *testing.T) {
	ts := newA2AServer(t, false, askerAgent(askerQuestion))
	c := a2aClient(t, ts.URL, "asker")
	st := lastStatus(t, stream(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Plan the launch"})))

	// A client that only writes text answers with "name: value" lines.
	answer := a2a.NewMessageForTask(a2a.MessageRoleUser, st, a2a.TextPart{Text: "Project name: Apollo\nHead count: 4"})
	if got := lastStatus(t, stream(t, c, answer)); got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after a text answer: %s %v", got.Status.State, got.Status.Message)
	}

	// Text that answers nothing is a new message: the question is superseded, not asked again with errors.
	st = lastStatus(t, stream(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Another launch"})))
	other := a2a.NewMessageForTask(a2a.MessageRoleUser, st, a2a.TextPart{Text: "Never mind, what can you do?"})
	got := lastStatus(t, stream(t, c, other))
	if got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after changing the subject: %s %v", got.Status.State, got.Status.Message)
	}
}

func TestA2AServer_ResubscribeAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	open := func(a domain.Agent) (*httptest.Server, *webtest.Parley, *store.DB) {
		db := storetest.Open(t, path)
		srv, err := webtest.Start(context.Background(), db, web.NewServerOptions{DB: db, Auth: web.AuthOptions{Mode: web.AuthNone}, Runner: webtest.Runner(db, a), Heartbeat: time.Hour},
			&a2aserver.Options{LegacyToken: "s3cret", DefaultAgent: "slow"})
		if err != nil {
			t.Fatal(err)
		}
		return httptest.NewServer(srv), srv, db
	}
	started := make(chan struct{})
	hang := &webtest.Scripted{Name: "slow", OnStep: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		out.Text("Thinking")
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}}
	ts, srv, db := open(hang)
	c := a2aClient(t, ts.URL, "slow")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	taskID := startTask(ctx, c, "Go")
	<-started
	srv.Shutdown(ctx)
	ts.Close()
	db.Close()

	done := &webtest.Scripted{Name: "slow", OnStep: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		return out.Text("Finished after the restart.")
	}}
	ts, srv, _ = open(done)
	defer func() { srv.Shutdown(ctx); ts.Close() }()
	c = a2aClient(t, ts.URL, "slow")
	// The restarted server took the task up again: it is working, or done already, never failed.
	task, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: taskID})
	if err != nil || (task.Status.State != a2a.TaskStateWorking && task.Status.State != a2a.TaskStateCompleted) {
		t.Fatalf("task after restart = %v, %v; want it working or completed", task, err)
	}
	var state a2a.TaskState
	var text strings.Builder
	collect := func(parts a2a.ContentParts) {
		for _, p := range parts {
			if tp, ok := p.(a2a.TextPart); ok {
				text.WriteString(tp.Text)
			}
		}
	}
	for ev, err := range c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: taskID}) {
		if err != nil {
			t.Fatalf("resubscribe: %v", err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			state = e.Status.State
			for _, a := range e.Artifacts {
				collect(a.Parts)
			}
		case *a2a.TaskStatusUpdateEvent:
			state = e.Status.State
		case *a2a.TaskArtifactUpdateEvent:
			collect(e.Artifact.Parts)
		}
	}
	if state != a2a.TaskStateCompleted || !strings.Contains(text.String(), "Finished after the restart.") {
		t.Fatalf("resubscribe ended %s, text %q", state, text.String())
	}
	if task, _ := c.GetTask(ctx, &a2a.TaskQueryParams{ID: taskID}); task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task = %s, want completed", task.Status.State)
	}
}

func TestA2AServer_CancelStopsTheAgent(t *testing.T) {
	started := make(chan struct{})
	hang := &webtest.Scripted{Name: "slow", OnStep: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		out.Text("Working")
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}}
	ts := newA2AServer(t, false, hang)
	c := a2aClient(t, ts.URL, "slow")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id := startTask(ctx, c, "Go")
	<-started
	task, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: id})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel = %v, %v", task, err)
	}
	// The run ended stopped, and the task reads as cancelled from the conversation's log.
	for {
		task, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State == a2a.TaskStateCanceled {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("task = %s, want canceled", task.Status.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(ts.URL + "/c/1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `class="retry-box stopped"`) {
		t.Fatalf("the conversation does not show the run stopped:\n%.3000s", b)
	}
}

// startTask sends a message in the background and returns its task's id once it is known;
// the stream goes on until ctx ends.
func startTask(ctx context.Context, c *a2aclient.Client, text string) a2a.TaskID {
	ids := make(chan a2a.TaskID, 1)
	go func() {
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})}) {
			if err != nil {
				return
			}
			if s, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
				select {
				case ids <- s.TaskID:
				default:
				}
			}
		}
	}()
	return <-ids
}

func TestA2AServer_FilesBecomeDocuments(t *testing.T) {
	ts := newA2AServer(t, false, readerAgent())
	c := a2aClient(t, ts.URL, "reader")
	log := "10:00:01 ERROR disk full\n10:00:02 INFO retry\n"
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "What happened?"},
		a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{Name: "node.log", MimeType: "text/plain"}, Bytes: base64.StdEncoding.EncodeToString([]byte(log))}})
	evs := stream(t, c, msg)
	st := lastStatus(t, evs)
	if st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state = %s, want completed", st.Status.State)
	}
	all, _ := json.Marshal(evs)
	reply := strings.Builder{}
	reply.Write(all)
	if !strings.Contains(reply.String(), `node.log starts with \"10:00:01 ERROR disk full\"`) {
		t.Fatalf("reply = %q, want the agent to have read the file", reply.String())
	}

	bad := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "And this?"},
		a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{Name: "core"}, Bytes: base64.StdEncoding.EncodeToString([]byte("\x7fELF\x00\x00"))}})
	st = lastStatus(t, stream(t, c, bad))
	why, _ := json.Marshal(st.Status.Message)
	if st.Status.State != a2a.TaskStateFailed || !strings.Contains(string(why), "core cannot be attached") {
		t.Fatalf("binary file: state %s %v", st.Status.State, st.Status.Message)
	}
}

// An agent is served over A2A when its access lets Parley's a2a account in: "everyone", or
// "person:a2a". The others have no card and no endpoint, as agents that do not exist.
func TestA2AServer_OnlyAgentsA2AClientsMayUse(t *testing.T) {
	db := storetest.New(t)
	open, named, staff := askerAgent(askerQuestion), askerAgent(askerQuestion), askerAgent(askerQuestion)
	open.Name, named.Name, staff.Name = "open", "named", "ops-only"
	policies := map[string]domain.Policy{"named": {Access: domain.Access{"person:a2a"}}, "ops-only": {Access: domain.Access{"group:ops", "staff"}}}
	ts := webtest.ServeA2A(t, db, web.NewServerOptions{Auth: web.AuthOptions{Mode: web.AuthNone}, Runner: webtest.RunnerWith(db, policies, open, named, staff)},
		&a2aserver.Options{LegacyToken: "s3cret", DefaultAgent: "ops-only"}, open, named, staff)
	for name, want := range map[string]int{"open": 200, "named": 200, "ops-only": 404} {
		resp, err := http.Get(ts.URL + "/a2a/" + name + "/.well-known/agent-card.json")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s's card = %d, want %d", name, resp.StatusCode, want)
		}
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/a2a/"+name, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-`+name+`","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`))
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set("Content-Type", "application/json")
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("message/send to %s = %d, want %d", name, resp.StatusCode, want)
		}
		if want == 200 {
			// Served, it works as any agent does: the asker asks.
			evs := stream(t, a2aClient(t, ts.URL, name), a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Plan it"}))
			if st := lastStatus(t, evs); st.Status.State != a2a.TaskStateInputRequired {
				t.Errorf("%s over A2A ended %s: %+v", name, st.Status.State, st.Status.Message)
			}
		}
	}
	// The default card is the default agent's: not there for A2A clients.
	if resp, err := http.Get(ts.URL + "/.well-known/agent-card.json"); err != nil || resp.StatusCode != 404 {
		t.Errorf("the default card of an agent A2A clients may not use = %v, %v", resp.StatusCode, err)
	}
	// No conversation was started with the agent kept from them.
	list, _, err := db.ListConversations(context.Background(), domain.ConversationFilter{Agent: "ops-only"})
	if err != nil || len(list) != 0 {
		t.Errorf("conversations with ops-only: %d, %v", len(list), err)
	}
}
