package toolserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/toolserver"
	"github.com/parley-chat/parley/toolserver/demo"
	"github.com/parley-chat/parley/toolserver/mcptest"
)

// statefulDemo serves the demo over a stateful Streamable HTTP handler (MCP 2025-11-25: its
// tools ask in the middle of the call) and counts the sessions clients end (DELETE).
func statefulDemo(t *testing.T, name string) (toolserver.ServerConfig, *demo.Server, *atomic.Int32) {
	t.Helper()
	s := demo.New(demo.Options{Step: 10 * time.Millisecond})
	var ended atomic.Int32
	h := s.StatefulHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			ended.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.SetPages(srv.URL)
	return toolserver.ServerConfig{Name: name, URL: srv.URL + "/mcp"}, s, &ended
}

func TestCallsOfAnOlderHTTPServerEachGetASessionAndTheRestWait(t *testing.T) {
	cfg, _, ended := statefulDemo(t, "old")
	cfg.MaxSessions = 2
	p := mcptest.PoolWith(t, toolserver.Options{Servers: []toolserver.ServerConfig{cfg}, IdleSession: 100 * time.Millisecond}, nil)
	envs := []string{"staging", "production", "staging"}
	asked := make(chan int, len(envs))
	release := make(chan struct{})
	var waits sync.Map
	results := make([]toolserver.Result, len(envs))
	var wg sync.WaitGroup
	for i, env := range envs {
		wg.Go(func() {
			res, err := p.Call(context.Background(), toolserver.Call{Server: "old", Tool: "deploy", Arguments: json.RawMessage(fmt.Sprintf(`{"service":"svc-%d"}`, i)),
				Live: func(ctx context.Context, in toolserver.Input) (toolserver.Response, error) {
					if in.Question.Message != fmt.Sprintf("Where should svc-%d go?", i) {
						t.Errorf("call %d was asked %q", i, in.Question.Message)
					}
					asked <- i
					<-release
					return toolserver.Respond(in, domain.Resolution{Outcome: domain.Answered, Values: map[string]any{"environment": env}})
				},
				Wait: func(why string) { waits.Store(i, why) }})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			results[i] = res
		})
	}
	// Two sessions ask at once; the third call waits for one, and says so.
	got := []int{<-asked, <-asked}
	waiting := slices.DeleteFunc([]int{0, 1, 2}, func(i int) bool { return slices.Contains(got, i) })[0]
	deadline := time.Now().Add(10 * time.Second)
	for {
		if why, _ := waits.Load(waiting); why == "a free session of the tool server (all 2 are in use)" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %d never said it waits for a session", waiting)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if third := <-asked; third != waiting {
		t.Errorf("asked %d, want %d", third, waiting)
	}
	wg.Wait()
	// Each answer went back in its own call: the server's next question names both.
	for i, env := range envs {
		if in := results[i].Inputs; len(in) != 1 || in[0].Question.Message != fmt.Sprintf("Which version of svc-%d goes to %s?", i, env) {
			t.Errorf("call %d: %+v", i, results[i])
		}
	}
	// The session started for a call goes once no call used it for a while; the first stays.
	for deadline := time.Now().Add(10 * time.Second); ended.Load() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sessions ended: %d, want 1", ended.Load())
		}
	}
	if len(p.Problems()) != 0 {
		t.Errorf("problems = %q", p.Problems())
	}
}

func TestProgressOfCallsAtOnceReachesEachItsOwn(t *testing.T) {
	p := startPool(t, everything(t, "ref"))
	var wg sync.WaitGroup
	for _, steps := range []int{3, 5} {
		wg.Go(func() {
			var mu sync.Mutex
			var seen []domain.ToolProgress
			res, err := p.Call(context.Background(), toolserver.Call{Server: "ref", Tool: "trigger-long-running-operation",
				Arguments: json.RawMessage(fmt.Sprintf(`{"duration":1,"steps":%d}`, steps)),
				Progress:  func(pr domain.ToolProgress) { mu.Lock(); seen = append(seen, pr); mu.Unlock() }})
			if err != nil {
				t.Error(err)
				return
			}
			if !strings.Contains(res.Text, fmt.Sprintf("Steps: %d.", steps)) {
				t.Errorf("result = %q", res.Text)
			}
			mu.Lock()
			defer mu.Unlock()
			// The last report may come after the result (a notification and a response race).
			if len(seen) < steps-1 {
				t.Errorf("%d steps: progress %+v", steps, seen)
			}
			for _, pr := range seen {
				if pr.Total != float64(steps) {
					t.Errorf("%d steps: got the progress of another call: %+v", steps, pr)
				}
			}
		})
	}
	wg.Wait()
}

func TestALiveURLQuestionIsAnsweredByTheServersWordThatItIsDone(t *testing.T) {
	cfg, _, _ := statefulDemo(t, "old")
	completed := make(chan string, 1)
	p := mcptest.PoolWith(t, toolserver.Options{Servers: []toolserver.ServerConfig{cfg}}, func(p *toolserver.Pool) {
		p.OnComplete(func(srv string, id int64) { completed <- fmt.Sprintf("%s %d", srv, id) })
	})
	res := call(t, p, toolserver.Call{Server: "old", Tool: "connect_account", Live: func(_ context.Context, in toolserver.Input) (toolserver.Response, error) {
		if in.Mode != "url" || in.ElicitationID == "" {
			t.Errorf("asked = %+v", in)
		}
		p.Awaiting("old", in.ElicitationID, 9) // as the card does once it asked
		visit(t, in.Question.Link)
		if got := waitFor(t, completed); got != "old 9" {
			t.Errorf("completed = %q", got)
		}
		return toolserver.Respond(in, domain.Resolution{Outcome: domain.Answered})
	}})
	if res.Text != "Calendar connected." {
		t.Errorf("result = %+v", res)
	}
}

func TestAServersNewToolsAreListedAgain(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "growing", Version: "1"}, nil)
	hello := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello"}}}, nil
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	s.AddTool(&sdk.Tool{Name: "first", InputSchema: schema}, hello)
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	p := startPool(t, toolserver.ServerConfig{Name: "grow", URL: srv.URL})
	s.AddTool(&sdk.Tool{Name: "second", InputSchema: schema}, hello)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := p.Tool("grow__second"); ok {
			break
		}
		if time.Now().After(deadline) {
			tools, _ := p.Tools()
			t.Fatalf("tools = %+v", tools)
		}
	}
	if res := call(t, p, toolserver.Call{Server: "grow", Tool: "second"}); res.Text != "hello" {
		t.Errorf("result = %q", res.Text)
	}
}

func TestAQuestionForACallCutOffNeverReachesTheNextCall(t *testing.T) {
	// A server of 2025-11-25 whose tools go on after their call was cut off, and ask then.
	p := startPool(t, need(t)(mcptest.Node("stub", "testdata/stubborn.mjs")))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := p.Call(ctx, toolserver.Call{Server: "stub", Tool: "first", Live: func(context.Context, toolserver.Input) (toolserver.Response, error) {
		t.Error("the first call was asked after it ended")
		return toolserver.Response{Action: "cancel"}, nil
	}}); err == nil {
		t.Fatal("the first call was not cut off")
	}
	// The next call starts before the first call's question comes.
	var asked []string
	res := call(t, p, toolserver.Call{Server: "stub", Tool: "second", Live: func(_ context.Context, in toolserver.Input) (toolserver.Response, error) {
		asked = append(asked, in.Question.Message)
		return toolserver.Response{Action: "accept", Content: map[string]any{"ok": true}}, nil
	}})
	if !slices.Equal(asked, []string{"A question for the second call"}) || res.Text != "the second call got accept" {
		t.Errorf("the second call was asked %q, and got %q", asked, res.Text)
	}
	if len(p.Problems()) != 0 {
		t.Errorf("problems = %q", p.Problems())
	}
}

func TestACallStoppedWhileItWaitsForASessionSaysItStillWaited(t *testing.T) {
	cfg, _, _ := statefulDemo(t, "old")
	cfg.MaxSessions = 1
	p := startPool(t, cfg)
	asked, release, first := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(first)
		_, _ = p.Call(context.Background(), toolserver.Call{Server: "old", Tool: "deploy", Arguments: json.RawMessage(`{"service":"api"}`),
			Live: func(ctx context.Context, in toolserver.Input) (toolserver.Response, error) {
				close(asked)
				<-release
				return toolserver.Response{Action: "cancel"}, nil
			}})
	}()
	defer func() { close(release); <-first }()
	<-asked
	ctx, cancel := context.WithCancelCause(context.Background())
	var told []string
	_, err := p.Call(ctx, toolserver.Call{Server: "old", Tool: "deploy", Arguments: json.RawMessage(`{"service":"web"}`),
		Wait: func(why string) {
			told = append(told, why)
			cancel(domain.ErrStopped) // the person stops the run
		}})
	// The card stays "waiting for a free session": the call never ran, and Retry runs it.
	if !errors.Is(err, domain.ErrStopped) || !slices.Equal(told, []string{"a free session of the tool server (all 1 are in use)"}) {
		t.Errorf("err = %v, told %q", err, told)
	}
}
