package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// memLog is a conversation's committed events.
type memLog []Event

func (l *memLog) Events(_ context.Context, _, after int64) ([]Event, error) {
	var out []Event
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

func (s *seen) Event(ev Event) error {
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
	*log = append(*log, Event{ID: 2, ConversationID: 1, Kind: EventQuestionResolved}, Event{ID: 3, ConversationID: 1, Kind: EventRunState, State: StateRunning})
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
