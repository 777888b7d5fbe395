package web

import (
	"context"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/eval"
	"github.com/parley-chat/parley/notify"
	"github.com/parley-chat/parley/runner"
	"github.com/parley-chat/parley/store"
)

// What the server reads and writes of Parley's database, grouped by the handlers that need
// it. *store.DB is each of them; a handler family depends on its own group only.

// Ledger is the conversations' event log as the chat pages, their streams and the JSON API
// read it: conversations, their events and versions, the messages queued behind a run, plans
// and attached documents. A stream catches up from its Events.
type Ledger interface {
	runner.EventLog
	Conversation(ctx context.Context, id int64) (domain.Conversation, error)
	ListConversations(ctx context.Context, f domain.ConversationFilter) ([]domain.Conversation, bool, error)
	Event(ctx context.Context, conversationID, id int64) (domain.Event, error)
	PathEvents(ctx context.Context, convID int64, p domain.Path, after int64) ([]domain.Event, error)
	VersionEvents(ctx context.Context, convID, n, after int64) ([]domain.Event, error)
	Versions(ctx context.Context, convID int64) (domain.Versions, int64, error)
	ChooseVersion(ctx context.Context, convID, n int64, by string) error
	Queued(ctx context.Context, convID int64) ([]domain.QueuedMessage, error)
	Unqueue(ctx context.Context, convID, id int64, by string) error
	Plans(ctx context.Context, conversationID, upTo int64) ([]domain.Plan, error)
	Document(ctx context.Context, conversationID, id int64) (domain.Document, error)
}

// Questions is what the question pages, the inbox and the sidebar's count read of the
// questions agents ask: one question, whether it was put to a person, and what waits.
type Questions interface {
	Question(ctx context.Context, id int64) (domain.QuestionRecord, error)
	QuestionFor(ctx context.Context, questionID, userID int64) (bool, error)
	Inbox(ctx context.Context, userID int64, limit int) ([]domain.InboxItem, error)
	Waiting(ctx context.Context, userID int64) (n int, latest domain.Conversation, err error)
}

// Library is how people keep their own conversations from the sidebar: rename, archive,
// delete, and find them by title or text.
type Library interface {
	RenameConversation(ctx context.Context, id int64, title string) error
	ArchiveConversation(ctx context.Context, id int64, archived bool) error
	DeleteConversation(ctx context.Context, id int64, actor string) error
	ConversationsTitled(ctx context.Context, userID int64, text string, limit int) ([]domain.Conversation, error)
	Search(ctx context.Context, text string, f domain.ConversationFilter) ([]domain.SearchHit, bool, error)
}

// Accounts are the people and their browser sessions: signing up and in, settings, and the
// count of changes that makes open streams check their person again.
type Accounts interface {
	CreateUser(ctx context.Context, name, passwordHash string, role domain.Role) (domain.User, error)
	EnsureUser(ctx context.Context, name string, role domain.Role) (domain.User, error)
	UserByName(ctx context.Context, name string) (domain.User, string, error)
	HasPeople(ctx context.Context) (bool, error)
	SetPassword(ctx context.Context, name, passwordHash, actor string) (domain.User, error)
	SetProfile(ctx context.Context, id int64, displayName, timeZone string) error
	CreateSession(ctx context.Context, userID int64, lim store.SessionLimits) (string, error)
	Session(ctx context.Context, token string, lim store.SessionLimits) (domain.User, error)
	SessionUntil(ctx context.Context, token string, lim store.SessionLimits) (domain.User, time.Time, error)
	DeleteSession(ctx context.Context, token string) error
	AuthChanges(ctx context.Context) (int64, error)
}

// AccessTokens are the bearer tokens of programs: the JSON API checks them, the settings
// page makes and revokes them.
type AccessTokens interface {
	CreateToken(ctx context.Context, userID int64, name string) (string, store.Token, error)
	Tokens(ctx context.Context, userID int64) ([]store.Token, error)
	RevokeToken(ctx context.Context, userID int64, name string) (store.Token, error)
	TokenUser(ctx context.Context, secret string) (domain.User, store.Token, error)
}

// Review is what only the staff's review desk reads: everyone, the audit log, deletions,
// search over all conversations and the figures of questions.
type Review interface {
	Users(ctx context.Context) ([]domain.User, error)
	AuditLog(ctx context.Context, convID int64, limit int) ([]domain.AuditEntry, error)
	Deletions(ctx context.Context, limit int) ([]domain.AuditEntry, error)
	Search(ctx context.Context, text string, f domain.ConversationFilter) ([]domain.SearchHit, bool, error)
	QuestionFacts(ctx context.Context, from, to time.Time) ([]domain.QuestionFact, error)
}

// Groups are the groups agents may ask, and the channels through which word of questions
// reaches people and groups.
type Groups interface {
	Groups(ctx context.Context) ([]domain.Group, error)
	Group(ctx context.Context, name string) (domain.Group, error)
	GroupsOf(ctx context.Context, userID int64) ([]domain.Group, error)
	MemberGroups(ctx context.Context, userID int64) ([]string, error)
	AddToGroup(ctx context.Context, group string, people []string, role domain.GroupRole, actor string) (domain.Group, error)
	RemoveFromGroup(ctx context.Context, group string, people []string, actor string) error
	Channels(ctx context.Context, userID, groupID int64) ([]domain.Channel, error)
	AddChannel(ctx context.Context, ch domain.Channel, actor string) (domain.Channel, error)
	RemoveChannel(ctx context.Context, id, userID, groupID int64, actor string) error
	RemovePush(ctx context.Context, userID int64, endpoint, actor string) error
	ConfirmToken(ctx context.Context, id, userID, groupID int64) (domain.Channel, string, error)
	ConfirmChannel(ctx context.Context, token string) (domain.Channel, error)
	Confirmation(ctx context.Context, token string) (domain.Channel, error)
	NotifyPrefs(ctx context.Context, userID int64) (domain.NotifyPrefs, error)
	SetNotifyPrefs(ctx context.Context, userID int64, p domain.NotifyPrefs, actor string) error
}

// Identities are what signing in through an identity provider (or a proxy's groups)
// keeps: the sign-ins under way, the accounts found by issuer and subject, the groups the
// provider names, the ID token a session hands back at sign-out; and the audit log, where
// sign-ins and refusals are written.
type Identities interface {
	StartLogin(ctx context.Context, l store.PendingLogin) error
	TakeLogin(ctx context.Context, state, browser string) (store.PendingLogin, error)
	SignInIdentity(ctx context.Context, id domain.Identity, source string) (domain.SignIn, error)
	SyncGroups(ctx context.Context, userID int64, source string, groups []string, who string) (joined, left []string, err error)
	CreateSessionWith(ctx context.Context, userID int64, lim store.SessionLimits, idToken string) (string, error)
	SessionIDToken(ctx context.Context, token string) (string, error)
	Audit(ctx context.Context, actor, action string, convID int64, detail string) error
}

// Health is what GET /healthz and the write timings of GET /metrics ask of the database, and
// what a request that failed on it answers (Failed: a damaged file says so, and is reported).
type Health interface {
	Ping(ctx context.Context) error
	Writable(ctx context.Context) error
	Failed(err error) error
	ObserveWrites(fn func(took time.Duration, err error))
}

// LedgerStats are the figures of the ledger that GET /metrics reads at each scrape.
type LedgerStats interface {
	NewestEventID(ctx context.Context) (int64, error)
	RunStateCounts(ctx context.Context) (map[domain.RunState]int, error)
	Waiting(ctx context.Context, userID int64) (n int, latest domain.Conversation, err error)
	ResolvedSince(ctx context.Context, after int64) ([]domain.QuestionFact, int64, error)
}

// Feedbacks are what people thought of agents' replies and questions, and the reasons
// staff list for a bad one.
type Feedbacks interface {
	SetFeedback(ctx context.Context, f domain.Feedback) (domain.Feedback, error)
	DeleteFeedback(ctx context.Context, convID int64, item domain.FeedbackItem, itemID, userID int64) error
	Feedback(ctx context.Context, convID, userID int64) ([]domain.Feedback, error)
	FeedbackReasons(ctx context.Context) ([]string, error)
	FeedbackFacts(ctx context.Context, from, to time.Time) ([]domain.FeedbackFact, error)
	SetFeedbackReasons(ctx context.Context, actor string, reasons []string) error
}

// Queue is the review queue: the conversations that need review, their marks and assignees.
type Queue interface {
	NeedsReview(ctx context.Context, f domain.QueueFilter) ([]domain.QueueItem, error)
	NeedsReviewCount(ctx context.Context) (int, error)
	MarkReviewed(ctx context.Context, convID int64, by string) error
	Assign(ctx context.Context, convID, assigneeID int64, by string) error
}

// Desk is what staff alone keep of conversations: notes and labels.
type Desk interface {
	AddNote(ctx context.Context, convID int64, author, body string) (domain.StaffNote, error)
	Notes(ctx context.Context, convID int64) ([]domain.StaffNote, error)
	Labels(ctx context.Context) ([]string, error)
	SetLabels(ctx context.Context, actor string, names []string) error
	LabelConversation(ctx context.Context, convID int64, label string, on bool, actor string) error
	ConversationLabels(ctx context.Context, convID int64) ([]string, error)
}

// Store is all of the above, with the notifications' outbox: what NewServer is given (a
// *store.DB) and hands out, each group to the handlers that need it.
type Store interface {
	Ledger
	Questions
	Library
	Accounts
	AccessTokens
	Review
	Groups
	Identities
	Health
	LedgerStats
	Feedbacks
	Queue
	Desk
	eval.Source
	notify.Outbox
	notify.KeyStore
}
