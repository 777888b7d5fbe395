package views

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/parley-chat/parley/domain"
)

// ItemKind is the kind of an entry in the conversation thread.
type ItemKind int

// The kinds of thread entries.
const (
	ItemUser ItemKind = iota
	ItemAgent
	ItemQuestion
	ItemError
	// ItemTool is a tool call: where it first appeared, as it stands now.
	ItemTool
	// ItemVersions moves between the versions of the conversation that start where it stands.
	ItemVersions
)

// Item is one entry of the thread as the page shows it.
type Item struct {
	Kind ItemKind
	// Message fields. A person's message has its event id and conversation, its documents
	// (attached, or split off by intake) and the intent intake gave the agent.
	EventID        int64
	ConversationID int64
	Documents      []domain.DocumentRef
	Intent         string
	MessageID      string
	Author         string
	Text           string
	Interrupted    bool
	Stopped        bool
	At             time.Time
	// Question fields.
	Question *QuestionView
	// Tool is a tool call's latest state.
	Tool *domain.ToolCall
	// From is the event the entry first appeared with.
	From int64
	// Versions are the versions that start here, for ItemVersions.
	Versions *VersionsView
}

// VersionsView is a point of the thread where versions of the conversation differ: the
// one shown is Choice.Versions[Choice.Current].
type VersionsView struct {
	ConversationID int64
	domain.Choice
}

// QuestionView is a question with what the form needs: the values typed and their errors.
type QuestionView struct {
	Record domain.QuestionRecord
	Values url.Values
	Errors domain.FieldErrors
	// Notice is a message about the whole form (e.g. it was resolved elsewhere).
	Notice string
}

// Thread is the conversation page's projection of the event log.
type Thread struct {
	Items       []Item
	Plans       []domain.Plan
	State       domain.RunState
	Error       string
	LastEventID int64
}

// BuildThread folds a conversation's events into what the page shows.
func BuildThread(events []domain.Event) Thread {
	var t Thread
	users := map[int64]int{}
	questions := map[int64]int{}
	tools := map[string]int{}
	for _, ev := range events {
		t.LastEventID = ev.ID
		n := len(t.Items)
		switch ev.Kind {
		case domain.EventUserMessage:
			users[ev.ID] = len(t.Items)
			t.Items = append(t.Items, UserItem(ev))
		case domain.EventIntake:
			if i, ok := users[ev.Intake.MessageEventID]; ok {
				t.Items[i] = t.Items[i].WithIntake(*ev.Intake)
			}
		case domain.EventAgentMessage:
			t.Items = append(t.Items, AgentItem(ev))
		case domain.EventPlan:
			t.Plans = append(t.Plans, *ev.Plan)
		case domain.EventQuestionAsked:
			rec := ev.AskedRecord()
			questions[rec.ID] = len(t.Items)
			t.Items = append(t.Items, Item{Kind: ItemQuestion, Question: &QuestionView{Record: rec}, At: ev.At})
		case domain.EventQuestionApproved:
			if i, ok := questions[ev.Resolution.QuestionID]; ok {
				rec := &t.Items[i].Question.Record
				rec.Approved = append(rec.Approved, *ev.Resolution)
			}
		case domain.EventQuestionResolved:
			if i, ok := questions[ev.Resolution.QuestionID]; ok {
				r := *ev.Resolution
				t.Items[i].Question.Record.Resolution = &r
			}
		case domain.EventToolCall:
			if ev.ToolCall == nil {
				continue
			}
			// A call stays where it first appeared; each later event replaces it.
			if i, ok := tools[ev.ToolCall.Key]; ok {
				tc := *ev.ToolCall
				t.Items[i].Tool = &tc
			} else {
				tools[ev.ToolCall.Key] = len(t.Items)
				t.Items = append(t.Items, ToolItem(ev))
			}
		case domain.EventRunState:
			t.State, t.Error = ev.State, ev.Error
			if ev.State == domain.StateFailed {
				t.Items = append(t.Items, Item{Kind: ItemError, Text: ev.Error, At: ev.At})
			}
		}
		if len(t.Items) > n {
			t.Items[n].From = ev.ID
		}
	}
	return t
}

// WithVersions puts, where versions of the conversation differ, the control that moves
// between them: before the first entry that differs.
func (t Thread) WithVersions(convID int64, choices []domain.Choice) Thread {
	if len(choices) == 0 {
		return t
	}
	items := make([]Item, 0, len(t.Items)+len(choices))
	i := 0
	for _, it := range t.Items {
		for i < len(choices) && it.From > choices[i].Fork {
			items = append(items, Item{Kind: ItemVersions, Versions: &VersionsView{ConversationID: convID, Choice: choices[i]}})
			i++
		}
		items = append(items, it)
	}
	for ; i < len(choices); i++ {
		items = append(items, Item{Kind: ItemVersions, Versions: &VersionsView{ConversationID: convID, Choice: choices[i]}})
	}
	t.Items = items
	return t
}

// Shown is the run's state as its status line says it: a run that waits, within its
// step, for the answer to a live question (a tool server's or a coding agent's) waits for
// the person, though it runs.
func (t Thread) Shown() domain.RunState {
	held := 0
	for _, it := range t.Items {
		if it.Kind == ItemQuestion && it.Question.Record.HoldsStep() {
			held++
		}
	}
	return domain.ShownState(t.State, held)
}

// PendingQuestions counts the questions of the thread still waiting.
func (t Thread) PendingQuestions() int {
	n := 0
	for _, it := range t.Items {
		if it.Kind == ItemQuestion && it.Question.Record.Pending() {
			n++
		}
	}
	return n
}

// FieldID is the HTML id of a question's input.
func FieldID(q domain.QuestionRecord, name string) string {
	return fmt.Sprintf("q%d-%s", q.ID, name)
}

// QuestionID is the HTML id of a question's card.
func QuestionID(id int64) string { return fmt.Sprintf("q-%d", id) }

// MessageID is the HTML id of an agent message.
func MessageID(id string) string { return "m-" + id }

// fieldValues returns what the form shows for a field: what was typed, else the default.
func (q QuestionView) fieldValues(f domain.Field) []string {
	if q.Values != nil {
		return q.Values[f.Name]
	}
	return domain.FieldDefault(f)
}

func (q QuestionView) fieldValue(f domain.Field) string {
	v := q.fieldValues(f)
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (q QuestionView) has(f domain.Field, value string) bool {
	for _, v := range q.fieldValues(f) {
		if v == value {
			return true
		}
	}
	return false
}

func (q QuestionView) checked(f domain.Field) bool {
	switch strings.ToLower(q.fieldValue(f)) {
	case "true", "on", "yes", "1":
		return true
	}
	return false
}

// Waited says how long a question waited, as people say it.
func Waited(d time.Duration) string {
	switch {
	case d < time.Second:
		return "under a second"
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

func outcomeLabel(o domain.Outcome) string {
	switch o {
	case domain.Answered:
		return "Answered"
	case domain.Declined:
		return "Declined"
	case domain.Cancelled:
		return "Cancelled"
	case domain.Expired:
		return "Expired"
	case domain.Superseded:
		return "Superseded"
	}
	return string(o)
}

func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// AgentItem is a finished agent message as the thread shows it.
func AgentItem(ev domain.Event) Item {
	return Item{Kind: ItemAgent, EventID: ev.ID, ConversationID: ev.ConversationID, MessageID: ev.MessageID, Author: ev.Author, Text: ev.Text,
		Interrupted: ev.Interrupted, Stopped: ev.Stopped, At: ev.At}
}

// UserItem is a person's message as the thread shows it, before intake.
func UserItem(ev domain.Event) Item {
	return Item{Kind: ItemUser, EventID: ev.ID, ConversationID: ev.ConversationID, Author: ev.Author, Text: ev.Text,
		Documents: ev.Documents, At: ev.At}
}

// WithIntake adds what intake made of the message: its documents, and the intent when the
// agent was given something else than the message as written.
func (it Item) WithIntake(in domain.Intake) Item {
	it.Documents = append(it.Documents[:len(it.Documents):len(it.Documents)], in.Documents...)
	if in.Intent != it.Text {
		it.Intent = in.Intent
	}
	return it
}

// UserMessageID is the HTML id of a person's message.
func UserMessageID(eventID int64) string { return fmt.Sprintf("u-%d", eventID) }

// DocumentURL is where a document opens; download adds ?download=1.
func DocumentURL(convID, docID int64, download bool) templ.SafeURL {
	u := fmt.Sprintf("/c/%d/documents/%d", convID, docID)
	if download {
		u += "?download=1"
	}
	return templ.SafeURL(u)
}

// longMessage reports whether a message is long enough to show folded.
func longMessage(text string) bool {
	return len(text) > 3000 || strings.Count(text, "\n") > 30
}

// lineCount is the number of lines of a text, as a label.
func lineCount(text string) string {
	n := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	return fmt.Sprintf("%d lines", n)
}

// documentTitle is a chip's tooltip: what the document is and where it came from.
func documentTitle(d domain.DocumentRef) string {
	from := "attached by you"
	switch d.Label {
	case domain.LabelUserContext:
		from = "split from your message"
	case domain.LabelAnswer:
		from = "uploaded as an answer"
	}
	t := d.Name
	if d.Title != "" && d.Title != d.Name {
		t = d.Title + " (" + d.Name + ")"
	}
	return fmt.Sprintf("%s: %s, %s, %s", t, d.MimeType, d.SizeLabel(), from)
}

// documentKind is a chip's badge: the document's extension (LOG, CSV, PDF), which needs no
// icon font.
func documentKind(d domain.DocumentRef) string {
	ext := strings.TrimPrefix(path.Ext(d.Name), ".")
	if ext == "" || len(ext) > 5 {
		ext = strings.TrimPrefix(domain.Extension(d.MimeType), ".")
	}
	return strings.ToUpper(ext)
}

// inboundClient is the client that asks in a domain.KindInbound conversation, read from
// its title ("Questions from Claude Code").
func inboundClient(title string) string {
	if c, ok := strings.CutPrefix(title, "Questions from "); ok && c != "" {
		return c
	}
	return "An agent"
}

// QuestionLink is where a question's card is (see domain.QuestionRecord.Path).
func QuestionLink(q domain.QuestionRecord) string { return q.Path() }

// QuestionPageData is what QuestionPage shows: the card, and whose agent asked.
type QuestionPageData struct {
	View  QuestionView
	Owner string
	// Context is the conversation up to the question, for its approvers (an approval gate
	// routed to them): nil when not shown.
	Context *Thread
}

// readOnlyItem is an entry of someone else's conversation, as staff read it: its questions
// are not the viewer's to answer, nothing in it is theirs to edit.
func readOnlyItem(it Item, owner string) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return ThreadItem(it).Render(WithMode(ctx, Mode{ReadOnly: true, Owner: owner}), w)
	})
}

// approvedBy names who approved so far ("ann, bob"), and whether the viewer is among them.
func approvedBy(q domain.QuestionRecord, viewer string) (names string, you bool) {
	var list []string
	for _, a := range q.Approved {
		list = append(list, a.By)
		you = you || a.By == viewer
	}
	return strings.Join(list, ", "), you
}

// editable reports whether the person may edit the message: their own, on their page.
func editable(ctx context.Context, it Item) bool {
	return modeOf(ctx).Writes() && it.ConversationID != 0 && it.EventID != 0
}

// editFormID is the HTML id of a message's edit form.
func editFormID(eventID int64) string { return fmt.Sprintf("edit-%d", eventID) }

// editClick opens the edit form of the message whose Edit was clicked: the form already
// open takes the keyboard, else it is fetched (GET …/messages/{event}/edit puts it in).
func editClick(convID int64) string {
	return "const b = evt.target.closest('.edit-message'); if (b) { const id = b.closest('article').id.slice(2); " +
		"const f = document.getElementById('edit-' + id); if (f) { f.querySelector('textarea').focus() } else { " +
		fmt.Sprintf("@get('/c/%d/messages/' + id + '/edit')", convID) + " } }"
}

// regenerable reports whether the page offers Regenerate: the person's own conversation
// with an agent, whose run has ended (or waits).
func regenerable(ctx context.Context, conv domain.Conversation, s domain.RunState) bool {
	return modeOf(ctx).Writes() && !conv.Inbound() && s != "" && s != domain.StateRunning
}
