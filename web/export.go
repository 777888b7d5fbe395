package web

import (
	"encoding/json"
	"mime"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/views"
)

// handleExportMarkdown downloads a conversation's timeline as Markdown.
func (s *Server) handleExportMarkdown(c echo.Context) error {
	d, err := s.timeline(c)
	if err != nil {
		return err
	}
	setDownload(c, exportName(d.Conversation, "md"))
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(views.TimelineMarkdown(d)))
}

// exportedConversation is a conversation as its JSON export holds it.
type exportedConversation struct {
	ID         int64     `json:"id"`
	Title      string    `json:"title"`
	Kind       string    `json:"kind"`
	Agent      string    `json:"agent"`
	AgentTitle string    `json:"agent_title"`
	Owner      string    `json:"owner"`
	State      string    `json:"state"`
	Language   string    `json:"language,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Version is the version exported (?version=N, else the one shown), Shown the one the
	// conversation shows, Versions how many it has.
	Version  int64 `json:"version"`
	Shown    int64 `json:"shown_version"`
	Versions int   `json:"versions"`
}

// exportedEvent is one event of the log: its header and its payload as stored.
type exportedEvent struct {
	ID      int64            `json:"id"`
	RunID   int64            `json:"run_id,omitempty"`
	Version int64            `json:"version"`
	Kind    domain.EventKind `json:"kind"`
	At      time.Time        `json:"at"`
	Data    domain.Event     `json:"data"`
}

// exportedQuestion is a question with how it was resolved and how long it waited.
type exportedQuestion struct {
	domain.Question
	AskedAt       time.Time          `json:"asked_at"`
	Resolution    *domain.Resolution `json:"resolution,omitempty"`
	WaitedSeconds float64            `json:"waited_seconds,omitempty"`
}

// conversationExport is the JSON export: the conversation, its questions and answers, its
// whole event log (streamed pieces of text aside: each message is there whole) and audit.
type conversationExport struct {
	Conversation exportedConversation `json:"conversation"`
	Questions    []exportedQuestion   `json:"questions"`
	Events       []exportedEvent      `json:"events"`
	Audit        []domain.AuditEntry  `json:"audit"`
	// Feedback is what people thought of its replies and questions.
	Feedback   []api.Feedback `json:"feedback"`
	ExportedAt time.Time      `json:"exported_at"`
}

// handleExportJSON downloads a conversation as JSON.
func (s *Server) handleExportJSON(c echo.Context) error {
	r, err := s.conversationRecord(c)
	if err != nil {
		return err
	}
	conv, events, audit := r.conv, r.events, r.audit
	out := conversationExport{Questions: []exportedQuestion{}, Events: []exportedEvent{}, Audit: audit, ExportedAt: s.now()}
	if out.Audit == nil {
		out.Audit = []domain.AuditEntry{}
	}
	out.Feedback = []api.Feedback{}
	for _, f := range r.feedback {
		out.Feedback = append(out.Feedback, api.FeedbackOf(f))
	}
	out.Conversation = exportedConversation{ID: conv.ID, Title: conv.Title, Kind: string(conv.Kind), Agent: conv.Agent, AgentTitle: s.conversationAgent(conv), Owner: conv.Owner,
		State: string(conv.State), Language: conv.Language, CreatedAt: conv.CreatedAt, UpdatedAt: conv.UpdatedAt,
		Version: r.version, Shown: conv.Version, Versions: len(r.versions)}
	asked := map[int64]int{}
	for _, ev := range events {
		switch ev.Kind {
		case domain.EventCheckpoint:
			continue
		case domain.EventQuestionAsked:
			asked[ev.Question.ID] = len(out.Questions)
			out.Questions = append(out.Questions, exportedQuestion{Question: *ev.Question, AskedAt: ev.At})
		case domain.EventQuestionResolved:
			if i, ok := asked[ev.Resolution.QuestionID]; ok {
				r := *ev.Resolution
				out.Questions[i].Resolution = &r
				out.Questions[i].WaitedSeconds = ev.At.Sub(out.Questions[i].AskedAt).Seconds()
			}
		}
		out.Events = append(out.Events, exportedEvent{ID: ev.ID, RunID: ev.RunID, Version: ev.Version, Kind: ev.Kind, At: ev.At, Data: ev})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	setDownload(c, exportName(conv, "json"))
	return c.Blob(http.StatusOK, "application/json; charset=utf-8", append(b, '\n'))
}

// setDownload makes the response a download named name, never cached by others.
func setDownload(c echo.Context, name string) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	h.Set(echo.HeaderCacheControl, "private, no-store")
}
