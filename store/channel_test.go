package store_test

import (
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// Every question an agent asks in a conversation is told to its owner's channels, once; a
// question declined at once (it asked only for secrets) to nobody; an agent the owner muted
// to none of theirs; an email address only once confirmed.
func TestDB_EveryQuestionToItsOwnersChannels(t *testing.T) {
	db := storetest.New(t)
	ps := people(t, db, "ann", "bob")
	ann, bob := ps["ann"], ps["bob"]
	hook, err := db.AddChannel(ctx, domain.Channel{Kind: domain.ChannelWebhook, Target: "https://hooks.example/ann", UserID: ann.ID}, "ann")
	if err != nil {
		t.Fatal(err)
	}
	ntfy, err := db.AddChannel(ctx, domain.Channel{Kind: domain.ChannelNtfy, Target: "https://ntfy.example/ann", Secret: "tk_1", UserID: ann.ID}, "ann")
	if err != nil {
		t.Fatal(err)
	}
	mail, err := db.AddChannel(ctx, domain.Channel{Kind: domain.ChannelEmail, Target: "ann@example.com", UserID: ann.ID}, "ann")
	if err != nil || !mail.Unconfirmed() {
		t.Fatalf("an email address added: %+v, %v; want it waiting for confirmation", mail, err)
	}
	if _, err := db.AddChannel(ctx, domain.Channel{Kind: domain.ChannelWebhook, Target: "https://hooks.example/bob", UserID: bob.ID}, "bob"); err != nil {
		t.Fatal(err)
	}

	q := askAs(t, db, ann, domain.Question{Message: "Which branch?", Asker: "Deployer", Fields: []domain.Field{{Name: "branch", Kind: "text"}}})
	secretOnly := askAs(t, db, ann, domain.RefuseSecrets(domain.Question{Message: "Your password?", Asker: "Deployer",
		Fields: []domain.Field{{Name: "password", Kind: "password"}}}))
	if secretOnly.Pending() {
		t.Fatalf("a question of secrets alone is pending: %+v", secretOnly)
	}
	due := dueFor(t, db)
	if len(due) != 1 || len(due[q.ID]) != 2 {
		t.Fatalf("deliveries due: %v; want the webhook and ntfy of ann's question %d alone", due, q.ID)
	}
	for _, d := range due[q.ID] {
		switch d.Channel.ID {
		case hook.ID:
		case ntfy.ID:
			if d.Channel.Secret != "tk_1" {
				t.Errorf("the ntfy delivery has no token: %+v", d.Channel)
			}
		default:
			t.Errorf("a delivery to channel %d (%s)", d.Channel.ID, d.Channel.Target)
		}
		if d.Owner != "ann" || d.Reason != "asked" {
			t.Errorf("delivery %+v", d)
		}
	}
	sendAll(t, db)

	// Confirmed, the address hears of the next; muted, the deployer is heard of by nobody.
	_, token, err := db.ConfirmToken(ctx, mail.ID, ann.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ConfirmChannel(ctx, token+"x"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("a wrong token confirms: %v", err)
	}
	if ch, err := db.ConfirmChannel(ctx, token); err != nil || ch.Unconfirmed() {
		t.Fatalf("confirm: %+v, %v", ch, err)
	}
	if _, err := db.ConfirmChannel(ctx, token); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("a link used twice confirms again: %v", err)
	}
	askAs(t, db, ann, domain.Question{Message: "Which tag?", Asker: "Deployer", Fields: []domain.Field{{Name: "tag", Kind: "text"}}})
	if got := dueFor(t, db); len(got) != 1 || countAll(got) != 3 {
		t.Fatalf("after confirming: %v, want three deliveries of one question", got)
	}
	sendAll(t, db)
	quiet := domain.QuietHours{From: 22 * 60, To: 7 * 60, Zone: "Europe/Lisbon"}
	if err := db.SetNotifyPrefs(ctx, ann.ID, domain.NotifyPrefs{Muted: []string{"deployer"}, Quiet: quiet}, "ann"); err != nil {
		t.Fatal(err)
	}
	p, err := db.NotifyPrefs(ctx, ann.ID)
	if err != nil || len(p.Muted) != 1 || p.Muted[0] != "deployer" || p.Quiet != quiet {
		t.Fatalf("prefs read back: %+v, %v", p, err)
	}
	askAs(t, db, ann, domain.Question{Message: "Which env?", Asker: "Deployer", Fields: []domain.Field{{Name: "env", Kind: "text"}}})
	if got := dueFor(t, db); len(got) != 0 {
		t.Fatalf("a muted agent's question is told: %v", got)
	}
}

// A delivery put off (quiet hours) keeps its tries, and is due again when they end.
func TestDB_NotificationWaits(t *testing.T) {
	db := storetest.New(t)
	ann := people(t, db, "ann")["ann"]
	if _, err := db.AddChannel(ctx, domain.Channel{Kind: domain.ChannelWebhook, Target: "https://hooks.example/ann", UserID: ann.ID}, "ann"); err != nil {
		t.Fatal(err)
	}
	quiet := domain.QuietHours{From: 1, To: 0, Zone: "UTC"} // all day but a minute
	if err := db.SetNotifyPrefs(ctx, ann.ID, domain.NotifyPrefs{Quiet: quiet}, "ann"); err != nil {
		t.Fatal(err)
	}
	askAs(t, db, ann, domain.Question{Message: "Ship it?", Asker: "Deployer", Fields: []domain.Field{{Name: "ok", Kind: "boolean"}}})
	due, err := db.DueNotifications(ctx, time.Now(), 10)
	if err != nil || len(due) != 1 || due[0].Quiet != quiet {
		t.Fatalf("due: %+v, %v; want one, with ann's quiet hours", due, err)
	}
	later := time.Now().Add(time.Hour)
	if err := db.NotificationWaits(ctx, due[0].ID, later); err != nil {
		t.Fatal(err)
	}
	if now, _ := db.DueNotifications(ctx, time.Now(), 10); len(now) != 0 {
		t.Fatalf("a delivery put off is due now: %+v", now)
	}
	again, err := db.DueNotifications(ctx, later.Add(time.Second), 10)
	if err != nil || len(again) != 1 || again[0].Attempts != 0 {
		t.Fatalf("after the quiet hours: %+v, %v; want it due, no try counted", again, err)
	}
}

// A push subscription's endpoint belongs to one browser: subscribing it again (another
// person signed in there) moves it; the service saying it is gone drops it.
func TestDB_PushSubscriptionMoves(t *testing.T) {
	db := storetest.New(t)
	ps := people(t, db, "ann", "bob")
	sub := domain.Channel{Kind: domain.ChannelPush, Target: "https://push.example/ep1", Secret: `{"p256dh":"x","auth":"y"}`, Label: "Chrome on Android"}
	sub.UserID = ps["ann"].ID
	if _, err := db.AddChannel(ctx, sub, "ann"); err != nil {
		t.Fatal(err)
	}
	// Someone who learnt the endpoint, without its keys, cannot take the device over.
	stolen := sub
	stolen.UserID, stolen.Secret = ps["bob"].ID, `{"p256dh":"mine","auth":"mine"}`
	if _, err := db.AddChannel(ctx, stolen, "bob"); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("another person's endpoint with other keys: %v, want a refusal", err)
	}
	sub.UserID = ps["bob"].ID
	moved, err := db.AddChannel(ctx, sub, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if annChs, _ := db.Channels(ctx, ps["ann"].ID, 0); len(annChs) != 0 {
		t.Errorf("ann keeps the endpoint bob subscribed: %+v", annChs)
	}
	bobChs, _ := db.Channels(ctx, ps["bob"].ID, 0)
	if len(bobChs) != 1 || bobChs[0].Label != "Chrome on Android" || bobChs[0].Unconfirmed() {
		t.Fatalf("bob's devices: %+v", bobChs)
	}
	if err := db.RemovePush(ctx, ps["ann"].ID, sub.Target, "ann"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("ann removes bob's subscription: %v", err)
	}
	if err := db.DropChannel(ctx, moved.ID, "the push service answered 410 Gone"); err != nil {
		t.Fatal(err)
	}
	if bobChs, _ = db.Channels(ctx, ps["bob"].ID, 0); len(bobChs) != 0 {
		t.Errorf("a subscription gone is kept: %+v", bobChs)
	}
}

// dueFor is the deliveries due now, by question.
func dueFor(t *testing.T, db *store.DB) map[int64][]domain.Notification {
	t.Helper()
	due, err := db.DueNotifications(ctx, time.Now(), 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][]domain.Notification{}
	for _, d := range due {
		out[d.Question.ID] = append(out[d.Question.ID], d)
	}
	return out
}

func countAll(m map[int64][]domain.Notification) (n int) {
	for _, ds := range m {
		n += len(ds)
	}
	return n
}

// sendAll records every delivery due as sent.
func sendAll(t *testing.T, db *store.DB) {
	t.Helper()
	for _, ds := range dueFor(t, db) {
		for _, d := range ds {
			if err := db.NotificationTried(ctx, d.ID, "sent", "", time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
