package store_test

import (
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

func TestDB_RenameAndArchive(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	a := converse(t, db, ann.ID, "planner", "Plan a picnic", "Sure.", nil)
	b := converse(t, db, ann.ID, "planner", "Plan a wedding", "Sure.", nil)

	if err := db.RenameConversation(ctx, a.ID, "Picnic in June"); err != nil {
		t.Fatal(err)
	}
	if err := db.ArchiveConversation(ctx, b.ID, true); err != nil {
		t.Fatal(err)
	}
	list := func(arch domain.Archived) []string {
		cs, _, err := db.ListConversations(ctx, domain.ConversationFilter{UserID: ann.ID, Archived: arch})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			out = append(out, c.Title)
		}
		return out
	}
	if got := strings.Join(list(domain.ArchivedNot), ","); got != "Picnic in June" {
		t.Errorf("active list = %q", got)
	}
	if got := strings.Join(list(domain.ArchivedOnly), ","); got != "Plan a wedding" {
		t.Errorf("archived list = %q", got)
	}
	if got := len(list(domain.ArchivedAny)); got != 2 {
		t.Errorf("everything = %d conversations, want 2", got)
	}
	// Archived is not deleted: its words are still found.
	hits, _, err := db.Search(ctx, "wedding", domain.ConversationFilter{UserID: ann.ID})
	if err != nil || len(hits) != 1 {
		t.Errorf("search of an archived conversation = %v %v", hits, err)
	} else if got := hits[0].Conversation; got.Archived.IsZero() || got.UpdatedAt.IsZero() || got.Kind == "" {
		// The hit's conversation is whole: the list shows it as the conversation's page does.
		t.Errorf("the hit's conversation = %+v; want its times, its kind", got)
	}
	if err := db.ArchiveConversation(ctx, b.ID, false); err != nil {
		t.Fatal(err)
	}
	if got := len(list(domain.ArchivedNot)); got != 2 {
		t.Errorf("after unarchiving, %d active, want 2", got)
	}
	if err := db.RenameConversation(ctx, 999, "x"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("rename of nothing = %v", err)
	}
}

func TestDB_DeleteConversation(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	gone := converse(t, db, ann.ID, "planner", "Plan a secret party", "Sure, the secret party.", map[string]any{"venue": "the boathouse"})
	kept := converse(t, db, ann.ID, "planner", "Plan a party", "Sure.", map[string]any{"venue": "the park"})
	// The answers queued the agents' next steps: they run, as the runner would run them.
	queued, err := db.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queued {
		if _, _, err := db.BeginStep(ctx, q.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FinishStep(ctx, q.ID, nil, nil); err != nil {
			t.Fatal(err)
		}
	}

	if err := db.DeleteConversation(ctx, gone.ID, "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Conversation(ctx, gone.ID); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("the deleted conversation is still there: %v", err)
	}
	for _, word := range []string{"secret", "boathouse"} {
		if hits, _, _ := db.Search(ctx, word, domain.ConversationFilter{}); len(hits) != 0 {
			t.Errorf("search still finds %q: %v", word, hitIDs(hits))
		}
	}
	if evs, _ := db.Events(ctx, gone.ID, 0); len(evs) != 0 {
		t.Errorf("%d events left", len(evs))
	}
	if n, _, _ := db.Waiting(ctx, 0); n != 0 {
		t.Errorf("%d questions waiting", n)
	}
	// The other conversation is whole.
	if evs, _ := db.Events(ctx, kept.ID, 0); len(evs) == 0 {
		t.Error("the other conversation lost its events")
	}
	// Staff can tell who deleted what.
	log, err := db.AuditLog(ctx, 0, 10)
	if err != nil || len(log) == 0 {
		t.Fatalf("audit log = %v %v", log, err)
	}
	e := log[0]
	if e.Actor != "ann" || e.Action != "delete conversation" || !strings.Contains(e.Detail, `"Plan a secret party" of ann`) || !strings.Contains(e.Detail, "2 messages, 1 questions") {
		t.Errorf("audit entry = %+v", e)
	}
}
