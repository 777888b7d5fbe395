package runner

import (
	"fmt"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func ev(id int64, kind domain.EventKind) domain.Event {
	return domain.Event{ID: id, ConversationID: 1, Kind: kind}
}

func TestHub(t *testing.T) {
	t.Run("AFollowerGetsEventsAndTheTextFromItsCursor", func(t *testing.T) {
		h := NewHub()
		f := h.Follow(1)
		defer f.Close()
		if _, ok := f.Since(Cursor{}, nil, nil); ok {
			t.Fatal("a new follower is served before it read the log")
		}
		f.Synced(10) // it read the log up to event 10
		h.Publish([]domain.Event{ev(11, domain.EventRunState)})
		h.Write(1, "5-1", "Bot", "Hello ")
		h.Write(1, "5-1", "Bot", "world")
		u, ok := f.Since(Cursor{Event: 10}, nil, nil)
		if !ok || len(u.Events) != 1 || u.Events[0].ID != 11 {
			t.Fatalf("events %+v, %v", u.Events, ok)
		}
		if m := u.Message; m.ID != "5-1" || m.Author != "Bot" || m.From != 0 || string(m.Text) != "Hello world" {
			t.Errorf("message %+v %q", m, m.Text)
		}
		// Further on: only what it lacks.
		h.Write(1, "5-1", "Bot", "!")
		u, _ = f.Since(Cursor{Event: 11, Message: "5-1", Bytes: 11}, nil, nil)
		if len(u.Events) != 0 || u.Message.From != 11 || string(u.Message.Text) != "!" {
			t.Errorf("second update %+v %q", u, u.Message.Text)
		}
		// A reconnect that knows the message but not how much of it: all of it.
		u, _ = f.Since(Cursor{Event: 11, Message: "5-1", Bytes: -1}, nil, nil)
		if u.Message.From != 0 || string(u.Message.Text) != "Hello world!" {
			t.Errorf("reconnect %+v %q", u.Message, u.Message.Text)
		}
	})
	t.Run("TheFinishedMessageEndsTheLiveText", func(t *testing.T) {
		h := NewHub()
		f := h.Follow(1)
		defer f.Close()
		f.Synced(0)
		h.Write(1, "1-1", "Bot", "Hi")
		h.Publish([]domain.Event{{ID: 1, ConversationID: 1, Kind: domain.EventAgentMessage, MessageID: "1-1", Text: "Hi"}})
		h.Write(1, "1-1", "Bot", " late") // a writer of the ended message changes nothing
		u, _ := f.Since(Cursor{Message: "1-1", Bytes: 2}, nil, nil)
		if len(u.Events) != 1 || u.Message.ID != "" {
			t.Errorf("update %+v: want the finished message and no live text", u)
		}
	})
	t.Run("OnlyItsOwnRunsEndEndsALiveMessage", func(t *testing.T) {
		h := NewHub()
		f := h.Follow(1)
		defer f.Close()
		f.Synced(0)
		h.RunWriter(1, 2, 0, "7-1", "Bot").Write("Next")
		// The end of run 1, heard after run 2 began writing (as from another instance).
		h.Publish([]domain.Event{{ID: 1, ConversationID: 1, RunID: 1, Kind: domain.EventRunState, State: domain.StateDone}})
		if u, _ := f.Since(Cursor{Event: 1}, nil, nil); u.Message.ID != "7-1" || string(u.Message.Text) != "Next" {
			t.Fatalf("update %+v: want run 2's message still live", u)
		}
		h.Publish([]domain.Event{{ID: 2, ConversationID: 1, RunID: 2, Kind: domain.EventRunState, State: domain.StateFailed}})
		if u, _ := f.Since(Cursor{Event: 2}, nil, nil); u.Message.ID != "" {
			t.Errorf("update %+v: run 2's end ends its message", u)
		}
	})
	t.Run("TextFromAnotherInstanceIsWrittenOnceWhateverOverlaps", func(t *testing.T) {
		h := NewHub()
		var first []int64
		h.OnFollow(func(id int64) { first = append(first, id) })
		f, g := h.Follow(1), h.Follow(1) // one hook for the conversation's first follower
		defer f.Close()
		defer g.Close()
		f.Synced(0)
		w := h.RunWriter(1, 2, 0, "2-1", "Bot")
		// What the drafts stored hold, then the batches that come after, overlapping it.
		for _, p := range []struct {
			at   int
			text string
			gap  bool
		}{{0, "Hello wor", false}, {6, "world", false}, {0, "Hello", false}, {15, "again", true}, {11, "! Bye", false}} {
			if gap := w.WriteAt(p.at, p.text); gap != p.gap {
				t.Errorf("WriteAt(%d, %q) gap = %v; want %v", p.at, p.text, gap, p.gap)
			}
		}
		if u, _ := f.Since(Cursor{}, nil, nil); string(u.Message.Text) != "Hello world! Bye" {
			t.Errorf("live text %q; want each byte once", u.Message.Text)
		}
		if h.Follow(2).Close(); fmt.Sprint(first) != "[1 2]" {
			t.Errorf("OnFollow heard %v; want each conversation's first follower", first)
		}
		// A conversation whose message is being written here needs nothing from elsewhere.
		first = nil
		f.Close()
		g.Close()
		if h.Follow(1).Close(); len(first) != 0 {
			t.Errorf("OnFollow heard %v while the message is written here", first)
		}
	})
	t.Run("DeltasCountsThePiecesWritten", func(t *testing.T) {
		h := NewHub()
		f := h.Follow(1)
		defer f.Close()
		h.Write(1, "1-1", "Bot", "Hel")
		h.Writer(2, "2-1", "Bot").Write("lo") // another conversation counts too
		h.Write(1, "1-1", "Bot", "!")
		h.Publish([]domain.Event{{ID: 1, ConversationID: 1, Kind: domain.EventAgentMessage, MessageID: "1-1", Text: "Hel!"}})
		h.Write(1, "1-1", "Bot", " late") // the message has ended: nothing is written
		if got := h.Deltas(); got != 3 {
			t.Errorf("Deltas = %d, want 3", got)
		}
	})
	t.Run("AFollowerThatFellBehindGetsEverythingInOneUpdate", func(t *testing.T) {
		h := NewHub()
		f := h.Follow(1)
		defer f.Close()
		f.Synced(0)
		w := h.Writer(1, "1-1", "Bot")
		for i := range 1000 {
			w.Write(fmt.Sprint(i % 10))
		}
		<-f.Wake() // one signal, however many writes
		select {
		case <-f.Wake():
			t.Error("a second signal queued")
		default:
		}
		u, _ := f.Since(Cursor{}, nil, nil)
		if len(u.Message.Text) != 1000 {
			t.Errorf("got %d bytes, want all 1000", len(u.Message.Text))
		}
	})
	t.Run("TheReplayBufferIsBoundedAndSaysWhereItBegins", func(t *testing.T) {
		h := NewHub()
		h.maxEvents = 4
		f := h.Follow(1)
		defer f.Close()
		for id := int64(1); id <= 10; id++ {
			h.Publish([]domain.Event{ev(id, domain.EventPlan)})
		}
		// The first event published (1) and those after are known; 1..6 were let go.
		if _, ok := f.Since(Cursor{Event: 5}, nil, nil); ok {
			t.Error("served from the buffer from event 5, which it let go of")
		}
		u, ok := f.Since(Cursor{Event: 6}, nil, nil)
		if !ok || len(u.Events) != 4 || u.Events[0].ID != 7 {
			t.Errorf("from 6: %+v, %v; want 7..10 from memory", u.Events, ok)
		}
		// A follower that reads the log up to 8 cannot lower what was let go.
		f.Synced(3)
		if _, ok := f.Since(Cursor{Event: 5}, nil, nil); ok {
			t.Error("Synced below what the buffer let go of")
		}
	})
	t.Run("WritersNeverWaitForFollowers", func(t *testing.T) {
		h := NewHub()
		var followers []*Follower
		for range 100 {
			followers = append(followers, h.Follow(1)) // none of them reads
		}
		w := h.Writer(1, "1-1", "Bot")
		for range 10000 {
			w.Write("x")
		}
		h.Publish([]domain.Event{{ID: 1, ConversationID: 1, Kind: domain.EventAgentMessage, MessageID: "1-1"}})
		for _, f := range followers {
			f.Close()
		}
		if len(h.convs) != 0 {
			t.Errorf("the hub still holds %d conversations nobody follows or writes in", len(h.convs))
		}
	})
	t.Run("ConversationsNobodyFollowsAreSkipped", func(t *testing.T) {
		h := NewHub()
		h.Publish([]domain.Event{ev(1, domain.EventPlan)})
		if len(h.convs) != 0 {
			t.Errorf("the hub keeps a conversation nobody follows")
		}
	})
}
