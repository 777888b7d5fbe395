package openai

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/parley-chat/parley/domain"
)

// reply is one finished model reply.
type reply struct {
	content string
	calls   []toolCall
	finish  string
	// held says the text was held back (it may be a structured response): nothing of it
	// reached the Output yet.
	held bool
}

// complete sends msgs and streams the reply: text goes to out as it arrives, except a reply
// that starts like JSON, which is held back until the end (see sink). On a fault the text
// so far is kept (shown and its message ended) and the error explains the fault.
func (a *Agent) complete(ctx context.Context, msgs []message, t turn, out domain.Output) (reply, error) {
	w := &watch{first: a.cfg.FirstByteTimeout, idle: a.cfg.IdleTimeout}
	req := a.request(msgs, t)
	req.Stream = true
	res, err := a.chat.post(ctx, req, w)
	if err == nil {
		defer res.Body.Close()
	}
	s := &sink{out: out}
	var calls assembler
	var finish string
	chunks := 0
	if err == nil {
		stream := newChunkStream(res)
		for stream.next() {
			chunks++
			if err := s.add(stream.d.text); err != nil {
				return reply{}, err
			}
			for _, p := range stream.d.calls {
				calls.add(p)
			}
			if stream.d.finish != "" {
				finish = stream.d.finish
			}
		}
		err = stream.err
	}
	switch {
	case ctx.Err() != nil:
		// Shutdown or cancellation: the runner keeps the open message as interrupted.
		if ferr := s.flush(); ferr != nil {
			return reply{}, ferr
		}
		return reply{}, ctx.Err()
	case err != nil:
		return reply{}, s.abort(a.requestFault(err, w))
	case finish == "length":
		return reply{}, s.abort(a.faultf(nil, "the reply was cut off by the model's length limit; what came is kept above"))
	case finish == "content_filter":
		return reply{}, s.abort(a.faultf(nil, "the model endpoint's content filter stopped the reply"))
	case finish == "":
		if _, ct, _ := w.response(); chunks == 0 && !isEventStream(ct) {
			return reply{}, s.abort(a.faultf(nil, "the model endpoint at %s answered with %q instead of an event stream: is the base URL right, and does it stream chat completions?", a.endpoint, ct))
		}
		return reply{}, s.abort(a.faultf(nil, "the model endpoint at %s closed the stream before the reply was complete", a.endpoint))
	}
	r := reply{content: s.text.String(), calls: calls.result(), finish: finish, held: s.hold}
	if len(r.calls) > 0 {
		// Text that came with tool calls is an ordinary message before the questions.
		if err := s.flush(); err != nil {
			return reply{}, err
		}
		r.held = false
		if err := out.EndMessage(); err != nil {
			return reply{}, err
		}
	}
	return r, nil
}

// request is the body of a step's request: the model, the messages and the tools of the turn.
func (a *Agent) request(msgs []message, t turn) chatRequest {
	r := chatRequest{Model: a.cfg.Model, Messages: make([]chatMessage, 0, len(msgs)), Temperature: a.cfg.Temperature}
	for _, m := range msgs {
		r.Messages = append(r.Messages, m.param())
	}
	r.Tools = a.tools(t)
	if t.final && len(r.Tools) > 0 {
		r.ToolChoice = "none"
	}
	return r
}

// param converts a message to the request's form. Any role but system, user and tool is
// the assistant's, whose turn that calls tools leaves content out when it has none.
func (m message) param() chatMessage {
	switch m.Role {
	case roleSystem, roleUser:
		return chatMessage{Role: m.Role, Content: &m.Content}
	case roleTool:
		return chatMessage{Role: roleTool, Content: &m.Content, ToolCallID: &m.CallID}
	}
	p := chatMessage{Role: roleAssistant}
	if len(m.Calls) == 0 || m.Content != "" {
		p.Content = &m.Content
	}
	for _, c := range m.Calls {
		p.ToolCalls = append(p.ToolCalls, chatCall{ID: c.ID, Type: "function",
			Function: chatFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	return p
}

// sink passes a reply's text to the Output as it streams, except a reply that starts with
// "{" or "```" (after white space): that one may be a structured response, so it is held
// back until the reply ends and the caller decides what to show. Either way the text is
// shown exactly once.
type sink struct {
	out     domain.Output
	text    strings.Builder
	decided bool
	hold    bool
	shown   int // bytes of text already passed to out
}

// add takes the next delta.
func (s *sink) add(delta string) error {
	if delta == "" {
		return nil
	}
	s.text.WriteString(delta)
	if !s.decided {
		t := strings.TrimLeftFunc(s.text.String(), unicode.IsSpace)
		hold, known := holdReply(t)
		if !known {
			return nil // too early to tell
		}
		s.decided, s.hold = true, hold
	}
	if s.hold {
		return nil
	}
	return s.flush()
}

// holdReply says whether a reply that begins with t may be a structured JSON response, which
// is held back until it ends; known is false while t is too short to tell. Only a bare "{"
// or a fence tagged json (or untagged) whose body starts with "{" is held: code answers stream.
func holdReply(t string) (hold, known bool) {
	switch {
	case t == "" || strings.HasPrefix("```", t):
		return false, false
	case strings.HasPrefix(t, "{"):
		return true, true
	case !strings.HasPrefix(t, "```"):
		return false, true
	}
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		if len(t) > 64 {
			return false, true
		}
		return false, false
	}
	if info := strings.TrimSpace(t[3:nl]); info != "" && !strings.EqualFold(info, "json") {
		return false, true
	}
	body := strings.TrimLeftFunc(t[nl+1:], unicode.IsSpace)
	if body == "" {
		return false, false
	}
	return body[0] == '{', true
}

// flush shows whatever of the text was not shown yet.
func (s *sink) flush() error {
	rest := s.text.String()[s.shown:]
	if rest == "" {
		return nil
	}
	s.shown = s.text.Len()
	if err := s.out.Text(rest); err != nil {
		return fmt.Errorf("store text: %w", err)
	}
	return nil
}

// abort keeps the text of a failed reply, held or not, as a finished message and returns
// the fault.
func (s *sink) abort(fault error) error {
	if err := s.flush(); err != nil {
		return err
	}
	if err := s.out.EndMessage(); err != nil {
		return err
	}
	return fault
}

// assembler puts tool calls together from their streamed pieces, by index.
type assembler struct {
	calls   []*toolCall
	byIndex map[int64]int
}

// add takes one piece. A piece with a new id at a known index starts a new call: some
// servers number every call 0.
func (as *assembler) add(d callPiece) {
	if as.byIndex == nil {
		as.byIndex = map[int64]int{}
	}
	i, ok := as.byIndex[d.index]
	if !ok || d.id != "" && as.calls[i].ID != "" && as.calls[i].ID != d.id {
		as.calls = append(as.calls, &toolCall{})
		i = len(as.calls) - 1
		as.byIndex[d.index] = i
	}
	c := as.calls[i]
	if c.ID == "" {
		c.ID = d.id
	}
	// The name comes whole in one piece, but some servers repeat it in every piece.
	if n := d.name; n != "" && n != c.Name {
		c.Name += n
	}
	c.Arguments += d.args
}

// result returns the calls in the order they started.
func (as *assembler) result() []toolCall {
	out := make([]toolCall, len(as.calls))
	for i, c := range as.calls {
		out[i] = *c
	}
	return out
}
