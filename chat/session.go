package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
)

// session is one run of parley chat: the conversation as the event stream tells it, what
// is being asked, and the terminal. Only its own goroutine writes to out.
type session struct {
	c      *chatClient
	ctx    context.Context
	out    io.Writer
	errw   io.Writer // errors that do not end the session
	tty    bool      // standard input is a terminal: prompts are drawn
	color  bool      // standard output is a terminal too: a little ANSI style
	md     *markdown // agents' Markdown rendered for the terminal; nil: printed as it came
	me     string
	script *answerScript
	conv   apiConversation

	lines  <-chan inputLine
	events chan sseEvent
	sigs   <-chan os.Signal

	state     string // the run's state, as the last run.state said
	runError  string
	runID     int64
	expect    bool  // a message (or retry) was sent and its run has not said it started
	expectRun int64 // the run id when it was sent
	queued    *string
	inputOver bool // standard input ended (not a terminal): decline what is asked, then exit
	// declineAtEnd are the questions pending when the input ended: those are declined; a
	// question asked after that ends the session (exit 3), rather than declining forever.
	declineAtEnd []int64
	unsent       int // messages the server refused, with no person there to try again

	pending        []apiQuestion  // pending questions, oldest first
	ours           map[int64]bool // questions this session resolved
	asking         int64          // the question being prompted
	resolvedAsking bool           // ...was resolved elsewhere meanwhile
	asked          int            // questions asked so far (for "question N")
	atYou          bool           // at the you> prompt: a question takes its place

	sent     map[string]bool // nonces of the messages sent from here whose message.done is still to come
	streamID string          // the agent message being streamed, and its text so far
	streamed strings.Builder
	streamBy string // its author
	// With md: how much of streamed is shown rendered, in how many blocks; the rest is on
	// the live line, if it is shown.
	rendered  int
	blocks    int
	liveShown bool
	lastPlan  string
	// transcript are the messages of the version shown that were printed (or sent from
	// here), in order: after another version shows, what differs from them is printed.
	transcript []shownMessage

	prompt        string // the prompt being shown, drawn again after output breaks it
	promptShown   bool
	midLine       bool // the last output did not end its line (a message streaming)
	lastInterrupt time.Time
}

// ANSI styles, used only when both ends are a terminal.
const (
	styleBold = "1"
	styleDim  = "2"
	styleName = "1;36"
)

func (s *session) style(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// emit writes text, first ending a prompt line it would break.
func (s *session) emit(text string) {
	if text == "" {
		return
	}
	s.clearLive()
	if s.promptShown {
		io.WriteString(s.out, "\n")
		s.promptShown = false
	}
	io.WriteString(s.out, text)
	s.midLine = !strings.HasSuffix(text, "\n")
}

// line writes one line of its own.
func (s *session) line(text string) {
	s.endLine()
	s.emit(text + "\n")
}

// endLine ends a line left open (a streamed message), or erases the live line.
func (s *session) endLine() {
	s.clearLive()
	if s.midLine {
		s.emit("\n")
	}
}

// note writes a remark of the client's own (not the conversation's).
func (s *session) note(text string) { s.line(s.style(styleDim, text)) }

// problem reports an error that does not end the session, on standard error.
func (s *session) problem(err error) {
	s.endLine()
	s.endPrompt()
	fmt.Fprintln(s.errw, s.style(styleBold, "error:")+" "+err.Error())
}

// drawPrompt shows a prompt on a terminal; input that is not one gets none.
func (s *session) drawPrompt(prompt string) {
	s.prompt = prompt
	if !s.tty {
		return
	}
	s.endLine()
	io.WriteString(s.out, prompt)
	s.promptShown = true
}

// name is how a message's author is shown: "you" for this person.
func (s *session) name(role, author string) string {
	if role == "user" {
		if author == s.me || author == "" {
			return "you"
		}
		return author
	}
	return cmp.Or(author, s.conv.AgentTitle, s.conv.Agent, "agent")
}

// showPage prints a conversation as it stands (--conversation) and takes its state.
func (s *session) showPage(p apiConversationPage) {
	s.conv = p.Conversation
	s.note(fmt.Sprintf("Conversation %d with %s: %s", p.Conversation.ID, cmp.Or(p.Conversation.AgentTitle, p.Conversation.Agent), p.Conversation.Title))
	for _, m := range p.Messages {
		s.showMessage(m)
		s.record(m)
	}
	for _, q := range p.Queued {
		s.note(fmt.Sprintf("(queued: %q, will be sent when the agent finishes)", firstLine(q.Text, 60)))
	}
	if p.Plan != nil {
		s.showPlan(p.Plan)
	}
	for _, q := range p.Questions {
		if q.State == "pending" {
			s.pending = append(s.pending, q)
		}
	}
	s.state = p.Conversation.State
}

func (s *session) showMessage(m apiMessage) {
	text := m.Text
	for _, d := range m.Documents {
		text += fmt.Sprintf(" [file: %s]", d.Name)
	}
	if s.md != nil && m.Role != "user" {
		s.showMarkdown(m.Author, m.Text)
		for _, d := range m.Documents {
			s.line("  [file: " + d.Name + "]")
		}
	} else {
		s.line(s.style(styleName, s.name(m.Role, m.Author)+">") + " " + text)
	}
	switch {
	case m.Stopped:
		s.note("(stopped)")
	case m.Interrupted:
		s.note("(interrupted)")
	}
}

func (s *session) showPlan(p *domain.Plan) {
	done, now := 0, ""
	for _, st := range p.Steps {
		switch string(st.Status) {
		case "done", "skipped":
			done++
		case "in_progress":
			if now == "" {
				now = st.Title
			}
		}
	}
	text := "plan: "
	if title := strings.TrimSpace(p.Title); title != "" {
		text += title + ", "
	}
	text += fmt.Sprintf("%d/%d done", done, len(p.Steps))
	if now != "" {
		text += ", now: " + now
	}
	if text != s.lastPlan {
		s.lastPlan = text
		s.note(text)
	}
}

// handle takes one event of the stream: it prints what a person should see and keeps the
// state the loop decides by.
func (s *session) handle(ev sseEvent) error {
	if ev.Err != nil {
		return ev.Err
	}
	switch ev.Type {
	case api.MessageDelta:
		var d api.Delta
		if json.Unmarshal(ev.Data, &d) == nil {
			s.delta(d.MessageID, d.Author, d.Offset, d.Text)
		}
	case api.MessageDone:
		var m apiMessage
		if json.Unmarshal(ev.Data, &m) == nil {
			s.done(m)
		}
	case api.Plan:
		var d api.PlanEvent
		if json.Unmarshal(ev.Data, &d) == nil && d.Plan != nil {
			s.showPlan(d.Plan)
		}
	case api.QuestionAsked:
		var d api.AskedEvent
		if json.Unmarshal(ev.Data, &d) == nil && !s.ours[d.Question.ID] && (d.Question.State == "" || d.Question.State == "pending") {
			s.expect = false
			for _, q := range s.pending {
				if q.ID == d.Question.ID {
					return nil
				}
			}
			s.pending = append(s.pending, d.Question)
		}
	case api.QuestionResolved:
		var d api.ResolvedEvent
		if json.Unmarshal(ev.Data, &d) == nil {
			s.resolved(d.QuestionID, d.Resolution)
		}
	case api.RunState:
		var d api.RunStateEvent
		if json.Unmarshal(ev.Data, &d) == nil {
			s.runState(d.RunID, string(d.State), d.Error)
		}
	case api.ToolCall:
		var d api.ToolEvent
		if json.Unmarshal(ev.Data, &d) == nil && d.ToolCall != nil {
			s.toolCall(d.ToolCall)
		}
	case api.VersionShown:
		return s.versionShown(ev.Data)
	case api.MessageQueued:
		s.queuedNote(ev.Data)
	case api.MessageUnqueued:
		s.unqueuedNote(ev.Data)
	case api.ConversationDeleted:
		return errDeleted
	}
	return nil
}

// delta prints a piece of the agent message being written, from where the output is.
func (s *session) delta(id, author string, offset int, text string) {
	s.expect = false
	if s.recorded(apiMessage{MessageID: id}) {
		return // shown already: read with the conversation when another version showed
	}
	if id != s.streamID {
		s.endStream()
		s.streamID, s.streamBy = id, author
		if s.md == nil {
			s.emit(s.style(styleName, s.name("agent", author)+">") + " ")
		}
	}
	if end := offset + len(text); end <= s.streamed.Len() {
		return
	} else if offset < s.streamed.Len() {
		text = text[s.streamed.Len()-offset:]
	}
	s.streamed.WriteString(text)
	if s.md != nil {
		s.streamMarkdown()
		return
	}
	s.emit(text)
}

// endStream ends the message being streamed, if one is: what is left of it is shown.
func (s *session) endStream() {
	if s.md != nil {
		s.flushStream()
	}
	s.endLine()
	s.streamID, s.streamBy = "", ""
	s.streamed.Reset()
	s.rendered, s.blocks = 0, 0
}

// done prints a finished message: of the one streamed, only what the pieces did not show.
func (s *session) done(m apiMessage) {
	if s.recorded(m) {
		return
	}
	defer s.record(m)
	if m.Role == "user" {
		if m.Nonce != "" && s.sent[m.Nonce] {
			delete(s.sent, m.Nonce)
			return
		}
		s.showMessage(m)
		return
	}
	if m.MessageID == "" || m.MessageID != s.streamID {
		s.showMessage(m)
		return
	}
	if s.md != nil {
		s.doneMarkdown(m)
		s.streamID = ""
		s.endStream()
		return
	}
	shown := s.streamed.String()
	s.streamID = ""
	s.streamed.Reset()
	switch {
	case strings.HasPrefix(m.Text, shown):
		s.emit(m.Text[len(shown):])
		s.endLine()
	case strings.HasPrefix(shown, m.Text):
		s.endLine() // the rest was a form, now asked as a question
	default:
		s.endLine()
		s.showMessage(m)
	}
}

// resolved drops a question resolved elsewhere (the browser, another terminal) and says so.
func (s *session) resolved(id int64, r *domain.Resolution) {
	was := s.drop(id)
	if s.ours[id] || (!was && s.asking != id) {
		return
	}
	if id == s.asking {
		s.resolvedAsking = true
	}
	text := fmt.Sprintf("(question %d was resolved elsewhere", id)
	if r != nil {
		text = fmt.Sprintf("(question %d was %s elsewhere", id, r.Outcome)
		if r.By != "" {
			text += " by " + r.By
		}
		if r.Via != "" {
			text += " with " + r.Via
		}
	}
	s.note(text + ")")
}

// drop removes a question from those pending; it reports whether it was there.
func (s *session) drop(id int64) bool {
	for i, q := range s.pending {
		if q.ID == id {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return true
		}
	}
	return false
}

func (s *session) runState(id int64, state, msg string) {
	if state == "running" || id != s.expectRun {
		s.expect = false
	}
	s.runID, s.state, s.runError = id, state, msg
	if state != "running" && state != "waiting" && s.streamID != "" {
		s.endStream()
	}
	switch state {
	case "failed":
		text := s.style(styleBold, "The run failed") + prefixed(": ", msg)
		if s.tty {
			text += " (type /retry to try again)"
		}
		s.line(text)
	case "stopped":
		s.note("(stopped)")
	case "interrupted":
		s.note("(interrupted: the server stopped; /retry goes on)")
	}
}

func (s *session) toolCall(tc *domain.ToolCall) {
	if tc.Update && tc.Status == "running" && tc.Error == "" {
		return // progress: too chatty for a terminal
	}
	text := fmt.Sprintf("tool %s: %s", strings.TrimPrefix(tc.Server+"__"+tc.Tool, "__"), tc.Status)
	if tc.Waiting != "" {
		text += " (" + tc.Waiting + ")"
	}
	s.note(text + prefixed(": ", tc.Error))
}
