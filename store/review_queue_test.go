package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

// The review queue holds the conversations something went wrong in since staff last marked
// them reviewed: a bad reply, an unneeded question, a declined question, a failed run; not a
// good reply. Marked reviewed, one leaves it; new trouble brings it back. Each may be assigned
// to a staff member, and the queue filtered by assignee, agent and trouble.
func TestDB_ReviewQueue(t *testing.T) {
	db := storetest.New(t)
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { now = now.Add(time.Second); return now }
	ann, _ := db.CreateUser(ctx, "ann", "h", domain.RoleUser)
	sam, _ := db.CreateUser(ctx, "sam", "h", domain.RoleStaff)

	bad := converse(t, db, ann.ID, "event-planner", "bad one", "Meh.", nil)
	good := converse(t, db, ann.ID, "event-planner", "good one", "Great.", nil)
	asked := converse(t, db, ann.ID, "budget-analyst", "asked one", "Which venue?", map[string]any{"venue": "Lisbon"})
	declined, err := db.CreateConversation(ctx, ann.ID, "budget-analyst", "declined one", "")
	if err != nil {
		t.Fatal(err)
	}
	step, err := stepOf(db.StartRun(ctx, declined.ID, domain.Message{Text: "go", Author: "ann"}))
	if err != nil {
		t.Fatal(err)
	}
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	q, err := db.AskQuestion(ctx, in.RunID, domain.Question{Message: "Budget?", Fields: []domain.Field{{Name: "b", Kind: domain.KindText}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishStep(ctx, step, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Resolve(ctx, domain.Resolution{QuestionID: q.ID, Outcome: domain.Declined, By: "ann"}); err != nil {
		t.Fatal(err)
	}
	failed, err := db.CreateConversation(ctx, ann.ID, "event-planner", "failed one", "")
	if err != nil {
		t.Fatal(err)
	}
	step, err = stepOf(db.StartRun(ctx, failed.ID, domain.Message{Text: "go", Author: "ann"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.BeginStep(ctx, step); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishStep(ctx, step, nil, fmt.Errorf("the model is down")); err != nil {
		t.Fatal(err)
	}

	rate := func(convID int64, item domain.FeedbackItem, id int64, r domain.Rating) {
		t.Helper()
		if _, err := db.SetFeedback(ctx, domain.Feedback{ConversationID: convID, Item: item, ItemID: id, UserID: ann.ID, Rating: r}); err != nil {
			t.Fatal(err)
		}
	}
	badReply, _ := itemsOf(t, db, bad.ID)
	goodReply, _ := itemsOf(t, db, good.ID)
	_, askedQ := itemsOf(t, db, asked.ID)
	rate(bad.ID, domain.ItemReply, badReply, domain.RatingBad)
	rate(good.ID, domain.ItemReply, goodReply, domain.RatingGood)
	rate(asked.ID, domain.ItemQuestion, askedQ, domain.RatingUnneeded)

	queue := func(f domain.QueueFilter) string {
		t.Helper()
		items, err := db.NeedsReview(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			out = append(out, fmt.Sprintf("%s %v", it.Conversation.Title, it.Troubles))
		}
		return fmt.Sprint(out)
	}
	if got := queue(domain.QueueFilter{}); got != "[asked one [unneeded question] bad one [bad reply] failed one [failed run] declined one [declined question]]" {
		t.Errorf("queue = %s", got)
	}
	if n, err := db.NeedsReviewCount(ctx); err != nil || n != 4 {
		t.Errorf("count = %d, %v; want 4", n, err)
	}
	if got := queue(domain.QueueFilter{Agent: "budget-analyst"}); got != "[asked one [unneeded question] declined one [declined question]]" {
		t.Errorf("budget analyst's = %s", got)
	}
	if got := queue(domain.QueueFilter{Trouble: domain.TroubleFailedRun}); got != "[failed one [failed run]]" {
		t.Errorf("failed runs = %s", got)
	}

	// Assigned to sam; not to ann, who is not staff.
	if err := db.Assign(ctx, bad.ID, sam.ID, "sam"); err != nil {
		t.Fatal(err)
	}
	if err := db.Assign(ctx, failed.ID, ann.ID, "sam"); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("assigned to a person who is not staff: %v; want EINVALID", err)
	}
	if got := queue(domain.QueueFilter{Assignee: sam.ID}); got != "[bad one [bad reply]]" {
		t.Errorf("sam's = %s", got)
	}
	if got := queue(domain.QueueFilter{Assignee: -1}); got != "[asked one [unneeded question] failed one [failed run] declined one [declined question]]" {
		t.Errorf("no one's = %s", got)
	}

	// Reviewed: out of the queue, with who and when; the assignee stays.
	if err := db.MarkReviewed(ctx, bad.ID, "sam"); err != nil {
		t.Fatal(err)
	}
	if got := queue(domain.QueueFilter{}); got != "[asked one [unneeded question] failed one [failed run] declined one [declined question]]" {
		t.Errorf("after marking bad one reviewed = %s", got)
	}
	// New trouble brings it back.
	rate(bad.ID, domain.ItemReply, badReply, domain.RatingGood)
	if got := queue(domain.QueueFilter{Assignee: sam.ID}); got != "[]" {
		t.Errorf("a good opinion brought it back: %s", got)
	}
	rate(bad.ID, domain.ItemReply, badReply, domain.RatingBad)
	items, err := db.NeedsReview(ctx, domain.QueueFilter{Assignee: sam.ID})
	if err != nil || len(items) != 1 || items[0].ReviewedBy != "sam" || items[0].ReviewedAt.IsZero() || items[0].Assignee != "sam" {
		t.Errorf("back in the queue: %+v, %v", items, err)
	}
	if n, _ := db.NeedsReviewCount(ctx); n != 4 {
		t.Errorf("count = %d; want 4", n)
	}
}

// Several staff working through the queue at once: every conversation assigned and marked
// reviewed once, the queue empty after.
func TestDB_ReviewQueue_ManyAtOnce(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "h", domain.RoleUser)
	var staff []int64
	for i := range 4 {
		u, err := db.CreateUser(ctx, fmt.Sprintf("staff%d", i), "h", domain.RoleStaff)
		if err != nil {
			t.Fatal(err)
		}
		staff = append(staff, u.ID)
	}
	var convs []int64
	for i := range 12 {
		c := converse(t, db, ann.ID, "tester", fmt.Sprintf("c%d", i), "Meh.", nil)
		reply, _ := itemsOf(t, db, c.ID)
		if _, err := db.SetFeedback(ctx, domain.Feedback{ConversationID: c.ID, Item: domain.ItemReply, ItemID: reply, UserID: ann.ID, Rating: domain.RatingBad}); err != nil {
			t.Fatal(err)
		}
		convs = append(convs, c.ID)
	}
	errs := make(chan error, len(convs))
	for i, id := range convs {
		go func() {
			who := staff[i%len(staff)]
			if err := db.Assign(ctx, id, who, "staff"); err != nil {
				errs <- err
				return
			}
			errs <- db.MarkReviewed(ctx, id, "staff")
		}()
	}
	for range convs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.NeedsReviewCount(ctx); err != nil || n != 0 {
		t.Errorf("after everyone's reviews: %d need review, %v", n, err)
	}
}
