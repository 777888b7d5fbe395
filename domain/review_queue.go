package domain

import "time"

// Trouble is what brings a conversation to the review queue.
type Trouble string

const (
	TroubleBadReply         Trouble = "bad reply"
	TroubleUnneededQuestion Trouble = "unneeded question"
	TroubleFailedRun        Trouble = "failed run"
	TroubleDeclined         Trouble = "declined question"
	TroubleExpired          Trouble = "expired question"
)

// QueueItem is a conversation that needs review: something went wrong in it since staff last
// marked it reviewed (or ever).
type QueueItem struct {
	Conversation Conversation
	// Troubles are what went wrong since, each once; Since the newest of them.
	Troubles []Trouble
	Since    time.Time
	// Assignee is the staff member it is assigned to ("" for none); Reviewed the last mark.
	Assignee   string
	AssigneeID int64
	ReviewedBy string
	ReviewedAt time.Time
	// Labels are the labels staff put on it.
	Labels []string
}

// QueueFilter narrows the review queue: by agent, by assignee (an account's id; -1 for
// none), by trouble.
type QueueFilter struct {
	Agent    string
	Assignee int64
	Trouble  Trouble
	// Label keeps the conversations staff put the label on.
	Label string
	Limit int
}

// StaffNote is a note staff left on a conversation: Markdown, staff's alone.
type StaffNote struct {
	ID             int64
	ConversationID int64
	Author         string
	Body           string
	At             time.Time
}

// NoteText bounds a staff note.
var NoteText = TextKind{Subject: "The note", MaxRunes: 20000}

// MaxLabelRunes bounds a label's name; MaxLabels how many staff keep.
const (
	MaxLabelRunes = 40
	MaxLabels     = 50
)
