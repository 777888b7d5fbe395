package store_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// converse makes a conversation of the user's: a message, the agent's reply, a question and
// its answer (values), all stored as the runner stores them.
func converse(t *testing.T, db *store.DB, userID int64, agentName, msg, reply string, values map[string]any) domain.Conversation {
	t.Helper()
	c, err := db.CreateConversation(ctx, userID, agentName, domain.Title(msg), "")
	if err != nil {
		t.Fatal(err)
	}
	step, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: msg, Author: "someone"}))
	if err != nil {
		t.Fatal(err)
	}
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: fmt.Sprintf("%d-1", step), Text: reply}); err != nil {
		t.Fatal(err)
	}
	if values != nil {
		rec, err := db.AskQuestion(ctx, in.RunID, domain.Question{Message: "Which venue do you prefer?", Fields: []domain.Field{{Name: "venue", Kind: domain.KindText}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.FinishStep(ctx, step, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Resolve(ctx, domain.Resolution{QuestionID: rec.ID, Outcome: domain.Answered, Values: values, By: "someone"}); err != nil {
			t.Fatal(err)
		}
	} else if _, err := db.FinishStep(ctx, step, nil, nil); err != nil {
		t.Fatal(err)
	}
	c, _ = db.Conversation(ctx, c.ID)
	return c
}

func hitIDs(hits []domain.SearchHit) []int64 {
	var ids []int64
	for _, h := range hits {
		ids = append(ids, h.Conversation.ID)
	}
	return ids
}

func TestDB_Search(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	bob, _ := db.CreateUser(ctx, "bob", "h", "")
	party := converse(t, db, ann.ID, "event-planner", "Plan a party for 30 people", "Where will it be?", map[string]any{"venue": "The Glasshouse Lisbon"})
	deploy := converse(t, db, bob.ID, "platform-engineer", "Open a PR for the login fix", "Which branch?", map[string]any{"venue": "feature/login"})
	diacritics := converse(t, db, bob.ID, "event-planner", "Un café à Zürich", "Très bien.", nil)

	tests := []struct {
		name, text string
		filter     domain.ConversationFilter
		want       []int64
		wantKind   string
	}{
		{"AWordOfAnAnswer", "glasshouse", domain.ConversationFilter{}, []int64{party.ID}, "answer"},
		{"AWordOfAMessage", "login", domain.ConversationFilter{}, []int64{deploy.ID}, ""},
		{"AgentReply", "branch", domain.ConversationFilter{}, []int64{deploy.ID}, "agent_message"},
		{"Stemmed", "parties", domain.ConversationFilter{}, []int64{party.ID}, "user_message"},
		{"EveryWordRequired", "party login", domain.ConversationFilter{}, nil, ""},
		{"Diacritics", "zurich cafe", domain.ConversationFilter{}, []int64{diacritics.ID}, ""},
		{"OwnConversationsOnly", "glasshouse", domain.ConversationFilter{UserID: bob.ID}, nil, ""},
		{"ByAgent", "which", domain.ConversationFilter{Agent: "platform-engineer"}, []int64{deploy.ID}, ""},
		{"FTSSyntaxIsText", `"glass* OR NEAR(a b) AND`, domain.ConversationFilter{}, nil, ""},
		{"Nothing", "  ;; ", domain.ConversationFilter{}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, _, err := db.Search(ctx, tt.text, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got := hitIDs(hits); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("Search(%q) = %v, want %v", tt.text, got, tt.want)
			}
			if tt.wantKind != "" && hits[0].Kind != tt.wantKind {
				t.Errorf("matched in %q, want %q", hits[0].Kind, tt.wantKind)
			}
		})
	}
	hits, _, _ := db.Search(ctx, "glasshouse", domain.ConversationFilter{})
	if want := "The \x02Glasshouse\x03 Lisbon"; !strings.Contains(hits[0].Snippet, want) || hits[0].Conversation.Owner != "ann" {
		t.Errorf("snippet %q (owner %q), want it to mark %q", hits[0].Snippet, hits[0].Conversation.Owner, want)
	}
}

func TestDB_Search_Documents(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	c, _ := db.CreateConversation(ctx, ann.ID, "x", "logs", "")
	files := []domain.File{
		{Name: "app.log", MimeType: "text/x-log", Content: []byte("12:00 ERROR payments: card_declined for order 88123\n")},
		{Name: "shot.png", MimeType: "image/png", Content: []byte("\x89PNG card_declined")},
	}
	if _, err := db.StartRun(ctx, c.ID, domain.Message{Text: "see attached", Files: files}); err != nil {
		t.Fatal(err)
	}
	hits, _, err := db.Search(ctx, "card_declined", domain.ConversationFilter{})
	if err != nil || len(hits) != 1 || hits[0].Kind != "document" || hits[0].Matches != 1 {
		t.Fatalf("hits = %+v, %v; want the log alone", hits, err)
	}
	if hits, _, _ := db.Search(ctx, "app.log", domain.ConversationFilter{}); len(hits) != 1 {
		t.Errorf("a document's name finds it: %+v", hits)
	}
}

// A word in nearly every text must not make the search score every match: past the rank
// limit the newest matches come, newest first.
func TestDB_Search_CommonWord(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	var last domain.Conversation
	for i := range 700 {
		last = converse(t, db, ann.ID, "x", fmt.Sprintf("the report number %d", i), "the answer", nil)
	}
	hits, common, err := db.Search(ctx, "the", domain.ConversationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !common || len(hits) != 50 || hits[0].Conversation.ID != last.ID {
		t.Fatalf("common = %v, %d hits, first %d; want the newest 50 first (%d)", common, len(hits), hits[0].Conversation.ID, last.ID)
	}
	// A rare word next to the common one is ranked.
	hits, common, _ = db.Search(ctx, "the 123", domain.ConversationFilter{})
	if common || len(hits) != 1 || hits[0].Conversation.Title != "the report number 123" {
		t.Fatalf("common = %v, hits %+v", common, hits)
	}
}

func TestDB_Inbox(t *testing.T) {
	db := storetest.New(t)
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { now = now.Add(time.Minute); return now }
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	bob, _ := db.CreateUser(ctx, "bob", "h", "")
	ask := func(userID int64, msg string) int64 {
		c, _ := db.CreateConversation(ctx, userID, "x", msg, "")
		step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: msg}))
		_, in, _ := db.BeginStep(ctx, step)
		rec, err := db.AskQuestion(ctx, in.RunID, domain.Question{Message: "Budget for " + msg + "?", Fields: []domain.Field{{Name: "b", Kind: domain.KindNumber}}})
		if err != nil {
			t.Fatal(err)
		}
		db.FinishStep(ctx, step, nil, nil)
		return rec.ID
	}
	a1 := ask(ann.ID, "one")
	b1 := ask(bob.ID, "two")
	a2 := ask(ann.ID, "three")
	db.Resolve(ctx, domain.Resolution{QuestionID: a2, Outcome: domain.Declined, By: "ann"})
	a3 := ask(ann.ID, "four")

	ids := func(items []domain.InboxItem) []int64 {
		var out []int64
		for _, it := range items {
			out = append(out, it.Question.ID)
		}
		return out
	}
	mine, err := db.Inbox(ctx, ann.ID, 50)
	if err != nil || fmt.Sprint(ids(mine)) != fmt.Sprint([]int64{a1, a3}) {
		t.Fatalf("ann's inbox = %v, %v; want %v oldest first", ids(mine), err, []int64{a1, a3})
	}
	if mine[0].Question.Message != "Budget for one?" || mine[0].Conversation.Title != "one" || mine[0].Conversation.Owner != "ann" {
		t.Errorf("item = %+v", mine[0])
	}
	all, _ := db.Inbox(ctx, 0, 50)
	if fmt.Sprint(ids(all)) != fmt.Sprint([]int64{a1, b1, a3}) {
		t.Errorf("everyone's inbox = %v", ids(all))
	}
}

func TestDB_QuestionFacts(t *testing.T) {
	db := storetest.New(t)
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	_, ids := startWaiting(t, db, textQuestion(), textQuestion())
	now = now.Add(90 * time.Second)
	db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Answered, Values: map[string]any{"branch": "main"}})
	facts, err := db.QuestionFacts(ctx, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil || len(facts) != 2 {
		t.Fatalf("facts = %+v, %v", facts, err)
	}
	if f := facts[0]; f.Agent != "tester" || f.Outcome != domain.Answered || f.ResolvedAt.Sub(f.AskedAt) != 90*time.Second {
		t.Errorf("answered fact = %+v", f)
	}
	if facts[1].Outcome != "" {
		t.Errorf("pending fact = %+v", facts[1])
	}
	if facts, _ := db.QuestionFacts(ctx, now.Add(time.Hour), now.Add(2*time.Hour)); len(facts) != 0 {
		t.Errorf("outside the span: %+v", facts)
	}
}

func TestDB_AnswerOnBehalfIsAudited(t *testing.T) {
	db := storetest.New(t)
	c, ids := startWaiting(t, db, textQuestion())
	if _, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Answered, Values: map[string]any{"branch": "main"}, By: "carol", OnBehalfOf: "ann"}); err != nil {
		t.Fatal(err)
	}
	rec, _ := db.Question(ctx, ids[0])
	if rec.Resolution.By != "carol" || rec.Resolution.OnBehalfOf != "ann" {
		t.Errorf("resolution = %+v", rec.Resolution)
	}
	log, _ := db.AuditLog(ctx, c.ID, 10)
	if len(log) != 1 || log[0].Actor != "carol" || log[0].Action != "answer-on-behalf" || !strings.Contains(log[0].Detail, "for ann") {
		t.Errorf("audit = %+v", log)
	}
}
