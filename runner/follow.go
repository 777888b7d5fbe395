package runner

import (
	"context"

	"github.com/parley-chat/parley/domain"
)

// Tail is where a follower's reader stands in its conversation, with the buffers reused from
// one catch-up to the next.
type Tail struct {
	Cur    Cursor
	events []domain.Event
	text   []byte
}

// Reader takes what a follower's reader lacks: each committed event (which moves its
// cursor on), then the message being written.
type Reader interface {
	Event(domain.Event) error
	Live(LiveText) error
}

// EventLog is where a catch-up reads the events the hub no longer holds.
type EventLog interface {
	Events(ctx context.Context, conversationID, after int64) ([]domain.Event, error)
}

// CatchUp hands r what it lacks after t.Cur: the events from the hub, or from log when the
// hub does not go back that far, then the message being written. An error of r's ends it.
func (f *Follower) CatchUp(ctx context.Context, log EventLog, t *Tail, r Reader) error {
	for {
		u, ok := f.Since(t.Cur, t.events[:0], t.text[:0])
		if !ok {
			if err := f.readLog(ctx, log, t, r); err != nil {
				return err
			}
			f.Synced(t.Cur.Event)
			continue
		}
		t.events, t.text = u.Events, u.Message.Text
		for _, ev := range u.Events {
			if err := r.Event(ev); err != nil {
				return err
			}
		}
		clear(t.events) // an idle reader holds no copy of what it was given
		if u.Message.ID != "" {
			if u.Message.After > t.Cur.Event {
				// The step writing began after events the hub has not had yet (on several
				// instances they come from the database's notifications, behind the text
				// written here): they are committed, so the log has them, and they go first.
				if err := f.readLog(ctx, log, t, r); err != nil {
					return err
				}
				if t.Cur.Event > u.Message.After {
					continue // the log went further, maybe past the message's end: ask the hub again
				}
			}
			return r.Live(u.Message)
		}
		return nil
	}
}

// readLog hands r the events of log after t.Cur.
func (f *Follower) readLog(ctx context.Context, log EventLog, t *Tail, r Reader) error {
	events, err := log.Events(ctx, f.id, t.Cur.Event)
	if err != nil {
		return err
	}
	for _, ev := range events {
		if err := r.Event(ev); err != nil {
			return err
		}
	}
	return nil
}
