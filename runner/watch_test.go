package runner

import (
	"context"
	"testing"

	"github.com/parley-chat/parley/domain"
)

func TestWatch_WakesTheOwnerAndEveryoneWatchers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	owners := map[int64]int64{1: 10, 2: 20}
	w := NewWatch(ctx, func(_ context.Context, id int64) (int64, bool, error) {
		if a, ok := owners[id]; ok {
			return a, false, nil
		}
		return 0, false, domain.Errorf(domain.ENOTFOUND, "no")
	}, nil)
	ann, bob, staff := w.Subscribe(10), w.Subscribe(20), w.Subscribe(0)
	defer bob.Close()

	w.Publish([]domain.Event{{ConversationID: 1}})
	<-ann.C
	<-staff.C
	select {
	case <-bob.C:
		t.Fatal("bob was woken by ann's conversation")
	default:
	}
	// Once known, the owner is remembered; a rename wakes without an event.
	delete(owners, 1)
	w.Publish([]domain.Event{{ConversationID: 1}})
	<-ann.C
	w.Changed(2, 20)
	<-bob.C
	// Versions count the changes: an account's own, and everyone's.
	if v := w.Version(10); v != 2 {
		t.Errorf("ann's version = %d after two changes", v)
	}
	if v := w.Version(0); v != 3 {
		t.Errorf("everyone's version = %d after three changes", v)
	}
	// Deleted: forgotten, and counted.
	w.Forget(1, 10)
	<-ann.C
	if v := w.Version(10); v != 3 {
		t.Errorf("ann's version = %d after a deletion", v)
	}
	ann.Close()
	staff.Close()
	w.Publish([]domain.Event{{ConversationID: 1}}) // whose it is must be asked again
	select {
	case <-ann.C:
		t.Error("a closed watcher was woken")
	case <-bob.C:
		t.Error("bob was woken")
	default:
	}
}

func TestWatch_WakesWhomAConversationsQuestionsAreFor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	audience := []int64{40}
	w := NewWatch(ctx, func(_ context.Context, id int64) (int64, bool, error) { return 30, false, nil },
		func(_ context.Context, id int64) ([]int64, error) { return audience, nil })
	owner, member := w.Subscribe(30), w.Subscribe(40)
	defer owner.Close()
	defer member.Close()
	w.Publish([]domain.Event{{ConversationID: 3}})
	<-owner.C
	select {
	case <-member.C:
		t.Fatal("a member was woken by a conversation nobody addressed")
	default:
	}
	w.Address(3)
	<-member.C
	w.Publish([]domain.Event{{ConversationID: 3}})
	<-owner.C
	<-member.C
}
