package store_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// itemsOf returns a conversation's reply (its agent message event) and its question, if any.
func itemsOf(t *testing.T, db *store.DB, convID int64) (reply, question int64) {
	t.Helper()
	evs, err := db.Events(ctx, convID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		switch ev.Kind {
		case domain.EventAgentMessage:
			reply = ev.ID
		case domain.EventQuestionAsked:
			question = ev.Question.ID
		}
	}
	return reply, question
}

// A person's opinion of an item is one, changeable, and theirs: another's is another; taking
// it back leaves the others; an item of another conversation, or a question still waiting,
// cannot be rated; a conversation deleted takes its opinions along.
func TestDB_Feedback(t *testing.T) {
	db := storetest.New(t)
	ann, err := db.CreateUser(ctx, "ann", "h", domain.RoleUser)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := db.CreateUser(ctx, "bob", "h", domain.RoleStaff)
	if err != nil {
		t.Fatal(err)
	}
	c := converse(t, db, ann.ID, "event-planner", "Plan a party", "Where will it be?", map[string]any{"venue": "Lisbon"})
	other := converse(t, db, ann.ID, "event-planner", "Another", "Sure.", nil)
	reply, question := itemsOf(t, db, c.ID)
	otherReply, _ := itemsOf(t, db, other.ID)
	if reply == 0 || question == 0 || otherReply == 0 {
		t.Fatalf("the test wants a reply and a question: %d %d %d", reply, question, otherReply)
	}

	set := func(f domain.Feedback) error {
		_, err := db.SetFeedback(ctx, f)
		return err
	}
	if err := set(domain.Feedback{ConversationID: c.ID, Item: domain.ItemReply, ItemID: reply, UserID: ann.ID, Rating: domain.RatingGood}); err != nil {
		t.Fatal(err)
	}
	// Changed: one opinion, the last.
	if err := set(domain.Feedback{ConversationID: c.ID, Item: domain.ItemReply, ItemID: reply, UserID: ann.ID, Rating: domain.RatingBad,
		Comment: "The venue is wrong.", Reasons: []string{"wrong"}}); err != nil {
		t.Fatal(err)
	}
	if err := set(domain.Feedback{ConversationID: c.ID, Item: domain.ItemQuestion, ItemID: question, UserID: ann.ID, Rating: domain.RatingUnneeded}); err != nil {
		t.Fatal(err)
	}
	if err := set(domain.Feedback{ConversationID: c.ID, Item: domain.ItemReply, ItemID: reply, UserID: bob.ID, Rating: domain.RatingGood}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Feedback(ctx, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"reply ann bad [wrong] The venue is wrong.", "question ann unneeded [] ", "reply bob good [] "}
	if fmt.Sprint(describe(got)) != fmt.Sprint(want) {
		t.Errorf("feedback = %q; want %q", describe(got), want)
	}
	if mine, err := db.Feedback(ctx, c.ID, bob.ID); err != nil || len(mine) != 1 || mine[0].By != "bob" || mine[0].At.IsZero() {
		t.Errorf("bob's feedback = %+v, %v", mine, err)
	}

	// Taken back: only Ann's opinion of the reply goes.
	if err := db.DeleteFeedback(ctx, c.ID, domain.ItemReply, reply, ann.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteFeedback(ctx, c.ID, domain.ItemReply, reply, ann.ID); err != nil {
		t.Errorf("taking back what is not there: %v; want no error", err)
	}
	got, _ = db.Feedback(ctx, c.ID, 0)
	if want := []string{"question ann unneeded [] ", "reply bob good [] "}; fmt.Sprint(describe(got)) != fmt.Sprint(want) {
		t.Errorf("after taking back, feedback = %q; want %q", describe(got), want)
	}

	// Not the conversation's, not a reply, a question waiting.
	for _, f := range []domain.Feedback{
		{ConversationID: c.ID, Item: domain.ItemReply, ItemID: otherReply, UserID: ann.ID, Rating: domain.RatingGood},
		{ConversationID: c.ID, Item: domain.ItemReply, ItemID: question, UserID: ann.ID, Rating: domain.RatingGood},
		{ConversationID: other.ID, Item: domain.ItemQuestion, ItemID: question, UserID: ann.ID, Rating: domain.RatingUseful},
	} {
		if err := set(f); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Errorf("%+v: %v; want ENOTFOUND", f, err)
		}
	}
	step, err := stepOf(db.StartRun(ctx, other.ID, domain.Message{Text: "more", Author: "ann"}))
	if err != nil {
		t.Fatal(err)
	}
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := db.AskQuestion(ctx, in.RunID, domain.Question{Message: "Which?", Fields: []domain.Field{{Name: "x", Kind: domain.KindText}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := set(domain.Feedback{ConversationID: other.ID, Item: domain.ItemQuestion, ItemID: waiting.ID, UserID: ann.ID, Rating: domain.RatingUseful}); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("rating a question still waiting: %v; want EINVALID", err)
	}

	gone := converse(t, db, ann.ID, "tester", "delete me", "Fine.", nil)
	goneReply, _ := itemsOf(t, db, gone.ID)
	if err := set(domain.Feedback{ConversationID: gone.ID, Item: domain.ItemReply, ItemID: goneReply, UserID: ann.ID, Rating: domain.RatingGood}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteConversation(ctx, gone.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Feedback(ctx, gone.ID, 0); err != nil || len(got) != 0 {
		t.Errorf("a deleted conversation's feedback = %v, %v; want none", got, err)
	}
}

func describe(fs []domain.Feedback) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s %v %s", f.Item, f.By, f.Rating, f.Reasons, f.Comment))
	}
	return out
}

// Many people rating one reply at once, each changing their mind: one opinion each, the
// last they gave.
func TestDB_Feedback_ManyAtOnce(t *testing.T) {
	db := storetest.New(t)
	c := converse(t, db, 0, "tester", "hello", "Hi.", nil)
	reply, _ := itemsOf(t, db, c.ID)
	const people = 12
	var wg sync.WaitGroup
	errs := make(chan error, people)
	for i := range people {
		u, err := db.CreateUser(ctx, fmt.Sprintf("p%d", i), "h", domain.RoleUser)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range []domain.Rating{domain.RatingBad, domain.RatingGood, domain.RatingBad} {
				if _, err := db.SetFeedback(ctx, domain.Feedback{ConversationID: c.ID, Item: domain.ItemReply, ItemID: reply, UserID: u.ID, Rating: r}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := db.Feedback(ctx, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != people {
		t.Fatalf("%d opinions; want one a person, %d", len(got), people)
	}
	for _, f := range got {
		if f.Rating != domain.RatingBad {
			t.Errorf("%s's opinion %s; want their last, bad", f.By, f.Rating)
		}
	}
}
