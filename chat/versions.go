package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-chat/parley/api"
	"github.com/parley-chat/parley/domain"
)

// A conversation has versions: regenerating the last reply or editing a message already
// answered starts another one, and the earlier one is kept. The event stream says when the
// conversation shows another version; parley chat then reads the conversation again and
// prints what the terminal has not shown of it (the edited message, or a whole other
// branch chosen in the browser). A message sent while the agent works is queued.

// regenerate asks for another answer to the person's last message, as a new version.
func (c *chatClient) regenerate(ctx context.Context, id int64, nonce string) error {
	return c.call(ctx, http.MethodPost, fmt.Sprintf("/conversations/%d/regenerate", id), api.Regenerate{Nonce: nonce}, nil)
}

// editMessage replaces the person's message (its event id) with text, as a new version.
func (c *chatClient) editMessage(ctx context.Context, id, event int64, text, nonce string) error {
	return c.call(ctx, http.MethodPost, fmt.Sprintf("/conversations/%d/messages/%d/edit", id, event), api.EditMessage{Text: text, Nonce: nonce}, nil)
}

func (c *chatClient) versions(ctx context.Context, id int64) (api.Versions, error) {
	var out api.Versions
	err := c.call(ctx, http.MethodGet, fmt.Sprintf("/conversations/%d/versions", id), nil, &out)
	return out, err
}

// regenerate is /regenerate: another answer to the last message, followed as any reply.
func (s *session) regenerate() {
	if err := s.c.regenerate(s.ctx, s.conv.ID, domain.NewNonce()); err != nil {
		s.problem(err)
		return
	}
	s.expect, s.expectRun = true, s.runID
}

// edit is /edit: "/edit TEXT" replaces the person's last message, "/edit #N TEXT" their Nth
// (as "/edit" alone lists them); the agent answers the new text, followed as any reply.
func (s *session) edit(args string) {
	page, err := s.c.conversation(s.ctx, s.conv.ID)
	if err != nil {
		s.problem(err)
		return
	}
	var mine []apiMessage
	for _, m := range page.Messages {
		if m.Role == "user" && (m.Author == s.me || m.Author == "") {
			mine = append(mine, m)
		}
	}
	n, text := len(mine), strings.TrimSpace(args)
	if num, rest, ok := strings.Cut(text, " "); ok && strings.HasPrefix(num, "#") {
		if i, err := strconv.Atoi(num[1:]); err == nil {
			n, text = i, strings.TrimSpace(rest)
		}
	}
	switch {
	case len(mine) == 0:
		s.problem(errors.New("you have no message here to edit"))
		return
	case text == "":
		s.note("Your messages:")
		for i, m := range mine {
			s.line(fmt.Sprintf("  #%d  %s", i+1, firstLine(m.Text, 70)))
		}
		s.note("/edit NEW TEXT replaces the last one, /edit #N NEW TEXT the Nth; the agent answers it again.")
		return
	case n < 1 || n > len(mine):
		s.problem(fmt.Errorf("no message #%d: you have %d here", n, len(mine)))
		return
	}
	if err := s.c.editMessage(s.ctx, s.conv.ID, mine[n-1].EventID, text, domain.NewNonce()); err != nil {
		s.problem(err)
		return
	}
	// The edited message comes back on the stream, not marked as sent from here: it shows.
	s.expect, s.expectRun = true, s.runID
}

// firstLine is a text's first line, cut to max runes.
func firstLine(text string, max int) string {
	line, _, more := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > max {
		line, more = string(r[:max-1]), true
	}
	if more {
		line += "…"
	}
	return line
}

// versionShown takes a conversation.version event: the conversation shows another version.
// It says which, and prints what the terminal has not shown of it.
func (s *session) versionShown(data json.RawMessage) error {
	var v api.VersionEvent
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	s.endStream()
	note := fmt.Sprintf("— version %d —", v.Version+1)
	if vs, err := s.c.versions(s.ctx, s.conv.ID); err == nil && len(vs.Versions) > 0 {
		note = fmt.Sprintf("— version %d of %d —", v.Version+1, len(vs.Versions))
	}
	s.note(note)
	page, err := s.c.conversation(s.ctx, s.conv.ID)
	if err != nil {
		s.problem(fmt.Errorf("read the conversation again: %w", err))
		return nil
	}
	s.catchUp(page)
	return nil
}

// catchUp shows the conversation as it now stands: the messages from where it differs from
// what the terminal showed, its questions pending, its state.
func (s *session) catchUp(p apiConversationPage) {
	i := 0
	for i < len(s.transcript) && i < len(p.Messages) && s.transcript[i].EventID == p.Messages[i].EventID {
		i++
	}
	s.transcript = s.transcript[:i]
	for _, m := range p.Messages[i:] {
		s.showMessage(m)
		s.record(m)
	}
	s.pending = s.pending[:0]
	for _, q := range p.Questions {
		if q.State == "pending" && !s.ours[q.ID] {
			s.pending = append(s.pending, q)
		}
	}
	if s.asking != 0 && !slices.ContainsFunc(s.pending, func(q apiQuestion) bool { return q.ID == s.asking }) {
		s.resolvedAsking = true // not asked in the version shown
	}
	s.state = p.Conversation.State
}

// shownMessage is a message of the version shown that the terminal has printed.
type shownMessage struct {
	EventID   int64
	MessageID string
}

// record notes a message printed (or sent from here), so that it is not printed again.
func (s *session) record(m apiMessage) {
	if !s.recorded(m) {
		s.transcript = append(s.transcript, shownMessage{m.EventID, m.MessageID})
	}
}

// recorded reports whether a message was printed already.
func (s *session) recorded(m apiMessage) bool {
	return slices.ContainsFunc(s.transcript, func(r shownMessage) bool {
		return (m.EventID != 0 && r.EventID == m.EventID) || (m.MessageID != "" && r.MessageID == m.MessageID)
	})
}

// queuedNote takes a message.queued event: a message waits for the agent to finish.
func (s *session) queuedNote(data json.RawMessage) {
	var d api.QueuedEvent
	if json.Unmarshal(data, &d) != nil {
		return
	}
	if a := d.Queued.Author; a != "" && a != s.me {
		s.note(fmt.Sprintf("(%s's message is queued: it will be sent when the agent finishes)", a))
		return
	}
	s.note("(queued: will be sent when the agent finishes)")
}

// unqueuedNote takes a message.unqueued event: a queued message was sent (its message
// follows) or withdrawn.
func (s *session) unqueuedNote(data json.RawMessage) {
	var d api.UnqueuedEvent
	if json.Unmarshal(data, &d) == nil && !d.Sent {
		s.note("(a queued message was withdrawn)")
	}
}
