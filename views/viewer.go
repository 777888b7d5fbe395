package views

import (
	"context"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
)

// Viewer is the signed-in person as the page layout shows them: name, the staff desk's
// links, their conversations in the sidebar, the count of questions waiting for them.
type Viewer struct {
	ID         int64
	Name       string
	Staff      bool
	CanSignOut bool
	// Waiting counts the questions the person may answer; Latest is the conversation of
	// the newest of them.
	Waiting int
	Latest  domain.Conversation
	// NeedsReview counts the conversations of the review queue (staff).
	NeedsReview int
	// Sidebar is the person's conversations, newest activity first; Current the one the
	// page shows (0: none).
	Sidebar []domain.Conversation
	Current int64
	// Path is the path of the page shown (its top bar marks its own action).
	Path string
	// Theme is "light" or "dark" as the person chose, "" to follow the system.
	Theme string
	// TimeZone is the zone the person shows times in; "" for the browser's.
	TimeZone string
	// DayZone is the zone the sidebar's days are in: TimeZone's, else the browser's as
	// shell.js last said (a cookie), else UTC (nil).
	DayZone *time.Location
	// Live: the page opens the person's live stream (pages without a stream of their own).
	Live bool
	// Version is the count of changes to the person's conversations before the page read
	// them: its stream reads them again only if it has moved.
	Version uint64
}

type viewerKey struct{}

// WithViewer puts the signed-in person in ctx, for the layout of every page rendered with it.
func WithViewer(ctx context.Context, v Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// viewerOf is the signed-in person of ctx; the zero Viewer (nobody) when there is none.
func viewerOf(ctx context.Context) Viewer {
	v, _ := ctx.Value(viewerKey{}).(Viewer)
	return v
}

// Mode is how a conversation renders for the person looking at it: its owner writes in it;
// staff read it (ReadOnly), and answer its questions on the owner's behalf when OnBehalfOf
// is set (an action the audit log records).
type Mode struct {
	// Name is the viewer's account name.
	Name       string
	ReadOnly   bool
	Owner      string
	OnBehalfOf string
	// Groups are the groups the viewer is a member of: they answer those groups' questions.
	Groups []string
	// Closed says why nothing new starts in the owner's own conversation (they may no longer
	// use its agent): its questions stay answerable, its message box gives way to this.
	Closed string
	// Answers says the question shown alone is the viewer's to answer (its page, its form
	// posted): for a group of theirs, routed or escalated to them.
	Answers bool
	// AgentIcon is the icon of the conversation's agent, drawn beside its messages.
	AgentIcon string
	// Asker is the viewer on whose behalf the conversation's routed questions are asked
	// (its owner): they wait for those questions' people, and do not answer them.
	Asker string
}

// Writes reports whether the viewer starts new work in the conversation: its owner, while
// they may use its agent.
func (m Mode) Writes() bool { return !m.ReadOnly && m.Closed == "" }

// InGroup reports whether the viewer is a member of the group.
func (m Mode) InGroup(group string) bool {
	for _, g := range m.Groups {
		if strings.EqualFold(g, group) {
			return true
		}
	}
	return false
}

type modeKey struct{}

// WithMode puts the conversation's Mode in ctx, for every part of it rendered with ctx
// (the page, the stream's patches, a question's form).
func WithMode(ctx context.Context, m Mode) context.Context {
	return context.WithValue(ctx, modeKey{}, m)
}

func modeOf(ctx context.Context) Mode {
	m, _ := ctx.Value(modeKey{}).(Mode)
	return m
}

// authorLabel is how a person's message is signed: "You" to its writer, the writer's name
// to staff reading it.
func authorLabel(ctx context.Context, author string) string {
	if m := modeOf(ctx); m.ReadOnly && author != "" {
		return author
	}
	return "You"
}

// forViewer reports whether a routed question is the viewer's to answer: for a group they
// are a member of, or for them, and not asked on their own behalf.
func forViewer(m Mode, q domain.Question) bool {
	if m.Asker != "" {
		return false
	}
	return m.Answers || q.To != "" && m.InGroup(q.To) || q.ToPerson != "" && strings.EqualFold(q.ToPerson, m.Name)
}

// waitingFor says whom a routed question waits for, to those who do not answer it.
func waitingFor(m Mode, q domain.Question) string {
	who := q.Audience().Words()
	switch {
	case q.Type == domain.RequestApproval && m.Asker != "":
		return "This approval was asked on your behalf: it waits for " + who + " to approve. You do not approve it yourself."
	case q.Type == domain.RequestApproval:
		return "Waiting for " + who + " to approve."
	case m.Asker != "":
		return "This question was asked on your behalf: it waits for an answer from " + who + "."
	}
	return "Waiting for an answer from " + who + "."
}
