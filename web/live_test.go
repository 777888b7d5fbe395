package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/web"
)

// liveAsker asks a live question (as a tool server does in the middle of a call) and waits
// for the answer within its step.
func liveAsker() *scripted {
	return &scripted{name: "live", step: func(ctx context.Context, in domain.StepInput, out domain.Output) error {
		id, err := out.Ask(domain.Question{Message: "Which branch?", Live: true, AllowCancel: true,
			Fields: []domain.Field{{Name: "branch", Kind: domain.KindText, Required: true}}})
		if err != nil {
			return err
		}
		res, err := out.Await(ctx, id)
		if err != nil {
			return err
		}
		return out.Text(fmt.Sprintf("The tool got %s %v.", res.Outcome, res.Values["branch"]))
	}}
}

func TestALiveQuestionIsAnsweredToTheWaitingStep(t *testing.T) {
	ts := newTestServer(t, newDB(t), liveAsker())
	path := ts.start(t, "live", "Delete a branch")
	id := convID(t, path)
	waitPending(t, ts, id)
	if code, body, _ := ts.post(t, "/questions/1/answer", url.Values{"branch": {"feature/x"}}); code != 200 {
		t.Fatalf("answer = %d %s", code, body)
	}
	ts.waitState(t, id, domain.StateDone)
	if _, page := ts.get(t, path); !strings.Contains(page, "The tool got answered feature/x.") {
		t.Error("the step did not get the answer")
	}
	// The step had its answer: the run is not resumed for it.
	if _, err := ts.db.Question(context.Background(), 2); err == nil {
		t.Error("the agent ran again and asked a second time")
	}
}

func TestALiveQuestionExpiresWhenParleyStops(t *testing.T) {
	db := newDB(t)
	srv := startServer(t, db, web.NewServerOptions{DB: db, Auth: singlePerson, Runner: runnerFor(db, liveAsker()), Heartbeat: time.Hour})
	ts := newTestServerFrom(t, db, srv)
	id := convID(t, ts.start(t, "live", "Delete a branch"))
	waitPending(t, ts, id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := db.Question(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if q.Resolution == nil || q.Resolution.Outcome != domain.Expired || q.Resolution.Reason != domain.StoppedWhileAsked {
		t.Fatalf("after the stop: %+v", q.Resolution)
	}
	// The run was cut off there, not left waiting: Retry is what goes on.
	if c, err := db.Conversation(context.Background(), id); err != nil || c.State != domain.StateInterrupted {
		t.Fatalf("after the stop: conversation %+v, %v", c, err)
	}
}

func TestALiveQuestionACrashLeftExpiresAtStart(t *testing.T) {
	db := newDB(t)
	// A first process asks; a second starts on the same file as after kill -9 of the first
	// (whose runner, here, never hears of it).
	ts := newTestServer(t, db, liveAsker())
	id := convID(t, ts.start(t, "live", "Delete a branch"))
	waitPending(t, ts, id)
	second := runnerFor(db, liveAsker())
	if err := second.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer second.Stop(context.Background())
	q, err := db.Question(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if q.Resolution == nil || q.Resolution.Outcome != domain.Expired || q.Resolution.Reason != domain.StoppedWhileAsked {
		t.Fatalf("after the restart: %+v", q.Resolution)
	}
	// As after a graceful stop: the run was cut off (not resumed with a failed call), and
	// Retry asks again.
	if c, err := db.Conversation(context.Background(), id); err != nil || c.State != domain.StateInterrupted {
		t.Fatalf("after the restart: conversation %+v, %v", c, err)
	}
	if err := second.Retry(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if q, err := db.Question(context.Background(), 2); err == nil && q.Pending() && q.Message == "Which branch?" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Retry did not ask again")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitPending(t *testing.T, ts *testServer, convID int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if q, err := ts.db.Question(context.Background(), 1); err == nil && q.Pending() && q.ConversationID == convID {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the live question was not asked")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A message sent while the step waits for the answer to a live question is not queued: the
// agent waits for the person, and their message goes instead of an answer, as it does for
// any question.
func TestAMessageWhileALiveQuestionWaitsIsNotQueued(t *testing.T) {
	ts := newTestServer(t, newDB(t), liveAsker())
	path := ts.start(t, "live", "Delete a branch")
	id := convID(t, path)
	waitPending(t, ts, id)
	if code, body, _ := ts.post(t, path+"/messages", url.Values{"text": {"Never mind"}}); code != 200 || strings.Contains(body, `role="alert">T`) {
		t.Fatalf("send = %d %s", code, body)
	}
	if q, _ := ts.db.Queued(context.Background(), id); len(q) != 0 {
		t.Fatalf("queued = %+v, want the message sent", q)
	}
	q, _ := ts.db.Question(context.Background(), 1)
	if q.Resolution == nil || q.Resolution.Outcome == domain.Answered {
		t.Fatalf("the live question = %+v, want it closed unanswered", q.Resolution)
	}
	evs, _ := ts.db.Events(context.Background(), id, 0)
	n := 0
	for _, ev := range evs {
		if ev.Kind == domain.EventUserMessage && ev.Text == "Never mind" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the message is in the log %d times, want once", n)
	}
}
