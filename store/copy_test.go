package store_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// install is what a SQLite install holds for the copy tests, and the secrets that reach it.
type install struct {
	path                     string
	ann, bob                 domain.User
	group                    domain.Group
	convs                    []int64 // every conversation left
	doc                      [2]int64
	token, a2aSecret, cookie string
	deleted, lastEvent       int64 // a deleted conversation, and the highest event id ever given
}

// fillInstall makes a SQLite install with something in every table, through the store as
// Parley uses it: people, a group with a channel, conversations with messages, answered and
// pending questions, a document, a version, a queued message, a crash's drafts, tokens.
func fillInstall(t *testing.T) install {
	t.Helper()
	in := install{path: filepath.Join(t.TempDir(), "parley.db")}
	db, err := store.Open(ctx, in.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { now = now.Add(time.Second); return now }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	in.ann, err = db.CreateUser(ctx, "Ann", "hash-of-ann", domain.RoleStaff)
	must(err)
	in.bob, err = db.CreateUser(ctx, "bob", "hash-of-bob", domain.RoleUser)
	must(err)
	// Dee signs in through the organization's provider, its groups with her.
	_, err = db.SignInIdentity(ctx, domain.Identity{Issuer: "https://id.example", Subject: "dee-1", Name: "dee", Groups: []string{"sso-team"}}, domain.SourceOIDC)
	must(err)
	must(db.SetProfile(ctx, in.ann.ID, "Ann A.", "Europe/Lisbon"))
	in.group, err = db.AddToGroup(ctx, "ops", []string{"bob", "Ann"}, domain.RoleMember, "Ann")
	must(err)
	_, err = db.AddChannel(ctx, domain.Channel{Kind: domain.ChannelWebhook, Target: "https://hooks.example/ops", GroupID: in.group.ID}, "Ann")
	must(err)
	// Ann hears of the planner's questions only, never at night; Parley's push keys are made.
	must(db.SetNotifyPrefs(ctx, in.ann.ID, domain.NotifyPrefs{Muted: []string{"coder"}, Quiet: domain.QuietHours{From: 22 * 60, To: 7 * 60, Zone: "Europe/Lisbon"}}, "Ann"))
	_, err = db.ServerKey(ctx, "vapid", func() (string, error) { return `{"public":"p","private":"q"}`, nil })
	must(err)
	in.token, _, err = db.CreateToken(ctx, in.bob.ID, "laptop")
	must(err)
	in.cookie, err = db.CreateSession(ctx, in.ann.ID, store.SessionLimits{Idle: time.Hour, Max: 24 * time.Hour})
	must(err)
	var client domain.A2AClient
	in.a2aSecret, client, err = db.CreateA2AClient(ctx, "ci", "Ann")
	must(err)

	party := converse(t, db, in.ann.ID, "event-planner", "Plan a party for 30 people", "Where will it be?", map[string]any{"venue": "The Glasshouse Lisbon"})
	must(db.LinkA2ATask(ctx, "task-1", "ctx-1", "event-planner", client, party.ID))

	files := []domain.File{{Name: "app.log", MimeType: "text/x-log", Content: []byte("12:00 ERROR payments: card_declined\n")},
		{Name: "shot.png", MimeType: "image/png", Content: []byte("\x89PNG\x00\xff binary")}}
	logs, err := db.CreateConversation(ctx, in.bob.ID, "platform-engineer", "logs", "n-logs")
	must(err)
	step, err := stepOf(db.StartRun(ctx, logs.ID, domain.Message{Text: "see attached", Author: "bob", Files: files}))
	must(err)
	reply(t, db, step, "The card was declined.")
	step, _, err = db.Regenerate(ctx, logs.ID, "bob", "r1")
	must(err)
	reply(t, db, step, "A declined card, again.")
	evs, err := db.Events(ctx, logs.ID, 0)
	must(err)
	for _, ev := range evs {
		for i, d := range ev.Documents {
			in.doc[i] = d.ID
		}
	}

	// Asked of the group, through an MCP client's token: its audience, its notification,
	// its request id; and one approval of two.
	inbound, err := db.CreateInboundConversation(ctx, in.bob.ID, "Claude Code", "")
	must(err)
	rec, _, err := db.AskInbound(ctx, inbound.ID, domain.InboundRequest{UserID: in.bob.ID, Client: "Claude Code", RequestID: "req-1", Digest: "d1",
		ToGroup: in.group.ID, Via: "token laptop", Question: domain.Question{Message: "Deploy the hotfix?", Asker: "Claude Code",
			Fields: []domain.Field{{Name: "ok", Kind: domain.KindText}}}})
	must(err)
	_, err = db.Approve(ctx, domain.Resolution{QuestionID: rec.ID, Outcome: domain.Answered, Values: map[string]any{"ok": "yes"}, By: "Ann"}, 2)
	must(err)

	// What Ann thought of the logs' reply and of the party's question, and the reasons
	// staff list.
	must(db.SetFeedbackReasons(ctx, "Ann", []string{"wrong", "rude"}))
	for _, ev := range evs {
		if ev.Kind == domain.EventAgentMessage {
			_, err = db.SetFeedback(ctx, domain.Feedback{ConversationID: logs.ID, Item: domain.ItemReply, ItemID: ev.ID, UserID: in.ann.ID,
				Rating: domain.RatingBad, Comment: "It did not say why.", Reasons: []string{"wrong"}})
			must(err)
		}
	}
	// The logs' bad reply reviewed by Ann, and assigned to her; her note and label on it.
	must(db.Assign(ctx, logs.ID, in.ann.ID, "Ann"))
	must(db.MarkReviewed(ctx, logs.ID, "Ann"))
	_, err = db.AddNote(ctx, logs.ID, "Ann", "The card **was** declined: a fair reply.")
	must(err)
	must(db.SetLabels(ctx, "Ann", []string{"payments", "ok"}))
	must(db.LabelConversation(ctx, logs.ID, "payments", true, "Ann"))
	partyEvs, err := db.Events(ctx, party.ID, 0)
	must(err)
	for _, ev := range partyEvs {
		if ev.Kind == domain.EventQuestionResolved {
			_, err = db.SetFeedback(ctx, domain.Feedback{ConversationID: party.ID, Item: domain.ItemQuestion, ItemID: ev.Resolution.QuestionID,
				UserID: in.ann.ID, Rating: domain.RatingUseful})
			must(err)
		}
	}

	// A crash: a message half written (its drafts), and one queued behind it.
	crashed, err := db.CreateConversation(ctx, 0, "tester", "crashed", "")
	must(err)
	step, err = stepOf(db.StartRun(ctx, crashed.ID, domain.Message{Text: "hi", Author: "Ann"}))
	must(err)
	_, si, err := db.BeginStep(ctx, step)
	must(err)
	must(db.SaveDrafts(ctx, []domain.Draft{{ConversationID: crashed.ID, RunID: si.RunID, MessageID: "m1", Author: "Bot", Text: "Hello wor"}}))
	_, err = db.StartRun(ctx, crashed.ID, domain.Message{Text: "are you there?", Author: "Ann"})
	must(err)

	// The newest conversation deleted: neither its id nor its events' may be given again.
	gone := converse(t, db, in.ann.ID, "tester", "delete me", "ok", nil)
	in.lastEvent, err = db.LastEventID(ctx, gone.ID)
	must(err)
	must(db.DeleteConversation(ctx, gone.ID, "Ann"))
	in.deleted = gone.ID
	in.convs = []int64{party.ID, logs.ID, inbound.ID, crashed.ID}
	return in
}

// view is what the store shows of an install, read through its API.
type view struct {
	Users     []domain.User
	Ann       domain.User
	AnnHash   string
	Groups    []domain.Group
	Channels  []domain.Channel
	Tokens    []store.Token
	Clients   []domain.A2AClient
	Convs     []domain.Conversation
	Events    map[int64][]domain.Event
	Versions  map[int64]domain.Versions
	Queued    map[int64][]domain.QueuedMessage
	Docs      []domain.Document
	Inbox     []domain.InboxItem
	BobInbox  []domain.InboxItem
	Audit     []domain.AuditEntry
	Notes     []domain.Notification
	Search    map[string][]string
	Feedback  map[int64][]domain.Feedback
	Reasons   []string
	Queue     []domain.QueueItem
	Notes2    map[int64][]domain.StaffNote
	Labels    []string
	NextFloor int64
}

// looks counts the views read (see Notes).
var looks int

func viewOf(t *testing.T, db *store.DB, in install) view {
	t.Helper()
	v := view{Events: map[int64][]domain.Event{}, Versions: map[int64]domain.Versions{}, Queued: map[int64][]domain.QueuedMessage{}, Search: map[string][]string{},
		Feedback: map[int64][]domain.Feedback{}, Notes2: map[int64][]domain.StaffNote{}}
	errs := []error{}
	add := func(err error) { errs = append(errs, err) }
	var err error
	v.Users, err = db.Users(ctx)
	add(err)
	v.Ann, v.AnnHash, err = db.UserByName(ctx, "ann") // names ignore case
	add(err)
	v.Groups, err = db.Groups(ctx)
	add(err)
	v.Channels, err = db.Channels(ctx, 0, in.group.ID)
	add(err)
	v.Tokens, err = db.Tokens(ctx, in.bob.ID)
	add(err)
	v.Clients, err = db.A2AClients(ctx)
	add(err)
	v.Convs, _, err = db.ListConversations(ctx, domain.ConversationFilter{Limit: 100})
	add(err)
	for _, id := range in.convs {
		v.Events[id], err = db.Events(ctx, id, 0)
		add(err)
		v.Versions[id], _, err = db.Versions(ctx, id)
		add(err)
		v.Queued[id], err = db.Queued(ctx, id)
		add(err)
		v.Feedback[id], err = db.Feedback(ctx, id, 0)
		add(err)
		v.Notes2[id], err = db.Notes(ctx, id)
		add(err)
	}
	v.Reasons, err = db.FeedbackReasons(ctx)
	add(err)
	v.Queue, err = db.NeedsReview(ctx, domain.QueueFilter{})
	add(err)
	v.Labels, err = db.Labels(ctx)
	add(err)
	for _, id := range in.doc {
		d, err := db.Document(ctx, in.convs[1], id)
		add(err)
		v.Docs = append(v.Docs, d)
	}
	v.Inbox, err = db.Inbox(ctx, 0, 50)
	add(err)
	v.BobInbox, err = db.Inbox(ctx, in.bob.ID, 50)
	add(err)
	v.Audit, err = db.AuditLog(ctx, 0, 100)
	add(err)
	// Taking the deliveries due claims them a while: each look is a year later.
	looks++
	v.Notes, err = db.DueNotifications(ctx, time.Date(2100+looks, 1, 1, 0, 0, 0, 0, time.UTC), 10)
	add(err)
	for _, word := range []string{"glasshouse", "card_declined", "declined", "hotfix", "party"} {
		hits, _, err := db.Search(ctx, word, domain.ConversationFilter{})
		add(err)
		for _, h := range hits {
			v.Search[word] = append(v.Search[word], fmt.Sprintf("%d %s %d", h.Conversation.ID, h.Kind, h.Matches))
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return v
}

// sameView fails the test where two views differ, field by field.
func sameView(t *testing.T, what string, got, want view) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			t.Errorf("%s: %s =\n%+v\nwant\n%+v", what, g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
}

// rowCounts counts the rows of the SQLite file's tables.
func rowCounts(t *testing.T, path string) map[string]int64 {
	t.Helper()
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	out := map[string]int64{}
	rows, err := raw.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var name string
		rows.Scan(&name)
		names = append(names, name)
	}
	rows.Close()
	for _, name := range names {
		var n int64
		if err := raw.QueryRow(`SELECT count(*) FROM "` + name + `"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[name] = n
	}
	return out
}

// column is what query reads from the database, outside the store.
func column(t *testing.T, driver, dsn, query string) []string {
	t.Helper()
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rows, err := raw.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestCopyTo(t *testing.T) {
	target := storetest.Schema(t) // first: without a server, skip before any work
	in := fillInstall(t)
	from := storetest.Open(t, in.path)
	want := viewOf(t, from, in)
	to := storetest.Open(t, target)

	counts, err := store.CopyTo(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("EveryTableEveryRow", func(t *testing.T) {
		rows := rowCounts(t, in.path)
		for _, c := range counts {
			if c.Rows != rows[c.Table] || c.Rows == 0 {
				t.Errorf("%s: copied %d rows of %d; want all, and the test to have some", c.Table, c.Rows, rows[c.Table])
			}
		}
	})
	t.Run("SearchIndexInTheOrderOfTime", func(t *testing.T) {
		// A search for a common word takes the newest matches by the index's order.
		q := `SELECT kind || ' ' || ref_id FROM search ORDER BY rowid`
		got, want := column(t, "pgx", target, q), column(t, "sqlite3", "file:"+in.path+"?mode=ro", q)
		if !reflect.DeepEqual(got, want) || len(got) == 0 {
			t.Errorf("search index order =\n%q\nwant, as on SQLite,\n%q", got, want)
		}
	})
	t.Run("ReadsTheSame", func(t *testing.T) {
		sameView(t, "after the copy", viewOf(t, to, in), want)
		if len(want.Search["glasshouse"]) != 1 || len(want.Search["card_declined"]) != 1 || len(want.Search["hotfix"]) != 1 {
			t.Errorf("search before the copy = %v; the test wants a hit in an answer, a document and a question", want.Search)
		}
	})
	t.Run("ASecondCopyIsRefused", func(t *testing.T) {
		_, err := store.CopyTo(ctx, from, to)
		if !errors.Is(err, store.ErrTargetNotEmpty) {
			t.Fatalf("second CopyTo = %v, want ErrTargetNotEmpty", err)
		}
		sameView(t, "after a refused copy", viewOf(t, to, in), want)
	})

	t.Run("SignInsStillWork", func(t *testing.T) {
		if u, _, err := to.TokenUser(ctx, in.token); err != nil || u.ID != in.bob.ID {
			t.Errorf("TokenUser = %+v, %v; want bob", u, err)
		}
		if u, err := to.Session(ctx, in.cookie, store.SessionLimits{Idle: 100 * 365 * 24 * time.Hour, Max: 100 * 365 * 24 * time.Hour}); err != nil || u.ID != in.ann.ID {
			t.Errorf("Session = %+v, %v; want ann", u, err)
		}
		if c, err := to.A2AClientByToken(ctx, in.a2aSecret); err != nil || c.Name != "ci" {
			t.Errorf("A2AClientByToken = %+v, %v", c, err)
		}
	})

	t.Run("TheDraftsOfTheCrashAreRecovered", func(t *testing.T) {
		if _, err := to.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		evs, _ := to.Events(ctx, in.convs[3], 0)
		var got string
		for _, ev := range evs {
			if ev.Kind == domain.EventAgentMessage {
				got = fmt.Sprintf("%q interrupted=%v", ev.Text, ev.Interrupted)
			}
		}
		if want := `"Hello wor" interrupted=true`; got != want {
			t.Errorf("the cut-off message = %s, want %s", got, want)
		}
	})

	t.Run("NewRowsGetNewIDs", func(t *testing.T) {
		c, err := to.CreateConversation(ctx, in.ann.ID, "tester", "after", "")
		if err != nil || c.ID <= in.deleted {
			t.Fatalf("new conversation %d, %v; want an id past %d, deleted", c.ID, err, in.deleted)
		}
		ev, err := to.AppendEvent(ctx, domain.Event{ConversationID: c.ID, Kind: domain.EventUserMessage, Text: "a new glasshouse", Author: "Ann"})
		if err != nil || ev.ID <= in.lastEvent {
			t.Fatalf("new event %d, %v; want an id past %d, the highest given", ev.ID, err, in.lastEvent)
		}
		u, err := to.CreateUser(ctx, "carl", "h", domain.RoleUser)
		if err != nil || u.ID <= in.bob.ID {
			t.Fatalf("new user %+v, %v", u, err)
		}
		if _, _, err := to.CreateToken(ctx, in.ann.ID, "desk"); err != nil {
			t.Fatal(err)
		}
		if _, err := to.AddToGroup(ctx, "dev", []string{"carl"}, domain.RoleMember, "Ann"); err != nil {
			t.Fatal(err)
		}
		if hits, _, err := to.Search(ctx, "glasshouse", domain.ConversationFilter{}); err != nil || len(hits) != 2 {
			t.Fatalf("search after = %+v, %v; want the new message too", hits, err)
		}
	})
}

// CopyTo copies into PostgreSQL only.
func TestCopyTo_SQLiteTarget(t *testing.T) {
	from := storetest.Open(t, filepath.Join(t.TempDir(), "a.db"))
	to := storetest.Open(t, filepath.Join(t.TempDir(), "b.db"))
	if _, err := store.CopyTo(ctx, from, to); err == nil {
		t.Fatal("CopyTo into SQLite succeeded")
	}
}

// A copy that fails part way leaves the target as it was: empty, ready for another try.
func TestCopyTo_AllOrNothing(t *testing.T) {
	target := storetest.Schema(t)
	in := fillInstall(t)
	// Text PostgreSQL cannot hold (a NUL), in a table copied late.
	raw, err := sql.Open("sqlite3", "file:"+in.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO audit_log (at, actor, action, detail) VALUES ('2026-03-02T00:00:00Z', 'Ann', 'x', 'a' || char(0) || 'b')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	from, to := storetest.Open(t, in.path), storetest.Open(t, target)
	_, err = store.CopyTo(ctx, from, to)
	if err == nil || !strings.Contains(err.Error(), "audit_log") {
		t.Fatalf("CopyTo = %v, want the failure, naming audit_log", err)
	}
	if got := column(t, "pgx", target, `SELECT count(*)::text FROM users`); got[0] != "0" {
		t.Errorf("%s users after a failed copy, want none", got[0])
	}
	if got := column(t, "pgx", target, `SELECT count(*)::text FROM search`); got[0] != "0" {
		t.Errorf("%s search rows after a failed copy, want none", got[0])
	}
}
