package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
)

// memLog is a conversation's committed events.
type memLog []domain.Event

func (l *memLog) Events(_ context.Context, _, after int64) ([]domain.Event, error) {
	var out []domain.Event
	for _, ev := range *l {
		if ev.ID > after {
			out = append(out, ev)
		}
	}
	return out, nil
}

// seen is a Reader that writes down what it is handed, in order.
type seen struct {
	t   *Tail
	got []string
}

func (s *seen) Event(ev domain.Event) error {
	s.t.Cur.Event = ev.ID
	s.got = append(s.got, fmt.Sprintf("event %d", ev.ID))
	return nil
}

func (s *seen) Live(m LiveText) error {
	s.got = append(s.got, "text "+string(m.Text))
	return nil
}

// A reply's text goes to a stream after the events committed before its step began, even
// when they reach the hub after the text (on several instances they come from the
// database's notifications): the answer that resumed the run shows before the reply to it.
func TestCatchUp_TextAfterTheEventsBeforeItsStep(t *testing.T) {
	log := &memLog{{ID: 1, ConversationID: 1}}
	h := NewHub()
	f := h.Follow(1)
	defer f.Close()
	var tail Tail
	r := &seen{t: &tail}
	if err := f.CatchUp(context.Background(), log, &tail, r); err != nil { // reads the log: event 1
		t.Fatal(err)
	}
	r.got = nil
	// Events 2 and 3 are committed, not heard yet; the resumed step writes.
	*log = append(*log, domain.Event{ID: 2, ConversationID: 1, Kind: domain.EventQuestionResolved}, domain.Event{ID: 3, ConversationID: 1, Kind: domain.EventRunState, State: domain.StateRunning})
	h.RunWriter(1, 1, 3, "3-1", "Bot").Write("Noted")
	if err := f.CatchUp(context.Background(), log, &tail, r); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(r.got, ", "), "event 2, event 3, text Noted"; got != want {
		t.Errorf("handed %s, want %s", got, want)
	}
	// Heard late, the events are not handed twice.
	h.Publish((*log)[1:])
	r.got = nil
	h.Write(1, "3-1", "Bot", " it")
	if err := f.CatchUp(context.Background(), log, &tail, r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.got, ", "); strings.Contains(got, "event") {
		t.Errorf("then handed %s, want only the text", got)
	}
}

// An event is committed before the hub hears it, so a reader can have from the log the end
// of a message the hub still holds open: it gets no live text of it, which would show the
// message a second time, unfinished. Its text waits until the hub hears that far.
func TestCatchUp_NoTextOfAMessageItsEventsEnded(t *testing.T) {
	for _, tc := range []struct {
		name string
		// followFirst: the reader follows before the hub hears event 1, which holds the
		// conversation's events from there on; else after, and it reads the log first.
		followFirst bool
		cur         int64 // the reader's cursor: 3 for a page drawn from the log after the end
		want        string
	}{
		{"APageDrawnFromTheLog", true, 3, ""},
		{"AReaderTheHubDoesNotGoBackFarEnoughFor", false, 0, "event 1, event 2, event 3"},
		{"AReaderThatLacksTheEventsBeforeTheStep", true, 1, "event 2, event 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &memLog{{ID: 1, ConversationID: 1, Kind: domain.EventUserMessage}}
			h := NewHub()
			var f *Follower
			if tc.followFirst {
				f = h.Follow(1)
				defer f.Close()
				f.Synced(0)
			}
			h.Publish(*log)
			// The step began after event 2 (heard late when it runs on another instance); its
			// message ended: event 3 is committed, and the hub has not heard it yet.
			h.RunWriter(1, 1, 2, "2-1", "Bot").Write("Hello")
			*log = append(*log, domain.Event{ID: 2, ConversationID: 1, Kind: domain.EventRunState, State: domain.StateRunning},
				domain.Event{ID: 3, ConversationID: 1, Kind: domain.EventAgentMessage, MessageID: "2-1", Text: "Hello"})
			if !tc.followFirst {
				f = h.Follow(1)
				defer f.Close()
			}
			tail := Tail{Cur: Cursor{Event: tc.cur}}
			r := &seen{t: &tail}
			if err := f.CatchUp(context.Background(), log, &tail, r); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(r.got, ", "); got != tc.want {
				t.Errorf("handed %q, want %q", got, tc.want)
			}
			// Heard, the events end the message: nothing more.
			r.got = nil
			h.Publish((*log)[1:])
			if err := f.CatchUp(context.Background(), log, &tail, r); err != nil {
				t.Fatal(err)
			}
			if len(r.got) != 0 {
				t.Errorf("then handed %v, want nothing", r.got)
			}
		})
	}
}
