package domain

import (
	"errors"
	"fmt"
	"strings"
)

// RunChange is what becomes of a run after something happened in it. The domain decides it
// from facts the ledger read; the ledger writes it, in this order: it supersedes the run's
// pending questions, queues the step, moves the run to State, then sends the queued messages.
// The zero RunChange leaves the run as it is.
type RunChange struct {
	// Supersede, when not empty, is the reason the run's pending questions are superseded with.
	Supersede string
	// Step, when not empty, queues a step of the run with this trigger.
	Step Trigger
	// State, when not empty, is the run's next state, and Error the reason logged with it.
	State RunState
	Error string
	// SendQueued sends the messages the person queued while the run ran, in a run of their own.
	SendQueued bool
}

// MaxStepsPerRun stops an agent that resumes itself forever (say, by asking again and again
// for a secret Parley refuses).
const MaxStepsPerRun = 50

// StepEnd is what the ledger knows when a step ends: how it ended and, for a step that
// completed, where its run stands.
type StepEnd struct {
	// Stopped says the person stopped the step (ErrStopped); Failed that it failed otherwise,
	// with Error.
	Stopped, Failed bool
	Error           string
	// Pending counts the run's questions still pending.
	Pending int
	// ResolvedMeanwhile counts the run's questions resolved while the step ran (refused
	// secrets, a fast answer), live ones aside: the step itself waited for those.
	ResolvedMeanwhile int
	// Queued counts the run's steps still queued; Steps all its steps, this one included.
	Queued, Steps int
}

// StepEndedWith is the StepEnd of a step that returned err (nil when it completed), before
// the ledger adds where its run stands.
func StepEndedWith(err error) StepEnd {
	switch {
	case errors.Is(err, ErrStopped):
		return StepEnd{Stopped: true}
	case err != nil:
		return StepEnd{Failed: true, Error: err.Error()}
	}
	return StepEnd{}
}

// StepState is how the step's own record ends: done, failed, or interrupted when the person
// stopped it.
func (e StepEnd) StepState() string {
	switch {
	case e.Stopped:
		return "interrupted"
	case e.Failed:
		return "failed"
	}
	return "done"
}

// AfterStep decides what becomes of a run when one of its steps ends. A stopped or failed
// step closes the questions it asked: the agent cannot use their answers, and Retry asks
// again. A step that asked waits for the answers; one whose questions were all resolved while
// it ran resumes at once, unless it has resumed too often already. A run ends done when
// nothing is left to do; done or failed, the messages the person queued meanwhile go then.
func AfterStep(e StepEnd) RunChange {
	switch {
	case e.Stopped:
		return RunChange{Supersede: "The person stopped the agent; Retry asks again.", State: StateStopped}
	case e.Failed:
		return RunChange{Supersede: "The agent failed before it could use an answer; Retry asks again.",
			State: StateFailed, Error: e.Error, SendQueued: true}
	case e.Pending > 0:
		return RunChange{State: StateWaiting}
	case e.ResolvedMeanwhile > 0 && e.Queued == 0 && e.Steps >= MaxStepsPerRun:
		return RunChange{State: StateFailed,
			Error: fmt.Sprintf("the agent kept asking without finishing (%d steps); it may be asking for something Parley will not collect", e.Steps)}
	case e.ResolvedMeanwhile > 0 && e.Queued == 0:
		return RunChange{Step: TriggerResume}
	case e.Queued > 0:
		return RunChange{} // the queued step carries the run on
	}
	return RunChange{State: StateDone, SendQueued: true}
}

// AfterInterrupt decides what becomes of a run whose step was cut off (by shutdown or a
// crash), given how many of its questions still pend that are not live. A step cut off after
// it asked leaves the run waiting: the answers resume it. A live question does not count: the
// connection it waits on is gone with the step, and it expires (Retry asks again).
func AfterInterrupt(pending int) RunChange {
	if pending > 0 {
		return RunChange{State: StateWaiting}
	}
	return RunChange{State: StateInterrupted, Error: "The agent was cut off before it finished."}
}

// Retry decides what retrying a conversation's newest run does, given the conversation's
// state: a failed, interrupted or stopped run runs again from a new step; any other cannot be
// retried (ECONFLICT).
func Retry(state RunState) (RunChange, error) {
	switch state {
	case StateFailed, StateInterrupted, StateStopped:
		return RunChange{Step: TriggerRetry, State: StateRunning}, nil
	}
	return RunChange{}, Errorf(ECONFLICT, "Only a failed, interrupted or stopped conversation can be retried.")
}

// MessageFacts are what the ledger knows when a person sends a message.
type MessageFacts struct {
	// Inbound says the conversation is KindInbound: no agent reads messages there.
	Inbound bool
	// Recorded says a message with the same nonce was recorded before (a double Enter, a
	// retried request).
	Recorded bool
	// State is the conversation's state.
	State RunState
	// Interrupt says the person means to stop the agent with the message.
	Interrupt bool
	// LivePending counts the conversation's live questions still pending (Question.Live).
	LivePending int
}

// MessageRoute is where a person's message goes.
type MessageRoute int

const (
	// RouteNone drops a message recorded before: it went where it goes already.
	RouteNone MessageRoute = iota
	// RouteRun starts a run with the message, after the messages queued before it.
	RouteRun
	// RouteQueue queues the message, to be sent when the running run ends.
	RouteQueue
)

// RouteMessage decides where a person's message goes. While the agent works, the message
// waits in the queue, unless it interrupts, or the step waits within itself for a live
// question (a tool server's or a coding agent's): that waits for the person, and their
// message answers it instead, as a message does any question, so it interrupts. Both give
// ErrRunning, for the caller to stop the agent first.
func RouteMessage(f MessageFacts) (MessageRoute, error) {
	switch {
	case f.Inbound:
		return RouteNone, Errorf(EINVALID, "This conversation holds questions that agents ask you through Parley; answer them on their cards. To write to an agent, start a conversation with it.")
	case f.Recorded:
		return RouteNone, nil
	case f.State == StateRunning && (f.Interrupt || f.LivePending > 0):
		return RouteNone, ErrRunning
	case f.State == StateRunning:
		return RouteQueue, nil
	}
	return RouteRun, nil
}

// DeclineAtOnce returns the resolution of a question whose fields were all refused (secrets):
// nobody can answer it, so Parley declines it as it is asked, telling the agent why. ok is
// false for a question the person can answer.
func DeclineAtOnce(q Question) (r Resolution, ok bool) {
	if len(q.Refused) == 0 || len(q.Fields) > 0 {
		return Resolution{}, false
	}
	return Resolution{QuestionID: q.ID, Outcome: Declined, Reason: q.DeclineReason(), By: "parley"}, true
}

// CancelAlongside returns the resolutions that r brings to the other questions of its run
// still pending (pending, live ones aside: their waiting step resolves them). Cancel stops the
// run, so the questions it asked beside this one go with it; any other outcome leaves them.
func CancelAlongside(r Resolution, pending []int64) []Resolution {
	if r.Outcome != Cancelled {
		return nil
	}
	out := make([]Resolution, 0, len(pending))
	for _, id := range pending {
		out = append(out, Resolution{QuestionID: id, Outcome: Cancelled, By: r.By, OnBehalfOf: r.OnBehalfOf,
			Reason: "Cancelled with another question of the same run."})
	}
	return out
}

// ResolveFacts are what the ledger knows about a run once one of its questions is resolved.
type ResolveFacts struct {
	// State is the run's state.
	State RunState
	// Pending counts the run's questions still pending; Active its steps queued or started.
	Pending, Active int
	// Inbound says the conversation is KindInbound: no agent runs in it.
	Inbound bool
}

// AfterResolve decides what becomes of a run once one of its questions is resolved. Its last
// answer resumes the agent, unless a step is queued or started (that step carries the run on,
// see AfterStep) or the run waits no more (a superseded run stays as it is). A run of inbound
// questions has no agent to resume: the asker is told by its own call (see InboundRequest),
// and the run is done.
func AfterResolve(f ResolveFacts) RunChange {
	switch {
	case f.Pending > 0 || f.Active > 0 || f.State != StateWaiting:
		return RunChange{}
	case f.Inbound:
		return RunChange{State: StateDone}
	}
	return RunChange{Step: TriggerResume, State: StateRunning}
}

// InboundJoins reports whether a question an agent outside Parley asks joins its
// conversation's newest run, in state latest ("" when there is none): it does while that run
// waits; otherwise the question starts a run of its own that waits.
func InboundJoins(latest RunState) bool {
	return latest == StateWaiting
}

// ApprovalFacts are what the ledger knows when a person approves a question that needs the
// approval of several people.
type ApprovalFacts struct {
	// Pending says the question still pends.
	Pending bool
	// Owner names the conversation's owner, By the person approving.
	Owner, By string
	// Before counts By's approvals of the question so far.
	Before int
}

// CheckApproval decides whether a person may approve a question: only while it pends, only
// someone other than the owner who asked for the approval, and only once.
func CheckApproval(f ApprovalFacts) error {
	switch {
	case !f.Pending:
		return ErrResolved
	case f.Owner == f.By:
		return Errorf(EFORBIDDEN, "You asked for this approval: other people approve it.")
	case f.Before > 0:
		return Errorf(ECONFLICT, "You approved this already: it waits for other people's approvals.")
	}
	return nil
}

// Approved returns the resolution of a question that needs need approvals once the people in
// by (oldest first) approved the values of r: answered with them, by them all. ok is false
// while fewer did.
func Approved(r Resolution, by []string, need int) (res Resolution, ok bool) {
	if len(by) < need {
		return Resolution{}, false
	}
	r.By, r.OnBehalfOf = strings.Join(by, ", "), ""
	return r, true
}

// ShownState is a run's state as a person is told it: a running run whose step waits for the
// answer to a live question (one held on the agent's connection, livePending of them) waits
// for the person, though it runs.
func ShownState(s RunState, livePending int) RunState {
	if s == StateRunning && livePending > 0 {
		return StateWaiting
	}
	return s
}

// HoldsStep reports whether the question holds its step: a live question still pending.
func (r QuestionRecord) HoldsStep() bool { return r.Live && r.Pending() }
