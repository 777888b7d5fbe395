// Package eval writes conversations as data to evaluate agents with: one JSON object a line
// (JSONL) for each version of each conversation, with its messages, its questions and how
// they were answered, what people thought of its replies and questions, and staff's labels
// (and notes, when asked). The format is docs/eval.md's, versioned by its schema field; the
// writer reads one conversation at a time, so its memory stays flat however many it writes.
package eval

import (
	"context"
	_ "embed"
	"encoding/json"
	"io"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Schema names the format of a line; a change that is not an addition gets a new one.
const Schema = "parley.eval/1"

// Record is one line: one version of one conversation.
type Record struct {
	Schema       string       `json:"schema"`
	Conversation Conversation `json:"conversation"`
	// Version is the version (0: as first written); Shown says it is the one the
	// conversation shows.
	Version   int64      `json:"version"`
	Shown     bool       `json:"shown"`
	Messages  []Message  `json:"messages"`
	Questions []Question `json:"questions"`
	Feedback  []Feedback `json:"feedback"`
	Labels    []string   `json:"labels"`
	// Notes are staff's notes, only when the export asks for them.
	Notes []Note `json:"notes,omitempty"`
}

// Conversation is what a line says of its conversation.
type Conversation struct {
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	Agent     string    `json:"agent"`
	Backend   string    `json:"backend"`
	Owner     string    `json:"owner"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Message is a finished message: the person's (role user) or an agent's (role agent).
type Message struct {
	EventID     int64     `json:"event_id"`
	Role        string    `json:"role"`
	Author      string    `json:"author"`
	Text        string    `json:"text"`
	At          time.Time `json:"at"`
	Interrupted bool      `json:"interrupted,omitempty"`
	Stopped     bool      `json:"stopped,omitempty"`
}

// Question is a question an agent asked, with its fields and how it ended.
type Question struct {
	ID      int64          `json:"id"`
	Asker   string         `json:"asker"`
	Message string         `json:"message"`
	Fields  []domain.Field `json:"fields"`
	AskedAt time.Time      `json:"asked_at"`
	// Outcome is pending, answered, declined, cancelled, superseded or expired; Values the
	// answer's, Reason a decline's; By who resolved it; Waited how long it waited, in seconds.
	Outcome    string         `json:"outcome"`
	Values     map[string]any `json:"values,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	By         string         `json:"by,omitempty"`
	ResolvedAt *time.Time     `json:"resolved_at,omitempty"`
	Waited     float64        `json:"waited_seconds,omitempty"`
}

// Feedback is one person's opinion of a reply (item_id: its message's event_id) or a
// question (its id).
type Feedback struct {
	Item    string    `json:"item"`
	ItemID  int64     `json:"item_id"`
	By      string    `json:"by"`
	Rating  string    `json:"rating"`
	Comment string    `json:"comment"`
	Reasons []string  `json:"reasons"`
	At      time.Time `json:"at"`
}

// Note is a note of staff's.
type Note struct {
	Author string    `json:"author"`
	Body   string    `json:"body"`
	At     time.Time `json:"at"`
}

// Filter chooses what is written: conversations active since Since, of an agent, with a
// label; WithNotes adds staff's notes.
type Filter struct {
	Since     time.Time
	Agent     string
	Label     string
	WithNotes bool
}

// Source is the database, as the export reads it.
type Source interface {
	// EvalConversations returns up to limit conversations the filter selects, by id, after
	// the id given.
	EvalConversations(ctx context.Context, f Filter, after int64, limit int) ([]domain.Conversation, error)
	Versions(ctx context.Context, convID int64) (domain.Versions, int64, error)
	PathEvents(ctx context.Context, convID int64, p domain.Path, after int64) ([]domain.Event, error)
	Feedback(ctx context.Context, convID, userID int64) ([]domain.Feedback, error)
	ConversationLabels(ctx context.Context, convID int64) ([]string, error)
	Notes(ctx context.Context, convID int64) ([]domain.StaffNote, error)
}

// page is how many conversations the writer reads at once.
const page = 200

// Write writes a line for each version of each conversation the filter selects, oldest
// conversation first, and returns how many lines it wrote. backend names an agent's back end.
func Write(ctx context.Context, w io.Writer, src Source, f Filter, backend func(agent string) string) (int, error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	var after int64
	for {
		convs, err := src.EvalConversations(ctx, f, after, page)
		if err != nil {
			return n, err
		}
		for _, c := range convs {
			after = c.ID
			recs, err := records(ctx, src, c, f, backend)
			if err != nil {
				return n, err
			}
			for _, r := range recs {
				if err := enc.Encode(r); err != nil {
					return n, err
				}
				n++
			}
		}
		if len(convs) < page {
			return n, nil
		}
	}
}

// records are a conversation's lines, a version each.
func records(ctx context.Context, src Source, c domain.Conversation, f Filter, backend func(string) string) ([]Record, error) {
	vs, shown, err := src.Versions(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	fb, err := src.Feedback(ctx, c.ID, 0)
	if err != nil {
		return nil, err
	}
	labels, err := src.ConversationLabels(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	var notes []Note
	if f.WithNotes {
		ns, err := src.Notes(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			notes = append(notes, Note{Author: n.Author, Body: n.Body, At: n.At})
		}
	}
	conv := Conversation{ID: c.ID, Title: c.Title, Agent: c.Agent, Backend: backend(c.Agent), Owner: c.Owner, State: string(c.State),
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if len(vs) == 0 {
		vs = domain.Versions{{N: 0}}
	}
	var out []Record
	for _, v := range vs {
		evs, err := src.PathEvents(ctx, c.ID, vs.Path(v.N), 0)
		if err != nil {
			return nil, err
		}
		r := Record{Schema: Schema, Conversation: conv, Version: v.N, Shown: v.N == shown, Messages: []Message{}, Questions: []Question{},
			Feedback: []Feedback{}, Labels: labels, Notes: notes}
		if r.Labels == nil {
			r.Labels = []string{}
		}
		inVersion := map[int64]bool{}
		asked := map[int64]int{}
		for _, ev := range evs {
			switch ev.Kind {
			case domain.EventUserMessage, domain.EventAgentMessage:
				m := Message{EventID: ev.ID, Role: "user", Author: ev.Author, Text: ev.Text, At: ev.At}
				if ev.Kind == domain.EventAgentMessage {
					m.Role, m.Interrupted, m.Stopped = "agent", ev.Interrupted, ev.Stopped
				}
				r.Messages = append(r.Messages, m)
				inVersion[ev.ID] = true
			case domain.EventQuestionAsked:
				q := ev.Question
				fields := q.Fields
				if fields == nil {
					fields = []domain.Field{}
				}
				asked[q.ID] = len(r.Questions)
				r.Questions = append(r.Questions, Question{ID: q.ID, Asker: q.Asker, Message: q.Message, Fields: fields, AskedAt: ev.At, Outcome: "pending"})
			case domain.EventQuestionResolved:
				i, ok := asked[ev.Resolution.QuestionID]
				if !ok {
					continue
				}
				res := ev.Resolution
				q := &r.Questions[i]
				at := ev.At
				q.Outcome, q.Values, q.Reason, q.By, q.ResolvedAt = string(res.Outcome), res.Values, res.Reason, res.By, &at
				q.Waited = at.Sub(q.AskedAt).Seconds()
			}
		}
		for _, x := range fb {
			_, isQuestion := asked[x.ItemID]
			if x.Item == domain.ItemReply && !inVersion[x.ItemID] || x.Item == domain.ItemQuestion && !isQuestion {
				continue // of another version
			}
			reasons := x.Reasons
			if reasons == nil {
				reasons = []string{}
			}
			r.Feedback = append(r.Feedback, Feedback{Item: string(x.Item), ItemID: x.ItemID, By: x.By, Rating: string(x.Rating),
				Comment: x.Comment, Reasons: reasons, At: x.At})
		}
		out = append(out, r)
	}
	return out, nil
}

// JSONSchema is the JSON Schema every line validates against (docs/eval.md).
//
//go:embed schema.json
var JSONSchema []byte
