package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/parley-chat/parley/backend/a2a"
	"github.com/parley-chat/parley/internal/a2av1"
)

// remote is an in-process A2A agent: the SDK's JSON-RPC server with a scripted executor,
// and its agent card at /.well-known/agent-card.json. Each message/stream runs the next turn.
type remote struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	turns    []turn
	got      []received
	cancels  int
	override http.Handler // replaces the JSON-RPC endpoint, for faults the SDK server never makes

	// gets signals every subscription to a task's events (sends and resubscribes).
	gets chan sdk.TaskID

	// v1 serves A2A v1.0 (the card offers it, a2av1.Server translates); calls counts the
	// JSON-RPC calls by version.
	v1    bool
	calls map[string]int
}

// remoteV1 makes newRemote's agents speak A2A v1.0 (TestAgent_V1).
var remoteV1 bool

// received is a message the remote agent got, with the task and context it ran in.
type received struct {
	msg       *sdk.Message
	taskID    sdk.TaskID
	contextID string
	newTask   bool
}

// turn is what the remote agent does with one message.
type turn []step

// step writes one event, or waits.
type step func(ctx context.Context, rc *a2asrv.RequestContext, st *turnState) sdk.Event

type turnState struct {
	partial, final sdk.ArtifactID
}

func newRemote(t *testing.T, turns ...turn) *remote {
	t.Helper()
	r := &remote{t: t, turns: turns, gets: make(chan sdk.TaskID, 64), v1: remoteV1, calls: map[string]int{}}
	queues := &spyQueues{Manager: eventqueue.NewInMemoryManager(), gets: r.gets}
	var handler http.Handler = a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(r, a2asrv.WithEventQueueManager(queues)))
	if r.v1 {
		handler = a2av1.Server(handler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		o := r.override
		r.calls[req.Header.Get("A2A-Version")]++
		r.mu.Unlock()
		if o != nil {
			o.ServeHTTP(w, req)
			return
		}
		handler.ServeHTTP(w, req)
	})
	mux.HandleFunc(a2asrv.WellKnownAgentCardPath, func(w http.ResponseWriter, req *http.Request) {
		if !r.v1 {
			a2asrv.NewStaticAgentCardHandler(r.card()).ServeHTTP(w, req)
			return
		}
		// A v1.0 card names its JSON-RPC interface and version among its interfaces.
		var card map[string]any
		b, _ := json.Marshal(r.card())
		_ = json.Unmarshal(b, &card)
		card["supportedInterfaces"] = []any{map[string]any{"url": r.srv.URL + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": a2av1.Version}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	})
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	if r.v1 {
		t.Cleanup(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.calls[a2av1.Version] == 0 || len(r.calls) != 1 {
				t.Errorf("the calls by A2A-Version: %v, want all in %s", r.calls, a2av1.Version)
			}
		})
	}
	return r
}

func (r *remote) card() *sdk.AgentCard {
	return &sdk.AgentCard{
		Name:               "Platform Engineer",
		Description:        "Runs platform chores.",
		URL:                r.srv.URL + "/rpc",
		PreferredTransport: sdk.TransportProtocolJSONRPC,
		ProtocolVersion:    "0.3.0",
		Version:            "1.0.0",
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Capabilities:       sdk.AgentCapabilities{Streaming: true},
		Skills: []sdk.AgentSkill{
			{ID: "pr", Name: "Create pull requests", Description: "Opens a PR on GitHub."},
			{ID: "jira", Name: "Jira issues"},
		},
	}
}

// Execute runs the next turn of the script.
func (r *remote) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	r.mu.Lock()
	r.got = append(r.got, received{msg: rc.Message, taskID: rc.TaskID, contextID: rc.ContextID, newTask: rc.StoredTask == nil})
	var tn turn
	if len(r.turns) > 0 {
		tn, r.turns = r.turns[0], r.turns[1:]
	}
	r.mu.Unlock()
	if tn == nil {
		r.t.Errorf("remote: no turn left for message %v", rc.Message.Parts)
		ev := sdk.NewStatusUpdateEvent(rc, sdk.TaskStateFailed, nil)
		ev.Final = true
		return q.Write(ctx, ev)
	}
	if rc.StoredTask == nil {
		// A status event, not the Task itself: the SDK server keeps and changes a written Task
		// while it is still being sent (a data race in a2a-go v0.3.3).
		if err := q.Write(ctx, sdk.NewStatusUpdateEvent(rc, sdk.TaskStateSubmitted, nil)); err != nil {
			return err
		}
	}
	st := &turnState{}
	for _, s := range tn {
		ev := s(ctx, rc, st)
		if ev == nil {
			continue
		}
		if err := q.Write(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// Cancel marks the task cancelled.
func (r *remote) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	r.mu.Lock()
	r.cancels++
	r.mu.Unlock()
	ev := sdk.NewStatusUpdateEvent(rc, sdk.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// received returns the messages the remote agent got.
func (r *remote) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *remote) setOverride(h http.Handler) {
	r.mu.Lock()
	r.override = h
	r.mu.Unlock()
}

// agent returns a Parley agent for the remote.
func (r *remote) agent(change ...func(*a2a.Config)) *a2a.Agent {
	r.t.Helper()
	cfg := a2a.Config{Name: "platform", Description: "Configured description.", CardURL: r.srv.URL, IdleTimeout: 5 * time.Second}
	for _, f := range change {
		f(&cfg)
	}
	a, err := a2a.New(context.Background(), cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// spyQueues reports every subscription to a task's event queue.
type spyQueues struct {
	eventqueue.Manager
	gets chan sdk.TaskID
}

func (s *spyQueues) Get(ctx context.Context, id sdk.TaskID) (eventqueue.Queue, bool) {
	q, ok := s.Manager.Get(ctx, id)
	select {
	case s.gets <- id:
	default:
	}
	return q, ok
}

// The steps of scripted turns.

func working(text string) step {
	return func(_ context.Context, rc *a2asrv.RequestContext, _ *turnState) sdk.Event {
		var msg *sdk.Message
		if text != "" {
			msg = sdk.NewMessageForTask(sdk.MessageRoleAgent, rc, sdk.TextPart{Text: text})
		}
		return sdk.NewStatusUpdateEvent(rc, sdk.TaskStateWorking, msg)
	}
}

// partial appends text to the turn's partial_result artifact.
func partial(text string) step {
	return func(_ context.Context, rc *a2asrv.RequestContext, st *turnState) sdk.Event {
		if st.partial == "" {
			ev := sdk.NewArtifactEvent(rc, sdk.TextPart{Text: text})
			ev.Artifact.Name = "partial_result"
			st.partial = ev.Artifact.ID
			return ev
		}
		return sdk.NewArtifactUpdateEvent(rc, st.partial, sdk.TextPart{Text: text})
	}
}

// final sends a final_result artifact with the parts.
func final(parts ...sdk.Part) step {
	return func(_ context.Context, rc *a2asrv.RequestContext, _ *turnState) sdk.Event {
		ev := sdk.NewArtifactEvent(rc, parts...)
		ev.Artifact.Name = "final_result"
		ev.LastChunk = true
		return ev
	}
}

// finalChunk sends a chunk of the turn's final_result artifact.
func finalChunk(text string, last bool) step {
	return func(_ context.Context, rc *a2asrv.RequestContext, st *turnState) sdk.Event {
		var ev *sdk.TaskArtifactUpdateEvent
		if st.final == "" {
			ev = sdk.NewArtifactEvent(rc, sdk.TextPart{Text: text})
			ev.Artifact.Name = "final_result"
			st.final = ev.Artifact.ID
		} else {
			ev = sdk.NewArtifactUpdateEvent(rc, st.final, sdk.TextPart{Text: text})
		}
		ev.LastChunk = last
		return ev
	}
}

// status ends the turn in state with a status message of the parts.
func status(state sdk.TaskState, parts ...sdk.Part) step {
	return func(_ context.Context, rc *a2asrv.RequestContext, _ *turnState) sdk.Event {
		var msg *sdk.Message
		if len(parts) > 0 {
			msg = sdk.NewMessageForTask(sdk.MessageRoleAgent, rc, parts...)
		}
		ev := sdk.NewStatusUpdateEvent(rc, state, msg)
		ev.Final = true
		return ev
	}
}

func completed() step { return status(sdk.TaskStateCompleted) }

// waitFor blocks the turn until ch is closed.
func waitFor(ch <-chan struct{}) step {
	return func(ctx context.Context, _ *a2asrv.RequestContext, _ *turnState) sdk.Event {
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return nil
	}
}

// branchForm is a DataPart in the structured response shape that asks for a branch.
func branchForm(content string) sdk.DataPart {
	return sdk.DataPart{Data: map[string]any{
		"is_task_complete":   false,
		"require_user_input": true,
		"content":            content,
		"metadata": map[string]any{
			"user_input": true,
			"input_fields": []any{
				map[string]any{"name": "branch", "description": "The source branch", "type": "text", "required": true},
				map[string]any{"name": "base", "type": "select", "required": true, "options": []any{"main", "develop"}},
			},
		},
	}}
}

// sse writes a raw SSE stream of JSON-RPC results, for faults the SDK server never makes.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		w.(http.Flusher).Flush()
	}
}

// result wraps an event's JSON in a JSON-RPC response.
func result(event string) string {
	return `{"jsonrpc":"2.0","id":"1","result":` + event + `}`
}
