package agent

import (
	"context"
	"testing"
)

func TestWatch_WakesTheOwnerAndEveryoneWatchers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owners := map[int64]int64{1: 10, 2: 20}
	w := NewWatch(ctx, func(_ context.Context, id int64) (int64, error) {
		if a, ok := owners[id]; ok {
			return a, nil
		}
		return 0, Errorf(ENOTFOUND, "no")
	})
	ann, bob, staff := w.Subscribe(10), w.Subscribe(20), w.Subscribe(0)
	defer bob.Close()

	w.Publish([]Event{{ConversationID: 1}})
	<-ann.C
	<-staff.C
	select {
	case <-bob.C:
		t.Fatal("bob was woken by ann's conversation")
	default:
	}
	// Once known, the owner is remembered; a rename wakes without an event.
	delete(owners, 1)
	w.Publish([]Event{{ConversationID: 1}})
	<-ann.C
	w.Changed(2, 20)
	<-bob.C
	// A closed watcher is not woken; with nobody watching, Publish notes nothing.
	ann.Close()
	staff.Close()
	bob.Close()
	w.Publish([]Event{{ConversationID: 3}})
	w.mu.Lock()
	n := len(w.changed)
	w.mu.Unlock()
	if n != 0 {
		t.Errorf("%d changes noted with nobody watching", n)
	}
}
