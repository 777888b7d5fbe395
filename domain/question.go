package domain

import (
	"encoding/json"
	"strings"
	"time"
)

// FieldKind is the kind of input a question field asks for.
type FieldKind string

// The field kinds every back end maps its questions onto.
const (
	KindText        FieldKind = "text"
	KindTextarea    FieldKind = "textarea"
	KindNumber      FieldKind = "number"
	KindInteger     FieldKind = "integer"
	KindSelect      FieldKind = "select"
	KindMultiselect FieldKind = "multiselect"
	KindBoolean     FieldKind = "boolean"
	KindDate        FieldKind = "date"
	// KindFile asks for a file: the answer is a document (its DocumentRef in the values).
	KindFile FieldKind = "file"
)

// Valid reports whether k is one of the known field kinds.
func (k FieldKind) Valid() bool {
	switch k {
	case KindText, KindTextarea, KindNumber, KindInteger, KindSelect, KindMultiselect, KindBoolean, KindDate, KindFile:
		return true
	}
	return false
}

// Option is one choice of a select or multiselect field.
type Option struct {
	Value string `json:"value"`
	Label string `json:"label,omitempty"`
	// Hint says, under the label of a Choice question's button, what choosing it does
	// ("allow once", "allow always: not asked again in this session").
	Hint string `json:"hint,omitempty"`
	// Reject marks, on a Choice question, an option that refuses (a coding agent's "Reject"):
	// one person's choice of it settles a question that needs several approvals.
	Reject bool `json:"reject,omitempty"`
}

// Text returns the label shown to the person, the value when there is no label.
func (o Option) Text() string {
	if o.Label != "" {
		return o.Label
	}
	return o.Value
}

// Field is one input of a Question. Limits are pointers so that zero is a real limit.
type Field struct {
	Name        string    `json:"name"`
	Label       string    `json:"label,omitempty"`
	Description string    `json:"description,omitempty"`
	Kind        FieldKind `json:"kind"`
	Required    bool      `json:"required,omitempty"`
	Options     []Option  `json:"options,omitempty"`
	// Default prefills the form: a string, a number, a bool, or a list of strings for multiselect.
	Default   any      `json:"default,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	MinItems  *int     `json:"minItems,omitempty"`
	MaxItems  *int     `json:"maxItems,omitempty"`
	// MinDate and MaxDate bound a date field, both days included: a date (YYYY-MM-DD), or
	// Today for the day the form is shown and answered, so that "not in the past" stays true
	// however long the question waits.
	MinDate string `json:"minDate,omitempty"`
	MaxDate string `json:"maxDate,omitempty"`
	// Format refines a text field: FormatURI, FormatEmail (only where the operator allows
	// it: see RefuseSecrets) or FormatDateTime. The answer is checked, and typed, by it.
	Format string `json:"format,omitempty"`
	// Schema, on a textarea of FormatJSON, is the JSON Schema the answer must meet.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// The formats of a text field.
const (
	// FormatURI is an absolute http or https URL.
	FormatURI = "uri"
	// FormatEmail is an email address.
	FormatEmail = "email"
	// FormatDateTime is a date and time, answered as RFC 3339 in UTC ("2026-11-24T09:30:00Z").
	FormatDateTime = "date-time"
	// FormatJSON, on a textarea, is a JSON object (meeting the field's Schema, if any).
	FormatJSON = "json"
)

// Today, as a date field's MinDate or MaxDate, is the server's calendar day when the form is
// shown and when it is answered.
const Today = "today"

// DateLimits returns a date field's limits as dates (YYYY-MM-DD), Today read as the
// calendar day of now; "" where the field has no limit or one that is not a date.
func (f Field) DateLimits(now time.Time) (lo, hi string) {
	return dateLimit(f.MinDate, now), dateLimit(f.MaxDate, now)
}

func dateLimit(limit string, now time.Time) string {
	if limit == Today {
		return now.Format(time.DateOnly)
	}
	if _, err := time.Parse(time.DateOnly, limit); err != nil {
		return ""
	}
	return limit
}

// Title returns the label shown to the person, derived from the name when none is given.
func (f Field) Title() string {
	if f.Label != "" {
		return f.Label
	}
	return HumanizeName(f.Name)
}

// RequestType says why an agent asks; it shapes the default form of tool-call questions.
type RequestType string

// The request types of the request_user_input tool.
const (
	RequestClarification RequestType = "clarification"
	RequestSelection     RequestType = "selection"
	RequestApproval      RequestType = "approval"
)

// Question is the one model every back end asks through: a message, who asks, ordered fields.
type Question struct {
	// ID is the ledger id, set once the question is stored.
	ID int64 `json:"id,omitempty"`
	// Key is the asking agent's own handle (a tool call id, a task id), echoed back on resume.
	Key     string      `json:"key,omitempty"`
	Asker   string      `json:"asker,omitempty"`
	Message string      `json:"message"`
	Type    RequestType `json:"type,omitempty"`
	Fields  []Field     `json:"fields"`
	// Context is the supporting data the agent gave with the question (a text, shown as
	// Markdown, or an object or list, shown as a table): the person decides by it.
	Context any `json:"context,omitempty"`
	// AllowCancel shows a "Cancel" button: the agent accepts that the whole task stops here.
	AllowCancel bool `json:"allow_cancel,omitempty"`
	// Deadline, when set, resolves the question as expired at that time.
	Deadline time.Time `json:"deadline,omitzero"`
	// Refused lists fields that were removed because they would collect a secret.
	Refused []RefusedField `json:"refused,omitempty"`
	// Link is a page the person is asked to open (an MCP URL elicitation: a sign-in, a
	// payment): shown whole, opened only by the person's click, never fetched by Parley.
	Link string `json:"link,omitempty"`
	// SubmitLabel and DeclineLabel name the form's buttons where "Submit" and "Decline" do
	// not say what they do ("Approve and run", "Reject").
	SubmitLabel  string `json:"submit_label,omitempty"`
	DeclineLabel string `json:"decline_label,omitempty"`
	// NewMessageNote, shown under the form, says what a new message instead of an answer
	// does to the question, where the agent is told (an AG-UI interrupt is cancelled).
	NewMessageNote string `json:"new_message_note,omitempty"`
	// Live marks a question asked on a live connection (a tool server that asks in the middle
	// of a call): the step that asked waits for it (Output.Await), and it expires when the
	// connection ends, Parley's restart included.
	Live bool `json:"live,omitempty"`
	// Holder names who holds a live question's connection, as its expiry reasons say it:
	// "tool server" (the default) or "coding agent".
	Holder string `json:"holder,omitempty"`
	// To names the group the question is for, when it is not its conversation's owner's
	// alone: every member may answer, the first answer resolves it for all. ToPerson names
	// the one person it is for instead (an agent's approver). Either way the conversation's
	// owner, on whose behalf it is asked, does not answer it.
	To       string `json:"to,omitempty"`
	ToPerson string `json:"to_person,omitempty"`
	// Gate marks an approval gate: a tool call to approve before it runs, a coding agent's
	// permission request. An agent's approvers get its gates (see Policy.Route).
	Gate bool `json:"gate,omitempty"`
	// Escalate, when set, adds the question to another person's or group's Inbox (and
	// tells their channels) if it still waits after a while.
	Escalate *Escalation `json:"escalate,omitempty"`
	// Approvals is how many different people must approve an approval question (Submit)
	// for it to be answered: each Submit is one approval, the same values approved by that
	// many answer it; a Decline rejects it at once. 0 and 1: the first Submit answers.
	Approvals int `json:"approvals,omitempty"`
	// Choice marks a question answered by picking one option of its one select field: each
	// option is a button of its own (a permission request: Allow, Always allow, Reject), and
	// there is no Submit or Decline.
	Choice bool `json:"choice,omitempty"`
}

// holder is who holds the question's live connection.
func (q Question) holder() string {
	if q.Holder == "" {
		return "tool server"
	}
	return q.Holder
}

// StoppedWhileAsked is the reason a live question expires when Parley stops or restarts
// while it waits: the run is cut off, and Retry asks again.
func (q Question) StoppedWhileAsked() string {
	return "Parley stopped while the " + q.holder() + " waited for this answer; its session ended with it. Retry asks again."
}

// SessionEnded is the reason a live question expires when the connection it waits on ends.
func (q Question) SessionEnded() string {
	return "The " + q.holder() + "'s session ended."
}

// The reasons a tool server's live question expires (see Question.StoppedWhileAsked and
// Question.SessionEnded).
var (
	StoppedWhileAsked = Question{}.StoppedWhileAsked()
	SessionEnded      = Question{}.SessionEnded()
)

// RefusedField is a field Parley will not render, with the reason shown to person and agent.
type RefusedField struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Outcome is how a question was resolved.
type Outcome string

// The resolutions of a question. A question is resolved at most once.
const (
	Answered   Outcome = "answered"
	Declined   Outcome = "declined"
	Cancelled  Outcome = "cancelled"
	Expired    Outcome = "expired"
	Superseded Outcome = "superseded"
)

// Resolution is the end of a question: its outcome, the typed values when answered, who and when.
type Resolution struct {
	QuestionID int64          `json:"question_id"`
	Outcome    Outcome        `json:"outcome"`
	Values     map[string]any `json:"values,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	By         string         `json:"by,omitempty"`
	// OnBehalfOf names the person a staff member answered for (an audited action).
	OnBehalfOf string `json:"on_behalf_of,omitempty"`
	// Via names the access token the answer came with ("token laptop"), also audited;
	// empty for an answer given in the browser.
	Via string    `json:"via,omitempty"`
	At  time.Time `json:"at"`
	// Files are the files given for file fields, by field name; the ledger stores them as
	// documents and puts their DocumentRef in Values.
	Files map[string]File `json:"-"`
}

// Actor is who resolves a question: its person, or a staff member on the person's behalf
// (OnBehalfOf names the person; the ledger audits it).
type Actor struct {
	Name string
	// UserID is the actor's account, when known: it tells the owner of a conversation
	// from others whatever name a page or a protocol gives them.
	UserID     int64
	OnBehalfOf string
	// Via is the access token the person acts through ("token laptop"), empty in a browser.
	Via string
}

// Resolution is the actor's resolution of question id with outcome o.
func (a Actor) Resolution(id int64, o Outcome) Resolution {
	return Resolution{QuestionID: id, Outcome: o, By: a.Name, OnBehalfOf: a.OnBehalfOf, Via: a.Via}
}

// Routed reports whether the question is for others than its conversation's owner: a group,
// or a person it was routed to.
func (q Question) Routed() bool { return q.To != "" || q.ToPerson != "" }

// Audience is whom a routed question is for (zero: the conversation's owner).
func (q Question) Audience() Audience { return Audience{Group: q.To, Person: q.ToPerson} }

// CheckAnswerer decides whether by may resolve question q of a conversation owned by owner
// (its account: by id, else by name),
// as far as the question itself says: a routed question (a group's, an agent's approvers')
// is never resolved by the person on whose behalf it was asked, even as a member, and never
// by staff on anyone's behalf. Whether by is among whom it is for is the caller's to know.
func CheckAnswerer(q Question, owner User, by Actor) error {
	if !q.Routed() {
		return nil
	}
	asker := by.UserID != 0 && by.UserID == owner.ID || owner.Name != "" && strings.EqualFold(by.Name, owner.Name)
	switch {
	case by.OnBehalfOf != "":
		return Errorf(EFORBIDDEN, "This question is for %s: nobody answers it on another's behalf.", q.Audience().Words())
	case asker && q.Type == RequestApproval:
		return Errorf(EFORBIDDEN, "This approval was asked on your behalf: %s approves it, not you.", q.Audience().Words())
	case asker:
		return Errorf(EFORBIDDEN, "This question was asked on your behalf: %s answers it, not you.", q.Audience().Words())
	}
	return nil
}
