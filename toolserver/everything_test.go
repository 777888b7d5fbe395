package toolserver_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/toolserver"
	"github.com/parley-chat/parley/toolserver/mcptest"
)

// everything is the MCP project's reference server (@modelcontextprotocol/server-everything,
// pinned in package.json) over stdio. It speaks 2025-11-25: its tools ask in the middle of
// the call, with requests that do not say which call they are for.
func everything(t *testing.T, name string) toolserver.ServerConfig {
	t.Helper()
	return need(t)(mcptest.Everything(name))
}

// need fails the test, or skips it outside CI, when a tool server that node runs is missing.
func need(t *testing.T) func(toolserver.ServerConfig, error) toolserver.ServerConfig {
	return func(cfg toolserver.ServerConfig, err error) toolserver.ServerConfig {
		t.Helper()
		if err == nil {
			return cfg
		}
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
		return cfg
	}
}

// person answers the reference server's form as person i would: a name of their own, and
// nothing else.
func person(i int) func(context.Context, toolserver.Input) (toolserver.Response, error) {
	return func(_ context.Context, in toolserver.Input) (toolserver.Response, error) {
		return toolserver.Respond(in, domain.Resolution{Outcome: domain.Answered, Values: map[string]any{"name": fmt.Sprintf("Person %d", i)}})
	}
}

func TestTwentyPeopleCallTheReferenceServerAtOnceAndEachIsAsked(t *testing.T) {
	cfg := everything(t, "ref")
	cfg.MaxSessions = 16
	p := startPool(t, cfg)
	const people = 20
	var (
		mu      sync.Mutex
		asking  int // questions waiting for their person now
		most    int // the most that waited at once
		full    = make(chan struct{})
		waited  atomic.Int32 // calls told that they wait for a session
		results = make([]string, people)
		errs    = make([]error, people)
		forms   = make([]toolserver.Input, people)
		wg      sync.WaitGroup
	)
	for i := range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answer := person(i)
			res, err := p.Call(context.Background(), toolserver.Call{Server: "ref", Tool: "trigger-elicitation-request",
				Live: func(ctx context.Context, in toolserver.Input) (toolserver.Response, error) {
					mu.Lock()
					forms[i] = in
					asking++
					most = max(most, asking)
					if asking == cfg.MaxSessions {
						close(full)
					}
					mu.Unlock()
					// The first people think until every session asks at once.
					select {
					case <-full:
					case <-ctx.Done():
						return toolserver.Response{}, ctx.Err()
					}
					mu.Lock()
					asking--
					mu.Unlock()
					return answer(ctx, in)
				},
				Wait: func(why string) {
					if why != "" {
						waited.Add(1)
					}
				}})
			results[i], errs[i] = res.Text, err
		}()
	}
	wg.Wait()
	for i := range people {
		if errs[i] != nil {
			t.Errorf("person %d: %v", i, errs[i])
			continue
		}
		if !strings.Contains(results[i], fmt.Sprintf("- Name: Person %d\n", i)) {
			t.Errorf("person %d got: %q", i, results[i])
		}
	}
	if most != cfg.MaxSessions {
		t.Errorf("at most %d questions waited at once, want %d (one a session)", most, cfg.MaxSessions)
	}
	if n := waited.Load(); n < people-int32(cfg.MaxSessions) {
		t.Errorf("%d calls said they waited for a session, want at least %d", n, people-cfg.MaxSessions)
	}
	// The optional email is left out of the form, which still reaches the person.
	if q := forms[0].Question; forms[0].Refusal != "" || len(q.Refused) != 1 || q.Refused[0].Name != "email" || len(q.Fields) != 12 {
		t.Errorf("form = %+v, refusal %q", q, forms[0].Refusal)
	}
	if probs := p.Problems(); len(probs) != 0 {
		t.Errorf("problems = %q", probs)
	}
}

func TestAURLRequestIsAskedWhileAnotherCallsFormWaits(t *testing.T) {
	p := startPool(t, everything(t, "ref"))
	formAsked, release := make(chan struct{}), make(chan struct{})
	formDone := make(chan toolserver.Result, 1)
	go func() {
		res, err := p.Call(context.Background(), toolserver.Call{Server: "ref", Tool: "trigger-elicitation-request",
			Live: func(ctx context.Context, in toolserver.Input) (toolserver.Response, error) {
				close(formAsked)
				<-release
				return person(1)(ctx, in)
			}})
		if err != nil {
			t.Error(err)
		}
		formDone <- res
	}()
	<-formAsked
	var asked toolserver.Input
	res := call(t, p, toolserver.Call{Server: "ref", Tool: "trigger-url-elicitation",
		Arguments: []byte(`{"url":"https://example.com/sign-in","message":"Sign in to the example"}`),
		Live: func(_ context.Context, in toolserver.Input) (toolserver.Response, error) {
			asked = in
			return toolserver.Respond(in, domain.Resolution{Outcome: domain.Answered})
		}})
	if asked.Mode != "url" || asked.Question.Link != "https://example.com/sign-in" || asked.Question.Message != "Sign in to the example" {
		t.Errorf("asked = %+v", asked)
	}
	if !strings.Contains(res.Text, "User completed the URL elicitation flow") {
		t.Errorf("url call = %q", res.Text)
	}
	close(release)
	if got := <-formDone; !strings.Contains(got.Text, "- Name: Person 1") {
		t.Errorf("form call = %q", got.Text)
	}
}

func TestClosingThePoolEndsAQuestionThatWaitsAndItsServer(t *testing.T) {
	cfg := everything(t, "ref")
	p := mcptest.PoolWith(t, toolserver.Options{Servers: []toolserver.ServerConfig{cfg}}, nil) // closed again below; a second Close is harmless
	asked := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = p.Call(context.Background(), toolserver.Call{Server: "ref", Tool: "trigger-elicitation-request",
			Live: func(ctx context.Context, _ toolserver.Input) (toolserver.Response, error) {
				close(asked)
				<-ctx.Done() // nobody answers
				return toolserver.Response{}, ctx.Err()
			}})
	}()
	<-asked
	pids := mcptest.Children(os.Getpid(), cfg.Args[0])
	if len(pids) == 0 {
		t.Fatal("no process of the reference server found")
	}
	start := time.Now()
	p.Close()
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("Close took %s", took)
	}
	select {
	case <-ended: // cancelled, or cut off with its session
	case <-time.After(time.Second):
		t.Error("the call still waits")
	}
	for _, pid := range pids {
		if mcptest.Alive(pid) {
			t.Errorf("server process %d outlived the pool", pid)
		}
	}
}
