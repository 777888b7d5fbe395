package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

var ctx = context.Background()

func textQuestion() domain.Question {
	return domain.Question{Message: "Which branch?", Asker: "Tester", Fields: []domain.Field{{Name: "branch", Kind: domain.KindText, Required: true}}}
}

// startWaiting makes a conversation whose first step asked q and finished, leaving it waiting.
func startWaiting(t *testing.T, db *store.DB, qs ...domain.Question) (domain.Conversation, []int64) {
	t.Helper()
	c, err := db.CreateConversation(ctx, 0, "tester", "t", "")
	if err != nil {
		t.Fatal(err)
	}
	step, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hello", Author: "you", Nonce: ""}))
	if err != nil {
		t.Fatal(err)
	}
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, q := range qs {
		rec, err := db.AskQuestion(ctx, in.RunID, q)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	if resume, err := db.FinishStep(ctx, step, nil, nil); err != nil || resume != 0 {
		t.Fatalf("FinishStep = %d, %v; want 0, nil", resume, err)
	}
	return c, ids
}

func TestDB_Migrate(t *testing.T) {
	path := storetest.Path(t)
	db := storetest.Open(t, path)
	db.Close()
	// Reopening applies nothing twice.
	db2 := storetest.Open(t, path)
	if _, err := db2.CreateConversation(ctx, 0, "a", "b", ""); err != nil {
		t.Fatal(err)
	}
}

func TestDB_Conversation(t *testing.T) {
	db := storetest.New(t)
	t.Run("OK", func(t *testing.T) {
		c, err := db.CreateConversation(ctx, 0, "event-planner", "Party", "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Conversation(ctx, c.ID)
		if err != nil || got.Title != "Party" || got.Agent != "event-planner" {
			t.Fatalf("Conversation = %+v, %v", got, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := db.Conversation(ctx, 9999)
		if domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
	})
}

func TestDB_ListConversations_NewestFirst(t *testing.T) {
	db := storetest.New(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { now = now.Add(time.Second); return now }
	a, _ := db.CreateConversation(ctx, 0, "x", "a", "")
	b, _ := db.CreateConversation(ctx, 0, "x", "b", "")
	if _, err := db.StartRun(ctx, a.ID, domain.Message{Text: "bump", Author: "you", Nonce: ""}); err != nil {
		t.Fatal(err)
	}
	list, _, err := db.ListConversations(ctx, domain.ConversationFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("order = %v, want a (active last) then b", list)
	}
	if list[0].State != domain.StateRunning {
		t.Errorf("state = %q, want running", list[0].State)
	}
}

func TestDB_Resolve(t *testing.T) {
	t.Run("OK resumes once", func(t *testing.T) {
		db := storetest.New(t)
		c, ids := startWaiting(t, db, textQuestion())
		got, _ := db.Conversation(ctx, c.ID)
		if got.State != domain.StateWaiting {
			t.Fatalf("state = %q, want waiting", got.State)
		}
		resume, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Answered, Values: map[string]any{"branch": "main"}, By: "you"})
		if err != nil || resume == 0 {
			t.Fatalf("Resolve = %d, %v; want a resume step", resume, err)
		}
		rec, err := db.Question(ctx, ids[0])
		if err != nil || rec.Pending() || rec.Resolution.Values["branch"] != "main" {
			t.Fatalf("Question = %+v, %v", rec, err)
		}
	})
	t.Run("ErrConflict on second resolve", func(t *testing.T) {
		db := storetest.New(t)
		_, ids := startWaiting(t, db, textQuestion())
		if _, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Declined}); err != nil {
			t.Fatal(err)
		}
		_, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Answered})
		if domain.ErrorCode(err) != domain.ECONFLICT {
			t.Fatalf("second Resolve: got %v, want ECONFLICT", err)
		}
	})
	t.Run("concurrent submits store one answer and one resume", func(t *testing.T) {
		db := storetest.New(t)
		_, ids := startWaiting(t, db, textQuestion())
		var wg sync.WaitGroup
		var mu sync.Mutex
		resumes, conflicts := 0, 0
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				step, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Answered, Values: map[string]any{"branch": "x"}})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && step != 0:
					resumes++
				case domain.ErrorCode(err) == domain.ECONFLICT:
					conflicts++
				default:
					t.Errorf("Resolve: %d, %v", step, err)
				}
			}()
		}
		wg.Wait()
		if resumes != 1 || conflicts != 19 {
			t.Fatalf("resumes=%d conflicts=%d, want 1 and 19", resumes, conflicts)
		}
	})
	t.Run("several pending resolve on their own; resume after the last", func(t *testing.T) {
		db := storetest.New(t)
		_, ids := startWaiting(t, db, textQuestion(), textQuestion())
		if step, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[1], Outcome: domain.Answered}); err != nil || step != 0 {
			t.Fatalf("first of two: %d, %v; want no resume yet", step, err)
		}
		if step, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Answered}); err != nil || step == 0 {
			t.Fatalf("last of two: %d, %v; want a resume", step, err)
		}
	})
	t.Run("cancel stops the run: its other questions are cancelled and the resume queued", func(t *testing.T) {
		db := storetest.New(t)
		_, ids := startWaiting(t, db, textQuestion(), textQuestion(), textQuestion())
		if _, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[2], Outcome: domain.Answered, Values: map[string]any{"branch": "x"}}); err != nil {
			t.Fatal(err)
		}
		step, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Cancelled, By: "you"})
		if err != nil || step == 0 {
			t.Fatalf("cancel: %d, %v; want the resume queued", step, err)
		}
		want := []domain.Outcome{domain.Cancelled, domain.Cancelled, domain.Answered}
		for i, id := range ids {
			rec, _ := db.Question(ctx, id)
			if rec.Pending() || rec.Resolution.Outcome != want[i] {
				t.Errorf("question %d: got %+v, want %s", i, rec.Resolution, want[i])
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		db := storetest.New(t)
		_, err := db.Resolve(ctx, domain.Resolution{QuestionID: 42, Outcome: domain.Answered})
		if domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Fatalf("got %v, want ENOTFOUND", err)
		}
	})
}

func TestDB_StartRun_SupersedesPending(t *testing.T) {
	db := storetest.New(t)
	c, ids := startWaiting(t, db, textQuestion())
	if _, err := db.StartRun(ctx, c.ID, domain.Message{Text: "never mind, do this instead", Author: "you", Nonce: ""}); err != nil {
		t.Fatal(err)
	}
	rec, _ := db.Question(ctx, ids[0])
	if rec.Pending() || rec.Resolution.Outcome != domain.Superseded {
		t.Fatalf("question = %+v, want superseded", rec.Resolution)
	}
	if _, err := db.StartRun(ctx, c.ID, domain.Message{Text: "again", Author: "you", Interrupt: true}); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("StartRun interrupting while running: %v, want ECONFLICT", err)
	}
}

func TestDB_Recover(t *testing.T) {
	path := storetest.Path(t)
	db := storetest.Open(t, path)
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hi", Author: "you", Nonce: ""}))
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	// A message finished, whose last batch came after it; then one cut off mid-way.
	if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: "1-1", Author: "Bot", Text: "Done."}); err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]domain.Draft{
		{{ConversationID: c.ID, RunID: in.RunID, MessageID: "1-1", Text: "Done."}, {ConversationID: c.ID, RunID: in.RunID, MessageID: "1-2", Author: "Bot", Text: "Hello "}},
		{{ConversationID: c.ID, RunID: in.RunID, MessageID: "1-2", Author: "Bot", At: 6, Text: "wor"}},
	} {
		if err := db.SaveDrafts(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// A second conversation has a step queued but never started.
	c2, _ := db.CreateConversation(ctx, 0, "tester", "t2", "")
	queued, _ := stepOf(db.StartRun(ctx, c2.ID, domain.Message{Text: "hi", Author: "you", Nonce: ""}))
	db.Close() // the crash

	db = storetest.Open(t, path)
	got, err := db.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != queued || got[0].ConversationID != c2.ID {
		t.Fatalf("Recover queued = %v, want [%d of conversation %d]", got, queued, c2.ID)
	}
	conv, _ := db.Conversation(ctx, c.ID)
	if conv.State != domain.StateInterrupted {
		t.Fatalf("state = %q, want interrupted", conv.State)
	}
	evs, _ := db.Events(ctx, c.ID, 0)
	var msgs []string
	for _, ev := range evs {
		if ev.Kind == domain.EventAgentMessage {
			msgs = append(msgs, fmt.Sprintf("%s %q %s interrupted=%v", ev.MessageID, ev.Text, ev.Author, ev.Interrupted))
		}
	}
	if want := []string{`1-1 "Done." Bot interrupted=false`, `1-2 "Hello wor" Bot interrupted=true`}; !slices.Equal(msgs, want) {
		t.Fatalf("messages after recovery = %q, want %q", msgs, want)
	}
	if _, err := db.RetryRun(ctx, c.ID); err != nil {
		t.Fatalf("RetryRun: %v", err)
	}
}

func TestDB_Deadlines(t *testing.T) {
	db := storetest.New(t)
	now := time.Now().UTC()
	q := textQuestion()
	q.Deadline = now.Add(time.Minute)
	_, ids := startWaiting(t, db, q, textQuestion())
	next, err := db.NextDeadline(ctx)
	if err != nil || !next.Equal(q.Deadline.Truncate(time.Nanosecond)) {
		t.Fatalf("NextDeadline = %v, %v; want %v", next, err, q.Deadline)
	}
	if due, _ := db.DueQuestions(ctx, now); len(due) != 0 {
		t.Fatalf("due before deadline: %v", due)
	}
	due, _ := db.DueQuestions(ctx, now.Add(2*time.Minute))
	if len(due) != 1 || due[0] != ids[0] {
		t.Fatalf("due after deadline = %v, want [%d]", due, ids[0])
	}
}

func TestDB_AppendEvent_ConversationMustExist(t *testing.T) {
	db := storetest.New(t)
	_, err := db.AppendEvent(ctx, domain.Event{ConversationID: 77, Kind: domain.EventPlan, Plan: &domain.Plan{}})
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("AppendEvent to a missing conversation: %v, want a foreign key error", err)
	}
}

func TestDB_StartRun_NonceRecordsOnce(t *testing.T) {
	db := storetest.New(t)
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	first, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hello", Author: "you", Nonce: "n1"}))
	if err != nil || first == 0 {
		t.Fatalf("first = %d, %v", first, err)
	}
	again, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hello", Author: "you", Nonce: "n1"}))
	if err != nil || again != 0 {
		t.Fatalf("re-sent = %d, %v; want 0, nil", again, err)
	}
	evs, _ := db.Events(ctx, c.ID, 0)
	n := 0
	for _, ev := range evs {
		if ev.Kind == domain.EventUserMessage {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d user messages, want 1", n)
	}
}

func TestDB_InterruptStep_AfterAskStaysAnswerable(t *testing.T) {
	db := storetest.New(t)
	c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
	step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hi", Author: "you", Nonce: ""}))
	_, in, _ := db.BeginStep(ctx, step)
	rec, err := db.AskQuestion(ctx, in.RunID, textQuestion())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InterruptStep(ctx, step, nil); err != nil { // cut off before FinishStep
		t.Fatal(err)
	}
	if got, _ := db.Conversation(ctx, c.ID); got.State != domain.StateWaiting {
		t.Fatalf("state = %q, want waiting", got.State)
	}
	resume, err := db.Resolve(ctx, domain.Resolution{QuestionID: rec.ID, Outcome: domain.Answered})
	if err != nil || resume == 0 {
		t.Fatalf("Resolve = %d, %v; want a resume", resume, err)
	}
}

func TestDB_FinishStep(t *testing.T) {
	t.Run("failure supersedes its questions", func(t *testing.T) {
		db := storetest.New(t)
		c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
		step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hi", Author: "you", Nonce: ""}))
		_, in, _ := db.BeginStep(ctx, step)
		rec, _ := db.AskQuestion(ctx, in.RunID, textQuestion())
		if _, err := db.FinishStep(ctx, step, nil, errors.New("boom")); err != nil {
			t.Fatal(err)
		}
		got, _ := db.Question(ctx, rec.ID)
		if got.Pending() || got.Resolution.Outcome != domain.Superseded {
			t.Fatalf("question = %+v, want superseded", got.Resolution)
		}
		if conv, _ := db.Conversation(ctx, c.ID); conv.State != domain.StateFailed {
			t.Fatalf("state = %q, want failed", conv.State)
		}
	})
	t.Run("an answer that came while the step ran resumes the run", func(t *testing.T) {
		db := storetest.New(t)
		c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
		step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hi", Author: "you", Nonce: ""}))
		_, in, _ := db.BeginStep(ctx, step)
		rec, _ := db.AskQuestion(ctx, in.RunID, textQuestion())
		// The step is still running: Resolve leaves the resume to FinishStep.
		if resume, err := db.Resolve(ctx, domain.Resolution{QuestionID: rec.ID, Outcome: domain.Answered}); err != nil || resume != 0 {
			t.Fatalf("Resolve during the step = %d, %v; want no resume yet", resume, err)
		}
		resume, err := db.FinishStep(ctx, step, nil, nil)
		if err != nil || resume == 0 {
			t.Fatalf("FinishStep = %d, %v; want the resume", resume, err)
		}
	})
	t.Run("an agent that only asks for secrets is stopped", func(t *testing.T) {
		db := storetest.New(t)
		c, _ := db.CreateConversation(ctx, 0, "tester", "t", "")
		step, _ := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hi", Author: "you", Nonce: ""}))
		refused := domain.Question{Message: "token?", Fields: []domain.Field{}, Refused: []domain.RefusedField{{Name: "token", Reason: "secret"}}}
		for i := 0; step != 0; i++ {
			_, in, err := db.BeginStep(ctx, step)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.AskQuestion(ctx, in.RunID, refused); err != nil {
				t.Fatal(err)
			}
			if step, err = db.FinishStep(ctx, step, nil, nil); err != nil {
				t.Fatal(err)
			}
			if i > store.MaxStepsPerRun {
				t.Fatal("the run never stopped")
			}
		}
		if conv, _ := db.Conversation(ctx, c.ID); conv.State != domain.StateFailed {
			t.Fatalf("state = %q, want failed", conv.State)
		}
	})
}

func TestOpen_PathWithURLCharacters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "odd #1?x=%41.db")
	db := storetest.Open(t, path)
	if _, err := db.CreateConversation(ctx, 0, "a", "b", ""); err != nil {
		t.Fatal(err)
	}
	db.Close()
	entries, _ := os.ReadDir(dir)
	found := false
	for _, e := range entries {
		found = found || e.Name() == "odd #1?x=%41.db"
	}
	if !found {
		t.Fatalf("database not created at %q; dir has %v", path, entries)
	}
}

// Whoever names a file (a person's upload, an A2A client, an agent), it is stored under a
// name that reads as what it is, and the message's refs carry that name.
func TestDB_StartRun_DocumentNamesReadAsTheyAre(t *testing.T) {
	db := storetest.New(t)
	c, _ := db.CreateConversation(ctx, 0, "x", "invoices", "")
	files := []domain.File{{Name: "invoice\u202Efdp.exe", MimeType: "text/plain", Content: []byte("total 12\n")},
		{Name: "a\x00b\u2066.txt", MimeType: "text/plain", Content: []byte("x\n")}}
	if _, err := db.StartRun(ctx, c.ID, domain.Message{Text: "pay", Files: files}); err != nil {
		t.Fatal(err)
	}
	events, err := db.Events(ctx, c.ID, 0)
	if err != nil || len(events) == 0 {
		t.Fatalf("events = %+v, %v", events, err)
	}
	for i, want := range []string{"invoicefdp.exe", "ab.txt"} {
		d, err := db.Document(ctx, c.ID, int64(i+1))
		if err != nil || d.Name != want {
			t.Errorf("document %d = %q, %v; want %q", i+1, d.Name, err, want)
		}
		if refs := events[0].Documents; len(refs) != 2 || refs[i].Name != want {
			t.Errorf("the message's refs = %+v, want %q", refs, want)
		}
	}
}

// stepOf is the step a message started.
func stepOf(s domain.Sent, err error) (int64, error) { return s.Step, err }
