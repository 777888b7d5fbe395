package domain

import (
	"context"
	"fmt"
	"time"
)

// Conversation is one chat between a person and an agent.
type Conversation struct {
	ID int64
	// Kind is what the conversation holds; Agent the agent a KindChat conversation is with
	// (empty for KindInbound).
	Kind  ConversationKind
	Agent string
	Title string
	State RunState
	// Language is the language the person writes in, as intake last detected it.
	Language string
	// UserID is the account the conversation belongs to (0 for one from before accounts),
	// Owner its name when read for a list or a page.
	UserID    int64
	Owner     string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Archived is when its owner archived it; zero while it is not.
	Archived time.Time
	// Version is the version of the conversation shown (see Version).
	Version int64
	// AwaitsOthers says its run waits on questions put to others than its owner alone (a
	// group, the agent's approvers): none waits for the owner's answer.
	AwaitsOthers bool
}

// Inbound reports whether the conversation holds questions asked from outside Parley
// (KindInbound), with no agent of Parley's in it.
func (c Conversation) Inbound() bool { return c.Kind == KindInbound }

// QuestionRecord is a stored question with where it belongs and, once resolved, how.
type QuestionRecord struct {
	Question
	ConversationID int64
	RunID          int64
	AskedAt        time.Time
	Resolution     *Resolution
	// Approved are the approvals so far of a question that needs several, oldest first.
	Approved []Resolution
}

// Pending reports whether the question still waits for the person.
func (q QuestionRecord) Pending() bool { return q.Resolution == nil }

// Ledger is the durable store the Runner works from. Every method is one transaction, and
// every event a transaction commits is handed to the function given to Observe, in commit
// order, before the method returns.
type Ledger interface {
	// Observe sets the function that receives each transaction's events once committed.
	Observe(fn func([]Event))
	// ObserveRemote sets what the hub hears of other instances; WrittenElsewhere reads the
	// message another instance is writing in a conversation, whole as its drafts hold it so
	// far (ok false when none is).
	ObserveRemote(Remote)
	WrittenElsewhere(ctx context.Context, conversationID int64) (d Draft, ok bool, err error)
	// CreateConversation starts a conversation of the user's; a used non-empty nonce returns
	// its conversation.
	CreateConversation(ctx context.Context, userID int64, agentName, title, nonce string) (Conversation, error)
	// CreateInboundConversation starts (or, by nonce, finds) a person's KindInbound
	// conversation.
	CreateInboundConversation(ctx context.Context, userID int64, title, nonce string) (Conversation, error)
	Conversation(ctx context.Context, id int64) (Conversation, error)
	// StartRun records the person's message, supersedes questions still pending, and queues a
	// step; messages queued before go first, in the same run. While a run is running the
	// message is queued instead (Sent.Queued), and sent when the run ends done or failed; a
	// message that interrupts, or one sent while the step waits for the answer to a live
	// question, gives ErrRunning. A message already recorded with the same
	// non-empty nonce returns a zero Sent.
	StartRun(ctx context.Context, conversationID int64, m Message) (Sent, error)
	// SendQueued sends the queued messages in a run of their own: ErrRunning while a run is
	// running, ENOTFOUND when none is queued.
	SendQueued(ctx context.Context, conversationID int64) (stepID int64, err error)
	// Regenerate starts a new version of the conversation that shares its log up to the
	// person's last message and runs the agent on it again (see Version). ErrRunning while a
	// run is running; a nonce used before returns step 0.
	Regenerate(ctx context.Context, conversationID int64, by, nonce string) (stepID, version int64, err error)
	// Edit starts a new version of the conversation from just before one of the person's
	// messages (its event id), with m in its place. As Regenerate.
	Edit(ctx context.Context, conversationID, messageID int64, m Message) (stepID, version int64, err error)
	// RecordIntake stores the analysis of a person's message: its context items become
	// user_context documents attached to the message, the language is set on the conversation.
	RecordIntake(ctx context.Context, runID, messageEventID int64, a Analysis) (Event, error)
	// Document returns a document of the conversation, ENOTFOUND for any other.
	Document(ctx context.Context, conversationID, id int64) (Document, error)
	// BeginStep marks a queued step started and returns what the agent needs to run it.
	BeginStep(ctx context.Context, stepID int64) (Conversation, StepInput, error)
	// AppendEvent appends an event to a conversation's log. A finished agent message replaces
	// the drafts of its conversation.
	AppendEvent(ctx context.Context, ev Event) (Event, error)
	// SaveDrafts stores the text of messages still being written, all in one transaction.
	SaveDrafts(ctx context.Context, drafts []Draft) error
	// AskQuestion stores a pending question together with its question_asked event.
	AskQuestion(ctx context.Context, runID int64, q Question) (QuestionRecord, error)
	// AskInbound stores a question an agent outside Parley asks, in the conversation given
	// (a KindInbound one): it joins the conversation's waiting run or starts one. A
	// request id the person used before returns its question and created false; used with
	// another digest, EINVALID. When such a run's last question is resolved, the run is done:
	// no step runs.
	AskInbound(ctx context.Context, conversationID int64, req InboundRequest) (rec QuestionRecord, created bool, err error)
	// Audience returns the people a conversation's questions are for besides its owner: the
	// members of the groups they were asked of, and those they were escalated to.
	Audience(ctx context.Context, conversationID int64) ([]int64, error)
	// InboundRequest returns the question a person's request id asked and the digest of
	// what it asked; ENOTFOUND when none.
	InboundRequest(ctx context.Context, userID int64, requestID string) (QuestionRecord, string, error)
	// FinishStep ends a step and moves the run to waiting, done, failed, or stopped (stepErr
	// ErrStopped). partial, when given, is the message the step was cut off in: it replaces
	// the step's drafts. If the step asked questions that are all resolved already, it
	// queues the resume and returns its id.
	FinishStep(ctx context.Context, stepID int64, partial *Event, stepErr error) (resumeStepID int64, err error)
	// InterruptStep ends a started step cut off by shutdown: its partial message is kept.
	InterruptStep(ctx context.Context, stepID int64, partial *Event) error
	Question(ctx context.Context, id int64) (QuestionRecord, error)
	// Approve records one person's approval (res.By, res.Values) of a question that needs
	// need of them: once need people approved the same values, it resolves the question as
	// answered with them, by them all, as Resolve does. A second approval by the same person
	// gives ECONFLICT.
	Approve(ctx context.Context, res Resolution, need int) (resumeStepID int64, err error)
	// Resolve stores a resolution; when it is the run's last pending question it queues the resume.
	// A question already resolved gives an ECONFLICT error.
	Resolve(ctx context.Context, res Resolution) (resumeStepID int64, err error)
	// RetryRun queues a new step for a failed, interrupted or stopped run.
	RetryRun(ctx context.Context, conversationID int64) (stepID int64, err error)
	// Recover runs at start: it interrupts steps cut off by a crash (their drafts become
	// their partial messages) and returns the queued ones. With several instances on one
	// database, only the work of instances gone is recovered (see Renew).
	Recover(ctx context.Context) (queued []QueuedStep, err error)
	// Renew, every RenewEvery while the instance runs (never when that is zero: a database
	// one process holds), keeps this instance's hold on its steps; TakeOver, after a renewal,
	// takes over the work of instances that stopped renewing theirs, as Recover does after a
	// crash.
	Renew(ctx context.Context) (Lease, error)
	TakeOver(ctx context.Context) (Takeover, error)
	RenewEvery() time.Duration
	// InterruptedConversations lists the agent's conversations whose run was cut off.
	InterruptedConversations(ctx context.Context, agentName string) ([]int64, error)
	// LiveQuestions returns the pending questions asked on a live connection (Question.Live)
	// whose step no longer runs: the connection went with it.
	LiveQuestions(ctx context.Context) ([]int64, error)
	// DueQuestions returns pending questions whose deadline has passed.
	DueQuestions(ctx context.Context, now time.Time) ([]int64, error)
	// NextDeadline returns the earliest deadline or escalation of a pending question, zero
	// when none.
	NextDeadline(ctx context.Context) (time.Time, error)
	// DueEscalations returns pending questions whose escalation is due.
	DueEscalations(ctx context.Context, now time.Time) ([]int64, error)
	// User reads an account; MemberGroups names the groups it is a member of (access rules
	// read them).
	User(ctx context.Context, id int64) (User, error)
	MemberGroups(ctx context.Context, userID int64) ([]string, error)
	// Escalate adds a pending question to its escalation's audience and queues word of it
	// to their channels; a question resolved or escalated before is left as it is.
	Escalate(ctx context.Context, questionID int64) error
}

// A2ATask is a task of Parley's A2A server: its context, its conversation, and its part of
// the conversation's log, the events after From up to Until (0: up to now, as the
// conversation's newest task).
type A2ATask struct {
	ContextID      string
	ConversationID int64
	From, Until    int64
}

// QueuedStep is a step waiting to run, with its conversation.
type QueuedStep struct {
	ID, ConversationID int64
}

// Lease is what a Renew got: the time this instance's hold on its steps lasts until, by its
// own clock, unless renewed again. Lost says that this instance had been taken for gone: its
// running steps were interrupted by another.
type Lease struct {
	Until time.Time
	Lost  bool
}

// Takeover is the work a TakeOver took over from instances gone: their queued steps, to run
// here, and the conversations whose started steps it interrupted.
type Takeover struct {
	Queued      []QueuedStep
	Interrupted []int64
}

// Remote is what the hub and the sidebars hear of other instances sharing the database
// (PostgreSQL; a SQLite file has one): the text their steps are writing, as their drafts
// are stored, the conversations renamed or archived (Changed) and deleted (Gone), with the
// account whose they are. Their events reach it through Observe like this instance's.
type Remote struct {
	Drafts  func([]Draft)
	Changed func(conversationID, account int64)
	Gone    func(conversationID, account int64)
}

// ConversationFilter selects conversations for a list: a person's own, or (staff) anyone's
// by state, agent, owner and the time of their last activity.
type ConversationFilter struct {
	// UserID keeps one account's conversations; 0 keeps everyone's.
	UserID int64
	State  RunState
	Agent  string
	// Archived keeps the archived conversations (ArchivedOnly), the others (ArchivedNot), or
	// both (ArchivedAny, the zero value: staff review sees everything).
	Archived Archived
	// From and To bound the last activity: From <= updated < To (zero: unbounded).
	From, To      time.Time
	Limit, Offset int
}

// Archived selects conversations by whether their owner archived them.
type Archived int

const (
	ArchivedAny Archived = iota
	ArchivedNot
	ArchivedOnly
)

// PageSize is how many conversations the filter asks for: Limit, 50 when it is not set.
func (f ConversationFilter) PageSize() int {
	if f.Limit <= 0 {
		return 50
	}
	return f.Limit
}

// PagePath is the question's own page, where every notification links: its owner is taken
// on to its place in the conversation, whoever else may answer it answers it there.
func (q QuestionRecord) PagePath() string { return fmt.Sprintf("/questions/%d", q.ID) }

// Path is where a question's card is on Parley's pages: in its conversation, or on a page of
// its own for a question put to others than its conversation's owner (a group, an
// escalation), who cannot open the conversation.
func (q QuestionRecord) Path() string {
	if q.Routed() || q.Escalate != nil {
		return fmt.Sprintf("/questions/%d", q.ID)
	}
	return fmt.Sprintf("/c/%d#q-%d", q.ConversationID, q.ID)
}

// Sent is what became of a person's message: the step that answers it, or, while the agent
// works, its place in the queue (the id of its message_queued event). Both are zero for a
// message recorded before (its nonce used).
type Sent struct {
	Step, Queued int64
}

// QueuedMessage is a person's message waiting for the agent to finish.
type QueuedMessage struct {
	ID        int64 // its message_queued event
	Author    string
	Text      string
	Documents []DocumentRef
	At        time.Time
}
