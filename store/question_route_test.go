package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// people makes the accounts named, by name.
func people(t *testing.T, db *store.DB, names ...string) map[string]domain.User {
	t.Helper()
	out := map[string]domain.User{}
	for _, n := range names {
		u, err := db.CreateUser(ctx, n, "", domain.RoleUser)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = u
	}
	return out
}

// askAs has a step of a conversation of owner's ask q, and returns the question as stored.
func askAs(t *testing.T, db *store.DB, owner domain.User, q domain.Question) domain.QuestionRecord {
	t.Helper()
	c, err := db.CreateConversation(ctx, owner.ID, "deployer", "deploy", "")
	if err != nil {
		t.Fatal(err)
	}
	step, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "deploy 1432", Author: owner.Name, UserID: owner.ID}))
	if err != nil {
		t.Fatal(err)
	}
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := db.AskQuestion(ctx, in.RunID, q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishStep(ctx, step, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, err := db.Question(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func gate() domain.Question {
	return domain.Question{Message: "Run deploy?", Asker: "Deployer", Type: domain.RequestApproval, Gate: true, Fields: []domain.Field{}}
}

func TestDB_AskQuestion_Routed(t *testing.T) {
	t.Run("ToAGroupBesidesItsAsker", func(t *testing.T) {
		db := storetest.New(t)
		p := people(t, db, "ann", "bob", "carol", "dan")
		if _, err := db.AddToGroup(ctx, "ops", []string{"ann", "bob", "carol", "dan"}, domain.RoleMember, "operator"); err != nil {
			t.Fatal(err)
		}
		g, _ := db.Group(ctx, "ops")
		if _, err := db.AddChannel(ctx, domain.Channel{Kind: domain.ChannelWebhook, Target: "http://127.0.0.1:9/ops", GroupID: g.ID}, "operator"); err != nil {
			t.Fatal(err)
		}
		q := gate()
		q.To, q.Approvals = "ops", 2
		rec := askAs(t, db, p["ann"], q)
		if !rec.Pending() {
			t.Fatalf("routed question resolved at once: %+v", rec.Resolution)
		}
		for name, want := range map[string]bool{"ann": false, "bob": true, "carol": true, "dan": true} {
			if got, err := db.QuestionFor(ctx, rec.ID, p[name].ID); err != nil || got != want {
				t.Errorf("for %s: %v, %v; want %v", name, got, err, want)
			}
			n, _, _ := db.Waiting(ctx, p[name].ID)
			if want && n != 1 || !want && n != 0 {
				t.Errorf("%s has %d waiting", name, n)
			}
		}
		due, err := db.DueNotifications(ctx, time.Now().Add(time.Minute), 10)
		if err != nil || len(due) != 1 || due[0].Question.ID != rec.ID {
			t.Errorf("notifications due = %+v, %v; want the group's webhook told", due, err)
		}
		// ann approves nothing, even as a member; bob and carol do.
		if _, err := db.Approve(ctx, domain.Resolution{QuestionID: rec.ID, Outcome: domain.Answered, By: "ann", Values: map[string]any{}}, 2); domain.ErrorCode(err) != domain.EFORBIDDEN {
			t.Errorf("the asker's approval: %v", err)
		}
		for _, by := range []string{"bob", "carol"} {
			if _, err := db.Approve(ctx, domain.Resolution{QuestionID: rec.ID, Outcome: domain.Answered, By: by, Values: map[string]any{}}, 2); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := db.Question(ctx, rec.ID); got.Pending() || got.Resolution.By != "bob, carol" {
			t.Errorf("after two approvals: %+v", got.Resolution)
		}
		entries, _ := db.AuditLog(ctx, rec.ConversationID, 10)
		if len(entries) == 0 || entries[0].Action != "route approval" || !strings.Contains(entries[0].Detail, "to the group ops, 2 approvals") {
			t.Errorf("audit of the conversation = %+v", entries)
		}
	})
	t.Run("ToAPerson", func(t *testing.T) {
		db := storetest.New(t)
		p := people(t, db, "ann", "bob")
		q := gate()
		q.ToPerson = "bob"
		rec := askAs(t, db, p["ann"], q)
		if got, _ := db.QuestionFor(ctx, rec.ID, p["bob"].ID); !got || !rec.Pending() {
			t.Errorf("for bob: %v, pending %v", got, rec.Pending())
		}
		if got, _ := db.QuestionFor(ctx, rec.ID, p["ann"].ID); got {
			t.Error("the asker has her own approval in her Inbox")
		}
	})
	t.Run("DeclinedAtOnceWhenNobodyCanApprove", func(t *testing.T) {
		db := storetest.New(t)
		p := people(t, db, "ann", "bob")
		if _, err := db.AddToGroup(ctx, "ops", []string{"ann", "bob"}, domain.RoleMember, "operator"); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, to, person string
			approvals        int
			want             string
		}{
			{"TooFewBesidesTheAsker", "ops", "", 2, "needs 2 approvals from the group ops, which has 1 members besides the person who asked"},
			{"NoSuchGroup", "leads", "", 0, "the group leads, do not exist"},
			{"TheAskerAlone", "", "ann", 0, "ann, asked for it"},
			{"NoSuchPerson", "", "zed", 0, "zed, has no account"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q := gate()
				q.To, q.ToPerson, q.Approvals = tt.to, tt.person, tt.approvals
				rec := askAs(t, db, p["ann"], q)
				if rec.Pending() || rec.Resolution.Outcome != domain.Declined || !strings.Contains(rec.Resolution.Reason, tt.want) {
					t.Errorf("resolution %+v, want declined: %q", rec.Resolution, tt.want)
				}
			})
		}
	})
	t.Run("EscalationByName", func(t *testing.T) {
		db := storetest.New(t)
		p := people(t, db, "ann", "bob", "lead")
		if _, err := db.AddToGroup(ctx, "ops", []string{"bob"}, domain.RoleMember, "operator"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AddToGroup(ctx, "leads", []string{"lead"}, domain.RoleMember, "operator"); err != nil {
			t.Fatal(err)
		}
		q := gate()
		q.To, q.Escalate = "ops", &domain.Escalation{After: time.Minute, To: "group:leads"}
		rec := askAs(t, db, p["ann"], q)
		if rec.Escalate == nil || rec.Escalate.GroupID == 0 || rec.Escalate.To != "leads" {
			t.Fatalf("escalation stored as %+v", rec.Escalate)
		}
		due, _ := db.DueEscalations(ctx, time.Now().Add(2*time.Minute))
		if len(due) != 1 || due[0] != rec.ID {
			t.Fatalf("due escalations %v", due)
		}
		if err := db.Escalate(ctx, rec.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.QuestionFor(ctx, rec.ID, p["lead"].ID); !got {
			t.Error("the escalation did not reach the leads")
		}
	})
}
