package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

// Staff's notes and labels: notes kept in order, labels from the list staff keep (a label
// not on it refused), put on and taken off, gone from every conversation when taken off the
// list; the review queue filters by label; everything audited.
func TestDB_NotesAndLabels(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "h", domain.RoleUser)
	c := converse(t, db, ann.ID, "event-planner", "bad one", "Meh.", nil)
	reply, _ := itemsOf(t, db, c.ID)
	if _, err := db.SetFeedback(ctx, domain.Feedback{ConversationID: c.ID, Item: domain.ItemReply, ItemID: reply, UserID: ann.ID, Rating: domain.RatingBad}); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"Looked at it: the venue list is **old**.", "Fixed in the next version."} {
		if _, err := db.AddNote(ctx, c.ID, "sam", body); err != nil {
			t.Fatal(err)
		}
	}
	notes, err := db.Notes(ctx, c.ID)
	if err != nil || len(notes) != 2 || notes[0].Author != "sam" || notes[1].Body != "Fixed in the next version." || notes[0].At.IsZero() {
		t.Fatalf("notes = %+v, %v", notes, err)
	}
	if err := db.SetLabels(ctx, "sam", []string{"venues", "stale data"}); err != nil {
		t.Fatal(err)
	}
	if err := db.LabelConversation(ctx, c.ID, "pricing", true, "sam"); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("a label not on the list: %v; want EINVALID", err)
	}
	for _, l := range []string{"venues", "stale data", "venues"} {
		if err := db.LabelConversation(ctx, c.ID, l, true, "sam"); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := db.ConversationLabels(ctx, c.ID); fmt.Sprint(got) != "[stale data venues]" {
		t.Errorf("labels = %q", got)
	}
	queue := func(label string) int {
		items, err := db.NeedsReview(ctx, domain.QueueFilter{Label: label})
		if err != nil {
			t.Fatal(err)
		}
		return len(items)
	}
	if queue("venues") != 1 || queue("pricing") != 0 {
		t.Errorf("queue by label: venues %d, pricing %d; want 1, 0", queue("venues"), queue("pricing"))
	}
	if err := db.LabelConversation(ctx, c.ID, "stale data", false, "sam"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetLabels(ctx, "sam", []string{"pricing"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ConversationLabels(ctx, c.ID); len(got) != 0 {
		t.Errorf("labels after the list lost them = %q; want none", got)
	}
	if got, _ := db.Labels(ctx); fmt.Sprint(got) != "[pricing]" {
		t.Errorf("the list = %q", got)
	}
	audit, err := db.AuditLog(ctx, c.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action)
	}
	slices.Sort(actions)
	if want := "[label label label note note unlabel]"; fmt.Sprint(actions) != want {
		t.Errorf("audit = %v; want %s", actions, want)
	}
}
