package domain

// A run begins running when it queues a step for its agent (a message, a regenerate, an
// edit), and waiting when it only holds a question asked from outside Parley: no agent runs
// in it, the question is its whole work.
const (
	// RunStartsWithStep is the state of a new run that queues a step.
	RunStartsWithStep = StateRunning
	// RunStartsWithQuestion is the state of a new run that holds an inbound question.
	RunStartsWithQuestion = StateWaiting
)

// Branching is what the person asks of a conversation's versions.
type Branching int

// What a person may do to a conversation's versions.
const (
	// Regenerate answers the last message again in a new version.
	Regenerate Branching = iota
	// EditMessage sends an edited message in a new version.
	EditMessage
	// TurnToVersion shows another version.
	TurnToVersion
	// SendQueued sends the messages queued while the agent worked.
	SendQueued
)

// CheckBranching decides whether conversation c may be branched as asked: not while its
// agent works, whose step would write into a version no longer shown; and an inbound one
// (KindInbound) has no reply to regenerate nor message to edit.
func CheckBranching(c Conversation, b Branching) error {
	if c.Inbound() && (b == Regenerate || b == EditMessage) {
		return Errorf(EINVALID, "This conversation holds questions that agents ask you through Parley; it has no replies to regenerate or messages to edit.")
	}
	if c.State != StateRunning {
		return nil
	}
	if b == TurnToVersion {
		return Errorf(ECONFLICT, "The agent is still working on this version: stop it, or wait for it to finish, before turning to another.")
	}
	return ErrRunning
}

// AfterLeave decides what becomes of a run of the version a person leaves: its pending
// questions are superseded (nobody sees them to answer), and a run waiting for them stops,
// so Retry in that version asks again. A run in any other state is left as it is.
func AfterLeave(s RunState) RunChange {
	if s == StateWaiting {
		return RunChange{State: StateStopped}
	}
	return RunChange{}
}
