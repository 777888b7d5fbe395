package toolserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parley-chat/parley/domain"
)

// Input is a server's request for input, as Parley puts it to the person: a form (Question
// has the fields), or a URL to open (Question.Link). Refusal is set when Parley declines
// the request itself, saying why (a form it cannot show, one that asks for a secret).
type Input struct {
	ID            string          `json:"id"`
	Mode          string          `json:"mode"`
	Question      domain.Question `json:"question"`
	Refusal       string          `json:"refusal,omitempty"`
	ElicitationID string          `json:"elicitation_id,omitempty"`
	Schema        json.RawMessage `json:"schema,omitempty"`
}

// Asker is who asks a server's question, as the card shows it: the spec requires that the
// person sees which server asks.
func Asker(server string) string { return "Tool server “" + server + "”" }

// input maps one input request of the server.
func (s *server) input(id string, ir sdk.InputRequest) Input {
	p, ok := ir.(*sdk.ElicitParams)
	if !ok {
		return Input{ID: id, Mode: "other", Refusal: fmt.Sprintf("The server asked for %s, which Parley does not offer tool servers.", inputKind(ir))}
	}
	in := Input{ID: id, Mode: p.Mode, ElicitationID: p.ElicitationID}
	if in.Mode == "" {
		in.Mode = "form"
		if p.URL != "" {
			in.Mode = "url"
		}
	}
	switch in.Mode {
	case "url":
		q, refusal := urlQuestion(s.cfg.Name, p)
		in.Question, in.Refusal = q, refusal
	case "form":
		if b, err := json.Marshal(p.RequestedSchema); err == nil {
			in.Schema = b
		}
		q, refusal := FormQuestion(s.cfg.Name, p.Message, in.Schema, s.cfg.AllowEmail)
		in.Question, in.Refusal = q, refusal
	default:
		in.Refusal = fmt.Sprintf("The server asked in the mode %q, which Parley does not know.", p.Mode)
	}
	return in
}

func inputKind(ir sdk.InputRequest) string {
	switch ir.(type) {
	case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
		return "a completion of the model (sampling)"
	case *sdk.ListRootsParams:
		return "the list of roots"
	}
	return fmt.Sprintf("%T", ir)
}

// urlQuestion asks the person to open a URL: the server, the whole URL and why are shown,
// and the page opens only on their click.
func urlQuestion(server string, p *sdk.ElicitParams) (domain.Question, string) {
	if _, ok := domain.WebURL(p.URL); !ok {
		return domain.Question{}, fmt.Sprintf("The server sent the address %q to open, which is not a web address.", p.URL)
	}
	msg := strings.TrimSpace(p.Message)
	if msg == "" {
		msg = "The tool server asks you to open a page."
	}
	return domain.Question{Asker: Asker(server), Message: msg, Link: p.URL, Fields: []domain.Field{}, AllowCancel: true,
		SubmitLabel: "I have finished there"}, ""
}

// FormQuestion maps a form's requested schema onto the question model (see
// domain.SchemaQuestion), asked by the server; refusal says why Parley will not ask it.
func FormQuestion(server, message string, schema json.RawMessage, allowEmail bool) (domain.Question, string) {
	q := domain.Question{Asker: Asker(server), Message: strings.TrimSpace(message), AllowCancel: true}
	if q.Message == "" {
		q.Message = "The tool server asks for the following."
	}
	return domain.SchemaQuestion(q, schema, domain.SchemaOptions{AllowEmail: allowEmail})
}

// Respond is the answer sent back for an input request: accept with the person's typed
// answers (checked against the requested schema first), decline with nothing, cancel for
// a question cancelled, expired or set aside by a new message.
func Respond(in Input, res domain.Resolution) (Response, error) {
	action, content, err := domain.SchemaAnswer(in.Schema, res)
	if err != nil {
		return Response{}, err
	}
	if in.Mode != "form" {
		content = nil // a page was opened: nothing was typed
	}
	return Response{Action: action, Content: content}, nil
}

// sortInputs orders a round's requests by id, so that their questions come in a stable order.
func sortInputs(in []Input) {
	sort.Slice(in, func(i, j int) bool { return in[i].ID < in[j].ID })
}

// liveElicitation answers an elicitation/create sent in the middle of a call, the way of
// protocol revisions before 2026-07-28: the request is put to the person by the call it
// belongs to, which waits for the answer. The request does not say which call that is; the
// session it comes on does, since each call of such a server has a session of its own (see
// lease). A request that comes outside any call is cancelled (no person refused anything),
// and the log and the home page say which server asked.
func (s *server) liveElicitation(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	st := s.sessionOf(req.Session)
	var ask func(context.Context, Input) (Response, error)
	if st != nil && req.Params != nil {
		s.mu.Lock()
		if !s.perCallLocked(st) {
			// A server of a later revision that asks mid-call all the same: its calls get
			// sessions of their own from now on.
			s.askedLive = true
			s.log.Info("tool server asks in the middle of calls although it speaks a later revision; each call gets a session of its own", "protocol", st.protocol)
		}
		s.mu.Unlock()
		ask = st.only()
	}
	if ask == nil && st != nil && st.letGo() {
		// A call cut off before: the server goes on with it, and nobody waits for its answer.
		s.log.Debug("tool server asked for a call that was cut off; cancelled")
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	if ask == nil {
		s.mu.Lock()
		s.strayAsked = true
		s.mu.Unlock()
		s.log.Warn("tool server asked something Parley could not tie to one of its calls; cancelled")
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	in := s.input(fmt.Sprintf("live-%d", liveSeq.Add(1)), req.Params)
	r, err := ask(ctx, in)
	if err != nil {
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	return &sdk.ElicitResult{Action: r.Action, Content: r.Content}, nil
}

// liveSeq numbers the live requests, for their question keys.
var liveSeq atomic.Int64

// complete passes on the server's word that an interaction at a URL is complete.
func (s *server) complete(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	p := s.pool
	if req.Params == nil || p.onComplete == nil {
		return
	}
	key := s.cfg.Name + " " + req.Params.ElicitationID
	p.awaitMu.Lock()
	id, ok := p.awaiting[key]
	delete(p.awaiting, key)
	p.awaitMu.Unlock()
	if ok {
		p.onComplete(s.cfg.Name, id)
	}
}
