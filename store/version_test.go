package store_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// reply runs a queued step to its end: the agent writes text, given the history it read.
func reply(t *testing.T, db *store.DB, step int64, text string) []domain.Event {
	t.Helper()
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: in.ConversationID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: text, Author: "Bot", Text: text}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishStep(ctx, step, nil, nil); err != nil {
		t.Fatal(err)
	}
	return in.History
}

// texts are the messages of events, "> " before the person's.
func texts(evs []domain.Event) []string {
	var out []string
	for _, ev := range evs {
		switch ev.Kind {
		case domain.EventUserMessage:
			out = append(out, "> "+ev.Text)
		case domain.EventAgentMessage:
			out = append(out, ev.Text)
		}
	}
	return out
}

func shown(t *testing.T, db *store.DB, convID int64) []string {
	t.Helper()
	evs, err := db.Events(ctx, convID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return texts(evs)
}

func wantTexts(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func TestDB_Versions(t *testing.T) {
	path := storetest.Path(t)
	db := storetest.Open(t, path)
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	for _, m := range []string{"one", "two"} {
		step, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: m, Author: "ann"}))
		if err != nil {
			t.Fatal(err)
		}
		reply(t, db, step, "reply to "+m)
	}

	t.Run("Regenerate", func(t *testing.T) {
		step, v, err := db.Regenerate(ctx, c.ID, "ann", "r1")
		if err != nil || v != 1 || step == 0 {
			t.Fatalf("Regenerate = %d, %d, %v", step, v, err)
		}
		if again, _, err := db.Regenerate(ctx, c.ID, "ann", "r1"); err != nil || again != 0 {
			t.Fatalf("Regenerate again with its nonce = %d, %v; want 0, nil", again, err)
		}
		// The agent reads the new version: the person's last message, not the reply replaced.
		wantTexts(t, "history", texts(reply(t, db, step, "second reply to two")), "> one", "reply to one", "> two")
		wantTexts(t, "shown", shown(t, db, c.ID), "> one", "reply to one", "> two", "second reply to two")
		old, err := db.VersionEvents(ctx, c.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantTexts(t, "version 0", texts(old), "> one", "reply to one", "> two", "reply to two")
	})

	t.Run("Edit", func(t *testing.T) {
		evs, _ := db.Events(ctx, c.ID, 0)
		first := evs[0].ID
		step, v, err := db.Edit(ctx, c.ID, first, domain.Message{Text: "one, edited", Author: "ann", Nonce: "e1"})
		if err != nil || v != 2 {
			t.Fatalf("Edit = %d, %d, %v", step, v, err)
		}
		wantTexts(t, "history", texts(reply(t, db, step, "reply to the edit")), "> one, edited")
		wantTexts(t, "shown", shown(t, db, c.ID), "> one, edited", "reply to the edit")
		vs, cur, _ := db.Versions(ctx, c.ID)
		// Back at the first message, its other version shows as last seen: version 1.
		want := []domain.Choice{{Fork: 0, Versions: []int64{1, 2}, Current: 1}}
		if got := vs.Choices(cur); len(got) != 1 || !slices.Equal(got[0].Versions, want[0].Versions) || got[0].Current != 1 {
			t.Fatalf("choices = %+v, want %+v", got, want)
		}
		// An agent's message is not the person's to edit.
		var agentMsg int64
		for _, ev := range evs {
			if ev.Kind == domain.EventAgentMessage {
				agentMsg = ev.ID
			}
		}
		if _, _, err := db.Edit(ctx, c.ID, agentMsg, domain.Message{Text: "x", Author: "ann"}); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("Edit of an agent message: %v, want ENOTFOUND", err)
		}
	})

	t.Run("Choose", func(t *testing.T) {
		if err := db.ChooseVersion(ctx, c.ID, 1, "ann"); err != nil {
			t.Fatal(err)
		}
		wantTexts(t, "shown", shown(t, db, c.ID), "> one", "reply to one", "> two", "second reply to two")
		if err := db.ChooseVersion(ctx, c.ID, 9, "ann"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("ChooseVersion(9): %v, want ENOTFOUND", err)
		}
		conv, _ := db.Conversation(ctx, c.ID)
		if conv.Version != 1 || conv.State != domain.StateDone {
			t.Fatalf("conversation = version %d, %s; want 1, done", conv.Version, conv.State)
		}
	})

	t.Run("Search", func(t *testing.T) {
		found := func(text string) bool {
			hits, _, err := db.Search(ctx, text, domain.ConversationFilter{})
			if err != nil {
				t.Fatal(err)
			}
			return len(hits) > 0
		}
		if !found("second reply") || found("edit") {
			t.Fatal("search does not follow the version shown (1)")
		}
		if err := db.ChooseVersion(ctx, c.ID, 2, "ann"); err != nil {
			t.Fatal(err)
		}
		if found("second reply") || !found("edit") {
			t.Fatal("search does not follow the version shown (2)")
		}
	})

	t.Run("Kept", func(t *testing.T) {
		db.Close() // as after kill -9: what was committed is there
		db = storetest.Open(t, path)
		wantTexts(t, "shown after reopening", shown(t, db, c.ID), "> one, edited", "reply to the edit")
		var all []string
		for _, n := range []int64{0, 1, 2} {
			evs, err := db.VersionEvents(ctx, c.ID, n, 0)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, strings.Join(texts(evs), "|"))
		}
		wantTexts(t, "versions", all, "> one|reply to one|> two|reply to two", "> one|reply to one|> two|second reply to two", "> one, edited|reply to the edit")
	})
}

func TestDB_Versions_SupersedeQuestions(t *testing.T) {
	db := storetest.New(t)
	c, ids := startWaiting(t, db, textQuestion())
	if _, _, err := db.Regenerate(ctx, c.ID, "ann", ""); err != nil {
		t.Fatal(err)
	}
	rec, _ := db.Question(ctx, ids[0])
	if rec.Pending() || rec.Resolution.Outcome != domain.Superseded || !strings.Contains(rec.Resolution.Reason, "new version") {
		t.Fatalf("question of the version left = %+v, want superseded for the new version", rec.Resolution)
	}
	if _, _, err := db.Regenerate(ctx, c.ID, "ann", ""); err != domain.ErrRunning {
		t.Fatalf("Regenerate while running: %v, want ErrRunning", err)
	}
	if err := db.ChooseVersion(ctx, c.ID, 0, "ann"); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("ChooseVersion while running: %v, want ECONFLICT", err)
	}
}

func TestDB_Queue(t *testing.T) {
	db := storetest.New(t)
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "one", Author: "ann"}))
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	// Two messages while the agent works: both wait; one is removed, another sent twice.
	var queued []int64
	for _, m := range []domain.Message{{Text: "two", Nonce: "n2"}, {Text: "three"}, {Text: "two", Nonce: "n2"}, {Text: "four"}} {
		m.Author = "ann"
		sent, err := db.StartRun(ctx, c.ID, m)
		if err != nil || sent.Step != 0 {
			t.Fatalf("StartRun while running = %+v, %v", sent, err)
		}
		if sent.Queued != 0 {
			queued = append(queued, sent.Queued)
		}
	}
	if len(queued) != 3 {
		t.Fatalf("queued %d messages, want 3 (the one sent twice once)", len(queued))
	}
	if err := db.Unqueue(ctx, c.ID, queued[1], "ann"); err != nil {
		t.Fatal(err)
	}
	if err := db.Unqueue(ctx, c.ID, queued[1], "ann"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("Unqueue twice: %v, want ENOTFOUND", err)
	}
	q, _ := db.Queued(ctx, c.ID)
	if len(q) != 2 || q[0].Text != "two" || q[1].Text != "four" {
		t.Fatalf("queued = %+v", q)
	}
	// The run ends: the queued messages go, together, in the next run.
	if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: "a", Author: "Bot", Text: "reply to one"}); err != nil {
		t.Fatal(err)
	}
	next, err := db.FinishStep(ctx, step, nil, nil)
	if err != nil || next == 0 {
		t.Fatalf("FinishStep = %d, %v; want the step of the queued messages", next, err)
	}
	wantTexts(t, "history", texts(reply(t, db, next, "reply to two and four")), "> one", "reply to one", "> two", "> four")
	if q, _ := db.Queued(ctx, c.ID); len(q) != 0 {
		t.Fatalf("still queued: %+v", q)
	}
	// Stopped: nothing queued goes by itself; Send now sends it.
	step, _ = stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "five", Author: "ann"}))
	if _, _, err := db.BeginStep(ctx, step); err != nil {
		t.Fatal(err)
	}
	sent, _ := db.StartRun(ctx, c.ID, domain.Message{Text: "six", Author: "ann"})
	if next, err := db.FinishStep(ctx, step, nil, domain.ErrStopped); err != nil || next != 0 {
		t.Fatalf("FinishStep(stopped) = %d, %v; want 0: a stop sends nothing", next, err)
	}
	if q, _ := db.Queued(ctx, c.ID); len(q) != 1 || q[0].ID != sent.Queued {
		t.Fatalf("queued after the stop = %+v", q)
	}
	now, err := db.SendQueued(ctx, c.ID)
	if err != nil || now == 0 {
		t.Fatalf("SendQueued = %d, %v", now, err)
	}
	// A second Send now, while the first's run goes on: nothing is queued, and nothing stops.
	if _, err := db.SendQueued(ctx, c.ID); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("SendQueued again while its run goes on: %v, want ENOTFOUND (not ErrRunning, which stops the run)", err)
	}
	hist := texts(reply(t, db, now, "reply to six"))
	if hist[len(hist)-1] != "> six" {
		t.Fatalf("history = %q, want it to end with six", hist)
	}
	if _, err := db.SendQueued(ctx, c.ID); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("SendQueued with none: %v, want ENOTFOUND", err)
	}
}

// Deleting a conversation takes its versions and its queue with it.
func TestDB_DeleteConversation_VersionsAndQueue(t *testing.T) {
	db := storetest.New(t)
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "one", Author: "ann"}))
	reply(t, db, step, "reply")
	step, _, err := db.Regenerate(ctx, c.ID, "ann", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.BeginStep(ctx, step); err != nil {
		t.Fatal(err)
	}
	if sent, err := db.StartRun(ctx, c.ID, domain.Message{Text: "queued", Author: "ann"}); err != nil || sent.Queued == 0 {
		t.Fatalf("StartRun = %+v, %v", sent, err)
	}
	if _, err := db.FinishStep(ctx, step, nil, domain.ErrStopped); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteConversation(ctx, c.ID, "ann"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Versions(ctx, c.ID); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("versions after deleting: %v, want ENOTFOUND", err)
	}
	if q, _ := db.Queued(ctx, c.ID); len(q) != 0 {
		t.Errorf("queued after deleting: %+v", q)
	}
}

// Editing a message again is another version of the same point: one "‹ 3 / 3 ›", not a
// switch per edit.
func TestDB_Versions_EditTwice(t *testing.T) {
	db := storetest.New(t)
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	for _, m := range []string{"one", "two"} {
		step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: m, Author: "ann"}))
		reply(t, db, step, "reply to "+m)
	}
	last := func() int64 {
		evs, _ := db.Events(ctx, c.ID, 0)
		var id int64
		for _, ev := range evs {
			if ev.Kind == domain.EventUserMessage {
				id = ev.ID
			}
		}
		return id
	}
	for _, text := range []string{"two, again", "two, once more"} {
		step, _, err := db.Edit(ctx, c.ID, last(), domain.Message{Text: text, Author: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		reply(t, db, step, "reply to "+text)
	}
	wantTexts(t, "shown", shown(t, db, c.ID), "> one", "reply to one", "> two, once more", "reply to two, once more")
	vs, cur, _ := db.Versions(ctx, c.ID)
	ch := vs.Choices(cur)
	if len(ch) != 1 || !slices.Equal(ch[0].Versions, []int64{0, 1, 2}) || ch[0].Current != 2 {
		t.Fatalf("choices = %+v, want one: versions 0, 1, 2, the third shown", ch)
	}
	// Editing the first message twice: both edits start at the beginning.
	first := func() int64 {
		evs, _ := db.Events(ctx, c.ID, 0)
		for _, ev := range evs {
			if ev.Kind == domain.EventUserMessage {
				return ev.ID
			}
		}
		return 0
	}
	for _, text := range []string{"uno", "eins"} {
		step, _, err := db.Edit(ctx, c.ID, first(), domain.Message{Text: text, Author: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		reply(t, db, step, "reply to "+text)
	}
	vs, cur, _ = db.Versions(ctx, c.ID)
	if ch := vs.Choices(cur); len(ch) != 1 || ch[0].Fork != 0 || len(ch[0].Versions) != 3 || ch[0].Current != 2 {
		t.Fatalf("choices after editing the first message twice = %+v, want one of 3 at the start", ch)
	}
}
