package store_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

// A conversation's state is that of the newest run of the version it shows: the lists, the
// counts and Retry follow the version chosen, and Retry takes up that version's run.
func TestDB_RunState_FollowsTheVersionShown(t *testing.T) {
	db := storetest.New(t)
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	state := func(want domain.RunState) {
		t.Helper()
		got, err := db.Conversation(ctx, c.ID)
		if err != nil || got.State != want {
			t.Fatalf("state = %q, %v; want %q", got.State, err, want)
		}
		wantCounts := map[domain.RunState]int{want: 1}
		if want == "" { // no run yet: neither counted nor listed by a state
			wantCounts = map[domain.RunState]int{}
		}
		counts, err := db.RunStateCounts(ctx)
		if err != nil || !maps.Equal(counts, wantCounts) {
			t.Fatalf("RunStateCounts = %v, %v; want %v", counts, err, wantCounts)
		}
		if want == "" {
			return
		}
		list, _, err := db.ListConversations(ctx, domain.ConversationFilter{State: want})
		if err != nil || len(list) != 1 || list[0].State != want {
			t.Fatalf("conversations %s = %+v, %v; want this one", want, list, err)
		}
	}
	state("")

	step, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "one", Author: "ann"}))
	if err != nil {
		t.Fatal(err)
	}
	state(domain.StateRunning)
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	first := in.RunID
	if _, err := db.FinishStep(ctx, step, nil, errors.New("broken")); err != nil {
		t.Fatal(err)
	}
	state(domain.StateFailed)

	// Regenerating needs a reply to replace: the failed run left none, so write one.
	step, err = stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "two", Author: "ann"}))
	if err != nil {
		t.Fatal(err)
	}
	reply(t, db, step, "reply to two")
	state(domain.StateDone)
	step, _, err = db.Regenerate(ctx, c.ID, "ann", "")
	if err != nil {
		t.Fatal(err)
	}
	_, in, err = db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishStep(ctx, step, nil, errors.New("broken again")); err != nil {
		t.Fatal(err)
	}
	regenerated := in.RunID
	state(domain.StateFailed)

	if err := db.ChooseVersion(ctx, c.ID, 0, "ann"); err != nil {
		t.Fatal(err)
	}
	state(domain.StateDone)
	if _, err := db.RetryRun(ctx, c.ID); domain.ErrorCode(err) == "" {
		t.Fatal("RetryRun of a finished version succeeded")
	}

	if err := db.ChooseVersion(ctx, c.ID, 1, "ann"); err != nil {
		t.Fatal(err)
	}
	state(domain.StateFailed)
	step, err = db.RetryRun(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	state(domain.StateRunning)
	if _, in, err = db.BeginStep(ctx, step); err != nil || in.RunID != regenerated || in.RunID == first {
		t.Fatalf("Retry took up run %d, %v; want the version's run %d", in.RunID, err, regenerated)
	}
}
