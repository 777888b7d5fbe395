package views

import (
	"fmt"
	"html"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/microcosm-cc/bluemonday"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/internal/humantext"
)

// EntryKind is the kind of an entry in a conversation's timeline.
type EntryKind string

// The kinds of timeline entries.
const (
	EntryMessage  EntryKind = "message"  // the person wrote
	EntryIntake   EntryKind = "intake"   // what intake made of it
	EntryReply    EntryKind = "reply"    // an agent wrote
	EntryPlan     EntryKind = "plan"     // the plan changed
	EntryQuestion EntryKind = "question" // an agent asked
	EntryResolved EntryKind = "resolved" // a question was answered, declined, ...
	EntryState    EntryKind = "state"    // the run moved
	EntryAudit    EntryKind = "audit"    // staff acted on someone's behalf
	EntryTool     EntryKind = "tool"     // an agent called a tool, which waited or ended
	EntryVersion  EntryKind = "version"  // another version of the conversation shows
	EntryQueued   EntryKind = "queued"   // the person sent a message while the agent worked, or took it back
	EntryFeedback EntryKind = "feedback" // someone said what they thought of a reply or a question
)

// Entry is one thing that happened in a conversation, as support staff read it: when, who,
// what, and for questions their fields, their resolution and how long they waited.
type Entry struct {
	Kind EntryKind
	At   time.Time
	// Who did it: the person, the agent or specialist, a staff member.
	Who string
	// Summary is one line saying what happened; Text the message, in full.
	Summary string
	Text    string
	// Markdown says Text is an agent's Markdown (rendered sanitized), not plain text.
	Markdown  bool
	Documents []domain.DocumentRef
	Question  *domain.Question
	// For a resolution: the question it resolved, the answers as people read them (field
	// title and value, in the question's order), and how long the question waited.
	Resolution *domain.Resolution
	Answers    []Answer
	Waited     time.Duration
}

// Answer is one answered field of a resolution.
type Answer struct {
	Field    string
	Value    string
	Document *domain.DocumentRef
}

// BuildTimeline folds a conversation's events (and its audit entries) into its timeline,
// oldest first. Streamed pieces of text and checkpoints are left out: each message appears
// once, whole.
func BuildTimeline(events []domain.Event, audit []domain.AuditEntry, feedback ...domain.Feedback) []Entry {
	var out []Entry
	asked := map[int64]domain.Event{}
	tools := map[string]domain.ToolCall{}
	for _, ev := range events {
		if ev.Kind == domain.EventToolCall {
			if ev.ToolCall != nil {
				prev, seen := tools[ev.ToolCall.Key]
				tools[ev.ToolCall.Key] = *ev.ToolCall
				out = append(out, toolEntries(ev, prev, seen)...)
			}
			continue
		}
		e := Entry{At: ev.At}
		switch ev.Kind {
		case domain.EventUserMessage:
			e.Kind, e.Who, e.Text, e.Documents = EntryMessage, ev.Author, ev.Text, ev.Documents
			e.Summary = "wrote"
		case domain.EventIntake:
			in := ev.Intake
			e.Kind, e.Who, e.Documents = EntryIntake, "Parley", in.Documents
			e.Summary = intakeSummary(*in)
			if len(in.Documents) > 0 {
				e.Text = in.Intent
			}
		case domain.EventAgentMessage:
			e.Kind, e.Who, e.Text, e.Markdown = EntryReply, ev.Author, ev.Text, true
			e.Summary = "replied"
			if ev.Interrupted {
				e.Summary = "replied, and was cut off"
			}
		case domain.EventPlan:
			e.Kind, e.Who, e.Summary = EntryPlan, ev.Author, "updated the plan"
			e.Text = planText(*ev.Plan)
		case domain.EventQuestionAsked:
			asked[ev.Question.ID] = ev
			q := *ev.Question
			e.Kind, e.Who, e.Question, e.Text, e.Markdown = EntryQuestion, q.Asker, &q, q.Message, true
			e.Summary = fmt.Sprintf("asked question %d (%s)", q.ID, humantext.Plural(len(q.Fields), "field"))
		case domain.EventQuestionResolved:
			r := *ev.Resolution
			e.Kind, e.Who, e.Resolution = EntryResolved, r.By, &r
			e.Text = r.Reason
			if q, ok := asked[r.QuestionID]; ok {
				e.Waited = ev.At.Sub(q.At)
				e.Answers = answers(*q.Question, r)
			}
			e.Summary = resolutionSummary(r, e.Waited)
		case domain.EventRunState:
			e.Kind, e.Who, e.Summary, e.Text = EntryState, "Parley", "the run is "+ev.State.Label(), ev.Error
		case domain.EventVersion:
			e.Kind, e.Who, e.Summary = EntryVersion, ev.Author, versionSummary(ev)
		case domain.EventMessageQueued:
			e.Kind, e.Who, e.Text, e.Documents = EntryQueued, ev.Author, ev.Text, ev.Documents
			e.Summary = "wrote while the agent worked (queued until it finished)"
		case domain.EventMessageUnqueued:
			e.Kind, e.Who, e.Summary = EntryQueued, ev.Author, "took back a queued message"
		default:
			continue
		}
		out = append(out, e)
	}
	for _, a := range audit {
		out = append(out, Entry{Kind: EntryAudit, At: a.At, Who: a.Actor, Summary: "audit: " + a.Action, Text: a.Detail})
	}
	for _, f := range feedback {
		out = append(out, Entry{Kind: EntryFeedback, At: f.At, Who: f.By, Summary: FeedbackSummary(f), Text: feedbackText(f)})
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return a.At.Compare(b.At) })
	return out
}

// toolEntries are what a tool call's event adds to the timeline: the call where it first
// appears, a wait that begins, and its end; running and progress in between are left out.
func toolEntries(ev domain.Event, prev domain.ToolCall, seen bool) []Entry {
	tc := *ev.ToolCall
	who := ev.Author
	if who == "" {
		who = tc.Server
	}
	var out []Entry
	if !seen {
		out = append(out, Entry{Kind: EntryTool, At: ev.At, Who: who, Summary: "called " + toolSummary(tc), Text: prettyJSON(tc.Arguments)})
	}
	switch {
	case tc.Status == domain.ToolWaiting && (!seen || prev.Status != domain.ToolWaiting || prev.Waiting != tc.Waiting):
		waits := "waits"
		if tc.Waiting != "" {
			waits += " for " + tc.Waiting
		}
		out = append(out, Entry{Kind: EntryTool, At: ev.At, Who: who, Summary: fmt.Sprintf("tool %s %s", tc.Tool, waits)})
	case tc.Status.Ended() && (!seen || !prev.Status.Ended()):
		s := toolSummary(tc) + ": " + string(tc.Status)
		if tc.Took > 0 {
			s += " in " + Took(tc.Took)
		}
		out = append(out, Entry{Kind: EntryTool, At: ev.At, Who: who, Summary: s, Text: toolOutcome(tc)})
	}
	return out
}

func intakeSummary(in domain.Intake) string {
	if len(in.Documents) == 0 {
		return "passed the message to the agent whole"
	}
	return fmt.Sprintf("split the message (%d tokens, threshold %d) into an intent and %s", in.Tokens, in.Threshold, humantext.Plural(len(in.Documents), "document"))
}

// resolutionSummary says how a question was resolved, by whom, after how long.
func resolutionSummary(r domain.Resolution, waited time.Duration) string {
	s := fmt.Sprintf("%s question %d", strings.ToLower(outcomeLabel(r.Outcome)), r.QuestionID)
	if r.OnBehalfOf != "" {
		s += " on behalf of " + r.OnBehalfOf
	}
	if r.Via != "" {
		s += " with " + r.Via
	}
	if waited > 0 {
		s += ", after " + Waited(waited)
	}
	return s
}

// answers lists a resolution's values by the question's fields, in order, then any other.
func answers(q domain.Question, r domain.Resolution) []Answer {
	var out []Answer
	seen := map[string]bool{}
	add := func(f domain.Field, v any) {
		if d, ok := domain.AnswerDocument(v); ok && f.Kind == domain.KindFile {
			out = append(out, Answer{Field: f.Title(), Value: d.Name, Document: &d})
			return
		}
		out = append(out, Answer{Field: f.Title(), Value: humantext.AnswerText(f, v)})
	}
	for _, f := range q.Fields {
		if v, ok := r.Values[f.Name]; ok {
			seen[f.Name] = true
			add(f, v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Values)) {
		if !seen[k] {
			add(domain.Field{Name: k}, r.Values[k])
		}
	}
	return out
}

// planText is a plan as lines of text: each step with its status.
func planText(p domain.Plan) string {
	var b strings.Builder
	if p.Title != "" {
		b.WriteString(p.Title + "\n")
	}
	for _, st := range p.Steps {
		fmt.Fprintf(&b, "- [%s] %s\n", st.Status, st.Title)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// FieldKindLabel names a field's kind for the timeline: "select: a, b, c", "number 1–10".
func FieldKindLabel(f domain.Field) string {
	s := string(f.Kind)
	if len(f.Options) > 0 {
		var opts []string
		for _, o := range f.Options {
			opts = append(opts, o.Text())
		}
		s += ": " + strings.Join(opts, ", ")
	}
	if f.Required {
		s += " (required)"
	}
	return s
}

// snippetPart is a piece of a search snippet: matched words (Mark) or the text around them.
type snippetPart struct {
	Text string
	Mark bool
}

// snippetParts splits a snippet whose matches sit between \x02 and \x03 (store.Search) into
// parts the page escapes and marks: the snippet is text, never markup.
func snippetParts(s string) []snippetPart {
	var out []snippetPart
	for s != "" {
		start := strings.IndexByte(s, '\x02')
		if start < 0 {
			out = append(out, snippetPart{Text: s})
			break
		}
		if start > 0 {
			out = append(out, snippetPart{Text: s[:start]})
		}
		s = s[start+1:]
		end := strings.IndexByte(s, '\x03')
		if end < 0 {
			end = len(s)
		}
		out = append(out, snippetPart{Text: s[:end], Mark: true})
		s = s[min(end+1, len(s)):]
	}
	return out
}

// hitKind says where a search matched.
func hitKind(kind string) string {
	switch kind {
	case "user_message":
		return "in a message"
	case "agent_message":
		return "in an agent's reply"
	case "question_asked":
		return "in a question"
	case "answer":
		return "in an answer"
	case "document":
		return "in a document"
	}
	return kind
}

// firstLine is the first line of a question's Markdown as the text a person reads, for a
// list (the Inbox): "**Approve:** Deploy build 1432" is "Approve: Deploy build 1432". A
// line that is not a paragraph or a heading (a fence's opening, a list item) is kept as
// written.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if h := Markdown(line); strings.HasPrefix(h, "<p>") || strings.HasPrefix(h, "<h") {
		if text := strings.TrimSpace(html.UnescapeString(textOnly.Sanitize(h))); text != "" {
			line = text
		}
	}
	return humantext.Cut(line, 140)
}

// textOnly keeps the text of sanitized HTML, without its elements.
var textOnly = bluemonday.StrictPolicy()

// versionSummary says what a version event records.
func versionSummary(ev domain.Event) string {
	switch ev.Reason {
	case domain.VersionRegenerate:
		return fmt.Sprintf("regenerated the reply: version %d starts here", ev.Shown+1)
	case domain.VersionEdit:
		return fmt.Sprintf("edited a message: version %d starts here", ev.Shown+1)
	}
	return fmt.Sprintf("turned to version %d", ev.Shown+1)
}

// versionLabel names a version in a list of them.
func versionLabel(v domain.Version) string {
	switch v.Reason {
	case domain.VersionRegenerate:
		return fmt.Sprintf("Version %d: reply regenerated by %s", v.N+1, v.By)
	case domain.VersionEdit:
		return fmt.Sprintf("Version %d: message edited by %s", v.N+1, v.By)
	}
	return fmt.Sprintf("Version %d: as first written", v.N+1)
}

// FeedbackSummary says what someone thought: "rated the reply bad", "rated question 3 unneeded".
func FeedbackSummary(f domain.Feedback) string {
	if f.Item == domain.ItemQuestion {
		return fmt.Sprintf("rated question %d %s", f.ItemID, f.Rating)
	}
	return fmt.Sprintf("rated a reply %s", f.Rating)
}

// feedbackText is what they wrote, and the reasons they ticked.
func feedbackText(f domain.Feedback) string {
	text := f.Comment
	if len(f.Reasons) > 0 {
		if text != "" {
			text += "\n"
		}
		text += "Reasons: " + strings.Join(f.Reasons, ", ")
	}
	return text
}
