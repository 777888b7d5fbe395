package a2aserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	a2a "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
	"github.com/parley-chat/parley/web"
	"github.com/parley-chat/parley/web/inbound/a2aserver"
	"github.com/parley-chat/parley/web/webtest"
)

// The clients of Parley's A2A server, each with a token of its own: their tasks are their
// own, a revoked one is refused and its streams end, and the audit log names them.

// cliActor is who the audit log says made a client in these tests.
const cliActor = "parley a2a-client (command line)"

// a2aServerAt serves the agents over A2A on the database file at path.
func a2aServerAt(t *testing.T, path string, opts a2aserver.Options, agents ...domain.Agent) (*httptest.Server, *store.DB) {
	t.Helper()
	opts.DefaultAgent = agents[0].Info().Name
	s := webtest.ServeA2A(t, storetest.Open(t, path), web.NewServerOptions{Auth: web.AuthOptions{Mode: web.AuthNone}}, &opts, agents...)
	return s.Server, s.DB
}

// holdAgent says "Working", then holds its run, saying what comes on say, until release
// closes (then it finishes) or its run is stopped. started closes once it holds.
func holdAgent(name string, started chan<- struct{}, say <-chan string, release <-chan struct{}) *webtest.Scripted {
	var once sync.Once
	return &webtest.Scripted{Name: name, OnStep: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		out.Text("Working")
		once.Do(func() { close(started) })
		for {
			select {
			case text := <-say:
				out.Text(text)
			case <-release:
				return out.Text(" done.")
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}}
}

// addClient makes an A2A client as `parley a2a-client add` does, and returns its token.
func addClient(t *testing.T, db *store.DB, name string) string {
	t.Helper()
	secret, _, err := db.CreateA2AClient(context.Background(), name, cliActor)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// firstErr reads events up to the first error, which it returns (nil if the events end
// without one).
func firstErr(events iter.Seq2[a2a.Event, error]) error {
	for _, err := range events {
		if err != nil {
			return err
		}
	}
	return nil
}

// rpc posts one v0.3 JSON-RPC request with token, and returns the status and body.
func rpc(t *testing.T, url, token, method, params string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestA2AServer_ClientsSeeOnlyTheirOwnTasks(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	ts, db := a2aServerAt(t, filepath.Join(t.TempDir(), "parley.db"), a2aserver.Options{}, askerAgent(askerQuestion), holdAgent("slow", started, nil, release))
	alphaToken, betaToken := addClient(t, db, "alpha"), addClient(t, db, "beta")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// alpha's two tasks: one waits for an answer; the other works, held in memory by its
	// execution (where the SDK would find it without asking the store).
	alpha, alphaSlow := a2aClientAs(t, ts.URL, "asker", alphaToken), a2aClientAs(t, ts.URL, "slow", alphaToken)
	asked := lastStatus(t, stream(t, alpha, a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Plan the launch"})))
	if asked.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("alpha's task = %s, want input-required", asked.Status.State)
	}
	working := startTask(ctx, alphaSlow, "Go")
	<-started

	beta, betaSlow := a2aClientAs(t, ts.URL, "asker", betaToken), a2aClientAs(t, ts.URL, "slow", betaToken)
	for _, tt := range []struct {
		name string
		c    *a2aclient.Client
		id   a2a.TaskID
	}{{"waiting", beta, asked.TaskID}, {"working", betaSlow, working}} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			notFound := func(method string, err error) {
				t.Helper()
				if !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("beta's %s of alpha's task: got %v, want task not found", method, err)
				}
			}
			_, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: tt.id})
			notFound("tasks/get", err)
			_, err = c.CancelTask(ctx, &a2a.TaskIDParams{ID: tt.id})
			notFound("tasks/cancel", err)
			notFound("tasks/resubscribe", firstErr(c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: tt.id})))
			answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"name": "Mallory", "count": 1}})
			answer.TaskID = tt.id
			_, err = c.SendMessage(ctx, &a2a.MessageSendParams{Message: answer})
			notFound("message/send", err)
			notFound("message/stream", firstErr(c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: answer})))
			_, err = c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigParams{TaskID: tt.id})
			notFound("tasks/pushNotificationConfig/get", err)
		})
	}

	// On the wire, as the A2A spec has it: JSON-RPC error -32001.
	if status, body := rpc(t, ts.URL+"/a2a/asker", betaToken, "tasks/get", fmt.Sprintf(`{"id":%q}`, asked.TaskID)); status != http.StatusOK || !strings.Contains(body, `"code":-32001`) {
		t.Errorf("beta's tasks/get: %d %s, want error -32001", status, body)
	}

	// alpha's tasks are as they were: one still waits for its answer, the other works.
	if task, err := alpha.GetTask(ctx, &a2a.TaskQueryParams{ID: asked.TaskID}); err != nil || task.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("alpha's waiting task = %v, %v; want it still input-required", task, err)
	}
	if task, err := alphaSlow.GetTask(ctx, &a2a.TaskQueryParams{ID: working}); err != nil || task.Status.State != a2a.TaskStateWorking {
		t.Errorf("alpha's working task = %v, %v; want it still working", task, err)
	}

	// beta writing into alpha's context starts a task of its own, in a conversation of its own.
	into := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Plan another launch"})
	into.ContextID = asked.ContextID
	mine := lastStatus(t, stream(t, beta, into))
	if mine.TaskID == asked.TaskID || mine.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("beta's message in alpha's context: task %s %s; want a new task of beta's, asking", mine.TaskID, mine.Status.State)
	}
	_, alphaClient, _ := findClient(t, db, "alpha")
	_, betaClient, _ := findClient(t, db, "beta")
	a, err1 := db.A2ATask(ctx, "asker", alphaClient.ID, string(asked.TaskID))
	b, err2 := db.A2ATask(ctx, "asker", betaClient.ID, string(mine.TaskID))
	if err1 != nil || err2 != nil || a.ConversationID == b.ConversationID {
		t.Errorf("alpha's conversation %d (%v), beta's %d (%v); want two", a.ConversationID, err1, b.ConversationID, err2)
	}
}

// findClient finds a client by name among the clients.
func findClient(t *testing.T, db *store.DB, name string) (bool, domain.A2AClient, error) {
	t.Helper()
	list, err := db.A2AClients(context.Background())
	for _, c := range list {
		if c.Name == name {
			return true, c, err
		}
	}
	return false, domain.A2AClient{}, err
}

func TestA2AServer_RevokedClientIsRefusedAndItsStreamsEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	started, say, release := make(chan struct{}), make(chan string), make(chan struct{})
	defer close(release)
	ts, db := a2aServerAt(t, path, a2aserver.Options{}, holdAgent("slow", started, say, release))
	token, other := addClient(t, db, "alpha"), addClient(t, db, "beta")
	c := a2aClientAs(t, ts.URL, "slow", token)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// Two open streams of alpha's: its task's own, and a resubscription to it.
	ended := make(chan error, 2)
	ids, subscribed := make(chan a2a.TaskID, 1), make(chan struct{})
	follow := func(events iter.Seq2[a2a.Event, error], seen func(a2a.Event)) {
		var last error
		for ev, err := range events {
			if err != nil {
				last = err
				break
			}
			seen(ev)
		}
		ended <- last
	}
	heard := make(chan struct{}, 1) // the task's own stream heard the agent
	go follow(c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Go"})}), func(ev a2a.Event) {
		select {
		case ids <- ev.TaskInfo().TaskID:
		default:
		}
		if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			select {
			case heard <- struct{}{}:
			default:
			}
		}
	})
	id := <-ids
	<-started
	var once sync.Once
	go follow(c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: id}), func(a2a.Event) { once.Do(func() { close(subscribed) }) })
	// The agent speaks, a word each time the task's own stream has heard the last one, until
	// the resubscription hears it too: then it is surely open.
	for open := false; !open; {
		select {
		case say <- " still":
		case err := <-ended:
			t.Fatalf("a stream ended: %v", err)
		}
		select {
		case <-heard:
		case err := <-ended:
			t.Fatalf("a stream ended: %v", err)
		case <-ctx.Done():
			t.Fatal("the task's stream heard nothing")
		}
		select {
		case <-subscribed:
			open = true
		default:
		}
	}

	// `parley a2a-client revoke alpha`, which the server learns from the database alone.
	if _, err := db.RevokeA2AClient(ctx, "alpha", cliActor); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case err := <-ended:
			if err == nil || !strings.Contains(err.Error(), `"alpha" was revoked`) {
				t.Errorf("a stream of the revoked client ended with %v, want an error saying it was revoked", err)
			}
		case <-ctx.Done():
			t.Fatal("a stream of the revoked client is still open")
		}
	}

	// Its next request is refused, saying why; another client goes on.
	if status, body := rpc(t, ts.URL+"/a2a/slow", token, "tasks/get", fmt.Sprintf(`{"id":%q}`, id)); status != http.StatusUnauthorized || !strings.Contains(body, "revoked") {
		t.Errorf("the revoked token's tasks/get: %d %s, want 401 saying it was revoked", status, body)
	}
	if status, body := rpc(t, ts.URL+"/a2a/slow", other, "tasks/get", `{"id":"nope"}`); status != http.StatusOK || !strings.Contains(body, `"code":-32001`) {
		t.Errorf("beta's tasks/get: %d %s, want task not found", status, body)
	}
}

func TestA2AServer_AuditNamesTheClient(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	ts, db := a2aServerAt(t, filepath.Join(t.TempDir(), "parley.db"), a2aserver.Options{}, askerAgent(askerQuestion), holdAgent("slow", started, nil, release))
	token := addClient(t, db, "ci")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	c := a2aClientAs(t, ts.URL, "asker", token)
	asked := lastStatus(t, stream(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Plan the launch"})))
	answer := a2a.NewMessageForTask(a2a.MessageRoleUser, asked, a2a.DataPart{Data: map[string]any{"name": "Apollo", "count": 7}})
	if st := lastStatus(t, stream(t, c, answer)); st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after the answer: %s", st.Status.State)
	}
	slow := a2aClientAs(t, ts.URL, "slow", token)
	id := startTask(ctx, slow, "Go")
	<-started
	if task, err := slow.CancelTask(ctx, &a2a.TaskIDParams{ID: id}); err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel = %v, %v", task, err)
	}

	entries, err := db.AuditLog(ctx, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(entries) - 1; i >= 0; i-- {
		got = append(got, entries[i].Actor+": "+entries[i].Action+" "+entries[i].Detail)
	}
	want := []string{
		cliActor + ": add a2a client ci",
		fmt.Sprintf("a2a client ci: create a2a task task %s of asker", asked.TaskID),
		"a2a client: answer-with-token question 1 answered with a2a client ci",
		fmt.Sprintf("a2a client ci: create a2a task task %s of slow", id),
		fmt.Sprintf("a2a client ci: cancel a2a task task %s", id),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An upgrade from the one shared token: PARLEY_A2A_TOKEN goes on working as the client
// "default", whose tasks other clients do not see; revoked, it stops Parley from starting
// with it rather than coming back.
func TestA2AServer_SharedTokenIsTheDefaultClient(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	open := func() (*webtest.Parley, *store.DB, error) {
		db := storetest.Open(t, path)
		srv, err := webtest.Start(ctx, db, web.NewServerOptions{DB: db, Auth: web.AuthOptions{Mode: web.AuthNone}, Runner: webtest.Runner(db, askerAgent(askerQuestion)), Heartbeat: time.Hour},
			&a2aserver.Options{LegacyToken: "s3cret", DefaultAgent: "asker"})
		return srv, db, err
	}
	srv, db, err := open()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	asked := lastStatus(t, stream(t, a2aClient(t, ts.URL, "asker"), a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Plan the launch"})))
	if asked.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("the shared token's task = %s", asked.Status.State)
	}
	ci := a2aClientAs(t, ts.URL, "asker", addClient(t, db, "ci"))
	if _, err := ci.GetTask(ctx, &a2a.TaskQueryParams{ID: asked.TaskID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("ci reads the default client's task: %v", err)
	}
	if ok, def, _ := findClient(t, db, domain.LegacyA2AClient); !ok || !def.Revoked.IsZero() {
		t.Fatalf("no default client among the clients: %+v", def)
	}

	if _, err := db.RevokeA2AClient(ctx, domain.LegacyA2AClient, cliActor); err != nil {
		t.Fatal(err)
	}
	if status, body := rpc(t, ts.URL+"/a2a/asker", "s3cret", "tasks/get", fmt.Sprintf(`{"id":%q}`, asked.TaskID)); status != http.StatusUnauthorized {
		t.Errorf("the revoked shared token: %d %s, want 401", status, body)
	}
	srv.Shutdown(ctx)
	ts.Close()
	db.Close()
	again, _, err := open()
	again.Shutdown(ctx)
	if err == nil || !strings.Contains(err.Error(), "unset PARLEY_A2A_TOKEN") {
		t.Errorf("a restart with the revoked shared token: %v, want a refusal saying to unset PARLEY_A2A_TOKEN", err)
	}
}
