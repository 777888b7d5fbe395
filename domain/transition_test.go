package domain_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestStepEndedWith(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		want      domain.StepEnd
		wantState string
	}{
		{"Completed", nil, domain.StepEnd{}, "done"},
		{"Stopped", domain.ErrStopped, domain.StepEnd{Stopped: true}, "interrupted"},
		{"StoppedWrapped", errors.Join(errors.New("cut"), domain.ErrStopped), domain.StepEnd{Stopped: true}, "interrupted"},
		{"Failed", errors.New("model down"), domain.StepEnd{Failed: true, Error: "model down"}, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := domain.StepEndedWith(tt.err)
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
		end  domain.StepEnd
		want domain.RunChange
	}{
		{"Stopped", domain.StepEnd{Stopped: true, Pending: 2, ResolvedMeanwhile: 1},
			domain.RunChange{Supersede: "The person stopped the agent; Retry asks again.", State: domain.StateStopped}},
		{"Failed", domain.StepEnd{Failed: true, Error: "model down", Pending: 1},
			domain.RunChange{Supersede: "The agent failed before it could use an answer; Retry asks again.",
				State: domain.StateFailed, Error: "model down", SendQueued: true}},
		{"Asked", domain.StepEnd{Pending: 1, ResolvedMeanwhile: 1, Steps: domain.MaxStepsPerRun},
			domain.RunChange{State: domain.StateWaiting}},
		{"ResolvedMeanwhile", domain.StepEnd{ResolvedMeanwhile: 1, Steps: 1},
			domain.RunChange{Step: domain.TriggerResume}},
		{"ResolvedMeanwhileOneStepShort", domain.StepEnd{ResolvedMeanwhile: 3, Steps: domain.MaxStepsPerRun - 1},
			domain.RunChange{Step: domain.TriggerResume}},
		{"ResolvedMeanwhileTooManySteps", domain.StepEnd{ResolvedMeanwhile: 1, Steps: domain.MaxStepsPerRun},
			domain.RunChange{State: domain.StateFailed, Error: stuck}},
		{"ResolvedMeanwhileStepQueued", domain.StepEnd{ResolvedMeanwhile: 1, Queued: 1, Steps: domain.MaxStepsPerRun},
			domain.RunChange{}},
		{"StepQueued", domain.StepEnd{Queued: 1, Steps: 2}, domain.RunChange{}},
		{"Done", domain.StepEnd{Steps: 1}, domain.RunChange{State: domain.StateDone, SendQueued: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.AfterStep(tt.end); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAfterInterrupt(t *testing.T) {
	tests := []struct {
		name    string
		pending int
		want    domain.RunChange
	}{
		{"Asked", 1, domain.RunChange{State: domain.StateWaiting}},
		{"NothingPending", 0, domain.RunChange{State: domain.StateInterrupted, Error: "The agent was cut off before it finished."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.AfterInterrupt(tt.pending); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	retried := domain.RunChange{Step: domain.TriggerRetry, State: domain.StateRunning}
	tests := []struct {
		state    domain.RunState
		want     domain.RunChange
		wantCode string // the error's code, "" when the run is retried
	}{
		{domain.StateFailed, retried, ""},
		{domain.StateInterrupted, retried, ""},
		{domain.StateStopped, retried, ""},
		{domain.StateRunning, domain.RunChange{}, domain.ECONFLICT},
		{domain.StateWaiting, domain.RunChange{}, domain.ECONFLICT},
		{domain.StateDone, domain.RunChange{}, domain.ECONFLICT},
		{"", domain.RunChange{}, domain.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(string(tt.state), func(t *testing.T) {
			got, err := domain.Retry(tt.state)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if code := domain.ErrorCode(err); code != tt.wantCode {
				t.Errorf("error %v, want code %q", err, tt.wantCode)
			}
		})
	}
}

func TestRouteMessage(t *testing.T) {
	tests := []struct {
		name        string
		facts       domain.MessageFacts
		want        domain.MessageRoute
		wantRunning bool
		wantCode    string
	}{
		{"Idle", domain.MessageFacts{State: domain.StateDone}, domain.RouteRun, false, ""},
		{"New", domain.MessageFacts{}, domain.RouteRun, false, ""},
		{"Waiting", domain.MessageFacts{State: domain.StateWaiting}, domain.RouteRun, false, ""},
		{"WaitingLive", domain.MessageFacts{State: domain.StateWaiting, LivePending: 1}, domain.RouteRun, false, ""},
		{"FailedInterrupt", domain.MessageFacts{State: domain.StateFailed, Interrupt: true}, domain.RouteRun, false, ""},
		{"Running", domain.MessageFacts{State: domain.StateRunning}, domain.RouteQueue, false, ""},
		{"RunningInterrupt", domain.MessageFacts{State: domain.StateRunning, Interrupt: true}, domain.RouteNone, true, domain.ECONFLICT},
		{"RunningLive", domain.MessageFacts{State: domain.StateRunning, LivePending: 1}, domain.RouteNone, true, domain.ECONFLICT},
		{"Recorded", domain.MessageFacts{Recorded: true, State: domain.StateRunning, Interrupt: true}, domain.RouteNone, false, ""},
		{"Inbound", domain.MessageFacts{Inbound: true, Recorded: true, State: domain.StateWaiting}, domain.RouteNone, false, domain.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := domain.RouteMessage(tt.facts)
			if got != tt.want {
				t.Errorf("got route %d, want %d", got, tt.want)
			}
			if running := errors.Is(err, domain.ErrRunning); running != tt.wantRunning {
				t.Errorf("error %v, want ErrRunning %v", err, tt.wantRunning)
			}
			if code := domain.ErrorCode(err); code != tt.wantCode {
				t.Errorf("error %v, want code %q", err, tt.wantCode)
			}
		})
	}
}

func TestDeclineAtOnce(t *testing.T) {
	refused := []domain.RefusedField{{Name: "password", Reason: domain.SecretRefusal}}
	tests := []struct {
		name   string
		q      domain.Question
		wantOK bool
	}{
		{"AllRefused", domain.Question{ID: 7, Refused: refused}, true},
		{"SomeRefused", domain.Question{ID: 7, Refused: refused, Fields: []domain.Field{{Name: "city", Kind: "text"}}}, false},
		{"NoneRefused", domain.Question{ID: 7, Fields: []domain.Field{{Name: "city", Kind: "text"}}}, false},
		{"NoFields", domain.Question{ID: 7}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := domain.DeclineAtOnce(tt.q)
			if ok != tt.wantOK {
				t.Fatalf("ok %v, want %v", ok, tt.wantOK)
			}
			want := domain.Resolution{}
			if ok {
				want = domain.Resolution{QuestionID: 7, Outcome: domain.Declined, Reason: tt.q.DeclineReason(), By: "parley"}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestCancelAlongside(t *testing.T) {
	cancel := domain.Resolution{QuestionID: 1, Outcome: domain.Cancelled, By: "staff", OnBehalfOf: "ana", Reason: "not needed"}
	along := func(id int64) domain.Resolution {
		return domain.Resolution{QuestionID: id, Outcome: domain.Cancelled, By: "staff", OnBehalfOf: "ana",
			Reason: "Cancelled with another question of the same run."}
	}
	tests := []struct {
		name    string
		r       domain.Resolution
		pending []int64
		want    []domain.Resolution
	}{
		{"Cancelled", cancel, []int64{2, 3}, []domain.Resolution{along(2), along(3)}},
		{"CancelledAlone", cancel, nil, []domain.Resolution{}},
		{"Answered", domain.Resolution{QuestionID: 1, Outcome: domain.Answered}, []int64{2}, nil},
		{"Declined", domain.Resolution{QuestionID: 1, Outcome: domain.Declined}, []int64{2}, nil},
		{"Superseded", domain.Resolution{QuestionID: 1, Outcome: domain.Superseded}, []int64{2}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.CancelAlongside(tt.r, tt.pending); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAfterResolve(t *testing.T) {
	tests := []struct {
		name  string
		facts domain.ResolveFacts
		want  domain.RunChange
	}{
		{"LastAnswer", domain.ResolveFacts{State: domain.StateWaiting},
			domain.RunChange{Step: domain.TriggerResume, State: domain.StateRunning}},
		{"MorePending", domain.ResolveFacts{State: domain.StateWaiting, Pending: 1}, domain.RunChange{}},
		{"StepQueuedOrStarted", domain.ResolveFacts{State: domain.StateRunning, Active: 1}, domain.RunChange{}},
		{"StepActiveWhileWaiting", domain.ResolveFacts{State: domain.StateWaiting, Active: 1}, domain.RunChange{}},
		{"Superseded", domain.ResolveFacts{State: domain.StateDone}, domain.RunChange{}},
		{"Stopped", domain.ResolveFacts{State: domain.StateStopped}, domain.RunChange{}},
		{"InboundLastAnswer", domain.ResolveFacts{State: domain.StateWaiting, Inbound: true}, domain.RunChange{State: domain.StateDone}},
		{"InboundMorePending", domain.ResolveFacts{State: domain.StateWaiting, Pending: 2, Inbound: true}, domain.RunChange{}},
		{"InboundDone", domain.ResolveFacts{State: domain.StateDone, Inbound: true}, domain.RunChange{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.AfterResolve(tt.facts); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInboundJoins(t *testing.T) {
	tests := []struct {
		latest domain.RunState
		want   bool
	}{
		{domain.StateWaiting, true},
		{"", false},
		{domain.StateDone, false},
		{domain.StateRunning, false},
		{domain.StateStopped, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.latest), func(t *testing.T) {
			if got := domain.InboundJoins(tt.latest); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckApproval(t *testing.T) {
	tests := []struct {
		name     string
		facts    domain.ApprovalFacts
		wantCode string
	}{
		{"OK", domain.ApprovalFacts{Pending: true, Owner: "ana", By: "ben"}, ""},
		{"Resolved", domain.ApprovalFacts{Owner: "ana", By: "ben"}, domain.ECONFLICT},
		{"ResolvedOwner", domain.ApprovalFacts{Owner: "ana", By: "ana", Before: 1}, domain.ECONFLICT},
		{"Owner", domain.ApprovalFacts{Pending: true, Owner: "ana", By: "ana"}, domain.EFORBIDDEN},
		{"OwnerApprovedBefore", domain.ApprovalFacts{Pending: true, Owner: "ana", By: "ana", Before: 1}, domain.EFORBIDDEN},
		{"ApprovedBefore", domain.ApprovalFacts{Pending: true, Owner: "ana", By: "ben", Before: 1}, domain.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := domain.ErrorCode(domain.CheckApproval(tt.facts)); code != tt.wantCode {
				t.Errorf("code %q, want %q", code, tt.wantCode)
			}
		})
	}
}

func TestApproved(t *testing.T) {
	r := domain.Resolution{QuestionID: 4, Outcome: domain.Answered, Values: map[string]any{"ok": true}, By: "cy", OnBehalfOf: "dee"}
	tests := []struct {
		name   string
		by     []string
		need   int
		want   domain.Resolution
		wantOK bool
	}{
		{"TooFew", []string{"ben"}, 2, domain.Resolution{}, false},
		{"Enough", []string{"ben", "cy"}, 2,
			domain.Resolution{QuestionID: 4, Outcome: domain.Answered, Values: map[string]any{"ok": true}, By: "ben, cy"}, true},
		{"More", []string{"ben", "cy", "dee"}, 2,
			domain.Resolution{QuestionID: 4, Outcome: domain.Answered, Values: map[string]any{"ok": true}, By: "ben, cy, dee"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := domain.Approved(r, tt.by, tt.need)
			if ok != tt.wantOK || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v, want %+v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
