package agent_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/parley-chat/parley/agent"
)

func TestStepEndedWith(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		want      agent.StepEnd
		wantState string
	}{
		{"Completed", nil, agent.StepEnd{}, "done"},
		{"Stopped", agent.ErrStopped, agent.StepEnd{Stopped: true}, "interrupted"},
		{"StoppedWrapped", errors.Join(errors.New("cut"), agent.ErrStopped), agent.StepEnd{Stopped: true}, "interrupted"},
		{"Failed", errors.New("model down"), agent.StepEnd{Failed: true, Error: "model down"}, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := agent.StepEndedWith(tt.err)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if s := got.StepState(); s != tt.wantState {
				t.Errorf("step state %q, want %q", s, tt.wantState)
			}
		})
	}
}

func TestAfterStep(t *testing.T) {
	stuck := "the agent kept asking without finishing (50 steps); it may be asking for something Parley will not collect"
	tests := []struct {
		name string
		end  agent.StepEnd
		want agent.RunChange
	}{
		{"Stopped", agent.StepEnd{Stopped: true, Pending: 2, ResolvedMeanwhile: 1},
			agent.RunChange{Supersede: "The person stopped the agent; Retry asks again.", State: agent.StateStopped}},
		{"Failed", agent.StepEnd{Failed: true, Error: "model down", Pending: 1},
			agent.RunChange{Supersede: "The agent failed before it could use an answer; Retry asks again.",
				State: agent.StateFailed, Error: "model down", SendQueued: true}},
		{"Asked", agent.StepEnd{Pending: 1, ResolvedMeanwhile: 1, Steps: agent.MaxStepsPerRun},
			agent.RunChange{State: agent.StateWaiting}},
		{"ResolvedMeanwhile", agent.StepEnd{ResolvedMeanwhile: 1, Steps: 1},
			agent.RunChange{Step: agent.TriggerResume}},
		{"ResolvedMeanwhileOneStepShort", agent.StepEnd{ResolvedMeanwhile: 3, Steps: agent.MaxStepsPerRun - 1},
			agent.RunChange{Step: agent.TriggerResume}},
		{"ResolvedMeanwhileTooManySteps", agent.StepEnd{ResolvedMeanwhile: 1, Steps: agent.MaxStepsPerRun},
			agent.RunChange{State: agent.StateFailed, Error: stuck}},
		{"ResolvedMeanwhileStepQueued", agent.StepEnd{ResolvedMeanwhile: 1, Queued: 1, Steps: agent.MaxStepsPerRun},
			agent.RunChange{}},
		{"StepQueued", agent.StepEnd{Queued: 1, Steps: 2}, agent.RunChange{}},
		{"Done", agent.StepEnd{Steps: 1}, agent.RunChange{State: agent.StateDone, SendQueued: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agent.AfterStep(tt.end); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAfterInterrupt(t *testing.T) {
	tests := []struct {
		name    string
		pending int
		want    agent.RunChange
	}{
		{"Asked", 1, agent.RunChange{State: agent.StateWaiting}},
		{"NothingPending", 0, agent.RunChange{State: agent.StateInterrupted, Error: "The agent was cut off before it finished."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agent.AfterInterrupt(tt.pending); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	retried := agent.RunChange{Step: agent.TriggerRetry, State: agent.StateRunning}
	tests := []struct {
		state    agent.RunState
		want     agent.RunChange
		wantCode string // the error's code, "" when the run is retried
	}{
		{agent.StateFailed, retried, ""},
		{agent.StateInterrupted, retried, ""},
		{agent.StateStopped, retried, ""},
		{agent.StateRunning, agent.RunChange{}, agent.ECONFLICT},
		{agent.StateWaiting, agent.RunChange{}, agent.ECONFLICT},
		{agent.StateDone, agent.RunChange{}, agent.ECONFLICT},
		{"", agent.RunChange{}, agent.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(string(tt.state), func(t *testing.T) {
			got, err := agent.Retry(tt.state)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if code := agent.ErrorCode(err); code != tt.wantCode {
				t.Errorf("error %v, want code %q", err, tt.wantCode)
			}
		})
	}
}

func TestRouteMessage(t *testing.T) {
	tests := []struct {
		name        string
		facts       agent.MessageFacts
		want        agent.MessageRoute
		wantRunning bool
		wantCode    string
	}{
		{"Idle", agent.MessageFacts{State: agent.StateDone}, agent.RouteRun, false, ""},
		{"New", agent.MessageFacts{}, agent.RouteRun, false, ""},
		{"Waiting", agent.MessageFacts{State: agent.StateWaiting}, agent.RouteRun, false, ""},
		{"WaitingLive", agent.MessageFacts{State: agent.StateWaiting, LivePending: 1}, agent.RouteRun, false, ""},
		{"FailedInterrupt", agent.MessageFacts{State: agent.StateFailed, Interrupt: true}, agent.RouteRun, false, ""},
		{"Running", agent.MessageFacts{State: agent.StateRunning}, agent.RouteQueue, false, ""},
		{"RunningInterrupt", agent.MessageFacts{State: agent.StateRunning, Interrupt: true}, agent.RouteNone, true, agent.ECONFLICT},
		{"RunningLive", agent.MessageFacts{State: agent.StateRunning, LivePending: 1}, agent.RouteNone, true, agent.ECONFLICT},
		{"Recorded", agent.MessageFacts{Recorded: true, State: agent.StateRunning, Interrupt: true}, agent.RouteNone, false, ""},
		{"Inbound", agent.MessageFacts{Inbound: true, Recorded: true, State: agent.StateWaiting}, agent.RouteNone, false, agent.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agent.RouteMessage(tt.facts)
			if got != tt.want {
				t.Errorf("got route %d, want %d", got, tt.want)
			}
			if running := errors.Is(err, agent.ErrRunning); running != tt.wantRunning {
				t.Errorf("error %v, want ErrRunning %v", err, tt.wantRunning)
			}
			if code := agent.ErrorCode(err); code != tt.wantCode {
				t.Errorf("error %v, want code %q", err, tt.wantCode)
			}
		})
	}
}

func TestDeclineAtOnce(t *testing.T) {
	refused := []agent.RefusedField{{Name: "password", Reason: agent.SecretRefusal}}
	tests := []struct {
		name   string
		q      agent.Question
		wantOK bool
	}{
		{"AllRefused", agent.Question{ID: 7, Refused: refused}, true},
		{"SomeRefused", agent.Question{ID: 7, Refused: refused, Fields: []agent.Field{{Name: "city", Kind: "text"}}}, false},
		{"NoneRefused", agent.Question{ID: 7, Fields: []agent.Field{{Name: "city", Kind: "text"}}}, false},
		{"NoFields", agent.Question{ID: 7}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := agent.DeclineAtOnce(tt.q)
			if ok != tt.wantOK {
				t.Fatalf("ok %v, want %v", ok, tt.wantOK)
			}
			want := agent.Resolution{}
			if ok {
				want = agent.Resolution{QuestionID: 7, Outcome: agent.Declined, Reason: tt.q.DeclineReason(), By: "parley"}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestCancelAlongside(t *testing.T) {
	cancel := agent.Resolution{QuestionID: 1, Outcome: agent.Cancelled, By: "staff", OnBehalfOf: "ana", Reason: "not needed"}
	along := func(id int64) agent.Resolution {
		return agent.Resolution{QuestionID: id, Outcome: agent.Cancelled, By: "staff", OnBehalfOf: "ana",
			Reason: "Cancelled with another question of the same run."}
	}
	tests := []struct {
		name    string
		r       agent.Resolution
		pending []int64
		want    []agent.Resolution
	}{
		{"Cancelled", cancel, []int64{2, 3}, []agent.Resolution{along(2), along(3)}},
		{"CancelledAlone", cancel, nil, []agent.Resolution{}},
		{"Answered", agent.Resolution{QuestionID: 1, Outcome: agent.Answered}, []int64{2}, nil},
		{"Declined", agent.Resolution{QuestionID: 1, Outcome: agent.Declined}, []int64{2}, nil},
		{"Superseded", agent.Resolution{QuestionID: 1, Outcome: agent.Superseded}, []int64{2}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agent.CancelAlongside(tt.r, tt.pending); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAfterResolve(t *testing.T) {
	tests := []struct {
		name  string
		facts agent.ResolveFacts
		want  agent.RunChange
	}{
		{"LastAnswer", agent.ResolveFacts{State: agent.StateWaiting},
			agent.RunChange{Step: agent.TriggerResume, State: agent.StateRunning}},
		{"MorePending", agent.ResolveFacts{State: agent.StateWaiting, Pending: 1}, agent.RunChange{}},
		{"StepQueuedOrStarted", agent.ResolveFacts{State: agent.StateRunning, Active: 1}, agent.RunChange{}},
		{"StepActiveWhileWaiting", agent.ResolveFacts{State: agent.StateWaiting, Active: 1}, agent.RunChange{}},
		{"Superseded", agent.ResolveFacts{State: agent.StateDone}, agent.RunChange{}},
		{"Stopped", agent.ResolveFacts{State: agent.StateStopped}, agent.RunChange{}},
		{"InboundLastAnswer", agent.ResolveFacts{State: agent.StateWaiting, Inbound: true}, agent.RunChange{State: agent.StateDone}},
		{"InboundMorePending", agent.ResolveFacts{State: agent.StateWaiting, Pending: 2, Inbound: true}, agent.RunChange{}},
		{"InboundDone", agent.ResolveFacts{State: agent.StateDone, Inbound: true}, agent.RunChange{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agent.AfterResolve(tt.facts); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInboundJoins(t *testing.T) {
	tests := []struct {
		latest agent.RunState
		want   bool
	}{
		{agent.StateWaiting, true},
		{"", false},
		{agent.StateDone, false},
		{agent.StateRunning, false},
		{agent.StateStopped, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.latest), func(t *testing.T) {
			if got := agent.InboundJoins(tt.latest); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckApproval(t *testing.T) {
	tests := []struct {
		name     string
		facts    agent.ApprovalFacts
		wantCode string
	}{
		{"OK", agent.ApprovalFacts{Pending: true, Owner: "ana", By: "ben"}, ""},
		{"Resolved", agent.ApprovalFacts{Owner: "ana", By: "ben"}, agent.ECONFLICT},
		{"ResolvedOwner", agent.ApprovalFacts{Owner: "ana", By: "ana", Before: 1}, agent.ECONFLICT},
		{"Owner", agent.ApprovalFacts{Pending: true, Owner: "ana", By: "ana"}, agent.EFORBIDDEN},
		{"OwnerApprovedBefore", agent.ApprovalFacts{Pending: true, Owner: "ana", By: "ana", Before: 1}, agent.EFORBIDDEN},
		{"ApprovedBefore", agent.ApprovalFacts{Pending: true, Owner: "ana", By: "ben", Before: 1}, agent.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := agent.ErrorCode(agent.CheckApproval(tt.facts)); code != tt.wantCode {
				t.Errorf("code %q, want %q", code, tt.wantCode)
			}
		})
	}
}

func TestApproved(t *testing.T) {
	r := agent.Resolution{QuestionID: 4, Outcome: agent.Answered, Values: map[string]any{"ok": true}, By: "cy", OnBehalfOf: "dee"}
	tests := []struct {
		name   string
		by     []string
		need   int
		want   agent.Resolution
		wantOK bool
	}{
		{"TooFew", []string{"ben"}, 2, agent.Resolution{}, false},
		{"Enough", []string{"ben", "cy"}, 2,
			agent.Resolution{QuestionID: 4, Outcome: agent.Answered, Values: map[string]any{"ok": true}, By: "ben, cy"}, true},
		{"More", []string{"ben", "cy", "dee"}, 2,
			agent.Resolution{QuestionID: 4, Outcome: agent.Answered, Values: map[string]any{"ok": true}, By: "ben, cy, dee"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := agent.Approved(r, tt.by, tt.need)
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v, want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
