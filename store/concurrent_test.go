package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// instances opens n handles on one fresh database: on PostgreSQL n instances, each with its
// own pool and listener; on SQLite the one process's database, n times the same handle.
func instances(t *testing.T, n int) []*store.DB {
	t.Helper()
	path := storetest.Path(t)
	first := storetest.Open(t, path)
	dbs := []*store.DB{first}
	for len(dbs) < n {
		if storetest.Postgres() {
			dbs = append(dbs, storetest.Open(t, path))
		} else {
			dbs = append(dbs, first)
		}
	}
	return dbs
}

// Eight people answer one question at the same moment, through two instances: exactly one
// answer is stored and resumes the run; the others are told it was answered already.
func TestDB_ConcurrentAnswersResolveOnce(t *testing.T) {
	dbs := instances(t, 2)
	for round := range 5 {
		_, ids := startWaiting(t, dbs[0], textQuestion())
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []string
		var resumes []int64
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				by := fmt.Sprintf("person %d", i)
				resume, err := dbs[i%2].Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Answered, Values: map[string]any{"branch": by}, By: by})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won, resumes = append(won, by), append(resumes, resume)
				case domain.ErrorCode(err) != domain.ECONFLICT:
					t.Errorf("round %d: %s's answer: %v; want it stored or refused as answered already", round, by, err)
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 || resumes[0] == 0 {
			t.Fatalf("round %d: answers stored by %v (resumes %v); want exactly one, resuming the run", round, won, resumes)
		}
		rec, err := dbs[1].Question(ctx, ids[0])
		if err != nil || rec.Resolution == nil || rec.Resolution.By != won[0] || rec.Resolution.Values["branch"] != won[0] {
			t.Fatalf("round %d: the question reads %+v, %v; want %s's answer", round, rec.Resolution, err, won[0])
		}
	}
}

// Many conversations written at once from two instances: each instance's observer gets
// every conversation's events once, in the order of their ids, and the log read after any
// of them (a stream's Last-Event-ID) misses none.
func TestDB_ConversationsWriteSideBySideInOrder(t *testing.T) {
	dbs := instances(t, 2)
	const convs, perConv = 12, 15
	type seen struct {
		mu  sync.Mutex
		evs map[int64][]int64
	}
	observers := make([]*seen, len(dbs))
	for i, db := range dbs {
		if i > 0 && db == dbs[0] {
			observers[i] = observers[0]
			continue
		}
		s := &seen{evs: map[int64][]int64{}}
		observers[i] = s
		db.Observe(func(evs []domain.Event) {
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, ev := range evs {
				s.evs[ev.ConversationID] = append(s.evs[ev.ConversationID], ev.ID)
			}
		})
	}
	ids := make([]int64, convs)
	for i := range ids {
		c, err := dbs[i%2].CreateConversation(ctx, 0, "tester", fmt.Sprint("c", i), "")
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.ID
	}
	// Every conversation gets writers on both instances, all at once.
	var wg sync.WaitGroup
	for _, id := range ids {
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perConv / 3 {
					if _, err := dbs[w%2].AppendEvent(ctx, domain.Event{ConversationID: id, Kind: domain.EventPlan, Plan: &domain.Plan{Title: "p"}}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, id := range ids {
		logged, err := dbs[0].Events(ctx, id, 0)
		if err != nil || len(logged) != perConv {
			t.Fatalf("conversation %d: %d events logged, %v; want %d", id, len(logged), err, perConv)
		}
		want := make([]int64, len(logged))
		for i, ev := range logged {
			want[i] = ev.ID
		}
		for i, ev := range logged {
			after, err := dbs[1].Events(ctx, id, ev.ID)
			if err != nil || len(after) != len(logged)-i-1 {
				t.Fatalf("conversation %d after event %d: %d events, %v; want %d", id, ev.ID, len(after), err, len(logged)-i-1)
			}
		}
		for i, s := range observers {
			deadline := time.Now().Add(10 * time.Second)
			for {
				s.mu.Lock()
				got := slices.Clone(s.evs[id])
				s.mu.Unlock()
				if slices.Equal(got, want) {
					break
				}
				if len(got) >= len(want) || time.Now().After(deadline) {
					t.Fatalf("instance %d observed conversation %d as %v; want %v", i, id, got, want)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
}

// While another session holds the lock of one conversation (as a long transaction would), a
// question of another conversation is answered at once; one of the locked conversation waits.
func TestDB_LockedConversationHoldsOnlyItself(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("SQLite has one writer: a long transaction holds every conversation, by design")
	}
	path := storetest.Path(t)
	db := storetest.Open(t, path)
	locked, lockedQ := startWaiting(t, db, textQuestion())
	_, freeQ := startWaiting(t, db, textQuestion())

	other, err := sql.Open("pgx", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	hold, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, `UPDATE conversations SET title = 'held' WHERE id = $1`, locked.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := hold.ExecContext(ctx, `SELECT id FROM questions WHERE conversation_id = $1 FOR UPDATE`, locked.ID); err != nil {
		t.Fatal(err)
	}

	within, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if resume, err := db.Resolve(within, domain.Resolution{QuestionID: freeQ[0], Outcome: domain.Answered, Values: map[string]any{"branch": "main"}, By: "you"}); err != nil || resume == 0 {
		t.Fatalf("the answer in the other conversation: %d, %v; want it stored within 2 s", resume, err)
	}
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	if _, err := db.Resolve(short, domain.Resolution{QuestionID: lockedQ[0], Outcome: domain.Answered, Values: map[string]any{"branch": "x"}, By: "you"}); err == nil {
		t.Fatal("an answer in the locked conversation went through while it was held")
	}
	hold.Rollback()
	if _, err := db.Resolve(ctx, domain.Resolution{QuestionID: lockedQ[0], Outcome: domain.Answered, Values: map[string]any{"branch": "x"}, By: "you"}); err != nil {
		t.Fatalf("the answer once the lock is let go: %v", err)
	}
}

// startedStep registers db as an instance and begins a step of a new conversation there.
func startedStep(t *testing.T, db *store.DB) (domain.Conversation, int64, domain.StepInput) {
	t.Helper()
	if _, err := db.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateConversation(ctx, 0, "tester", "t", "")
	if err != nil {
		t.Fatal(err)
	}
	step, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "hello", Author: "you"}))
	if err != nil {
		t.Fatal(err)
	}
	_, in, err := db.BeginStep(ctx, step)
	if err != nil {
		t.Fatal(err)
	}
	return c, step, in
}

// An instance whose lease ran out, and whose run another took over, has every write of its
// step refused: events, questions, drafts and its end; nothing it tries lands.
func TestDB_TakenOverStepIsFenced(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("one process holds a SQLite file: no other instance takes over")
	}
	path := storetest.Path(t)
	a, b := storetest.Open(t, path), storetest.Open(t, path)
	if _, err := b.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	c, step, in := startedStep(t, a)
	fenced := domain.WithStep(ctx, step)
	// While the step is A's, its writes land.
	if _, err := a.AppendEvent(fenced, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventPlan, Plan: &domain.Plan{Title: "mine"}}); err != nil {
		t.Fatalf("a write of A's own step: %v", err)
	}
	if err := a.SaveDrafts(ctx, []domain.Draft{{ConversationID: c.ID, RunID: in.RunID, MessageID: "m1", Author: "Bot", Text: "Hello"}}); err != nil {
		t.Fatal(err)
	}

	// A stops renewing; past its lease, B takes the run over.
	other, err := sql.Open("pgx", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, `UPDATE instances SET expires_at = now() - interval '1 second' WHERE id = $1`, a.Instance()); err != nil {
		t.Fatal(err)
	}
	took, err := b.TakeOver(ctx)
	if err != nil || !slices.Contains(took.Interrupted, c.ID) {
		t.Fatalf("B's takeover: %+v, %v; want conversation %d interrupted", took, err, c.ID)
	}
	before, err := b.Events(ctx, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}

	// A wakes up and goes on writing.
	_, err = a.AppendEvent(fenced, domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: "m1", Text: "Hello from a stale instance"})
	if !errors.Is(err, domain.ErrFenced) {
		t.Errorf("A's event after the takeover: %v; want it refused (ErrFenced)", err)
	}
	if _, err := a.AskQuestion(fenced, in.RunID, textQuestion()); !errors.Is(err, domain.ErrFenced) {
		t.Errorf("A's question after the takeover: %v; want it refused", err)
	}
	if err := a.SaveDrafts(ctx, []domain.Draft{{ConversationID: c.ID, RunID: in.RunID, MessageID: "m1", Author: "Bot", At: 5, Text: " world"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FinishStep(fenced, step, nil, nil); !errors.Is(err, domain.ErrFenced) {
		t.Errorf("A's end of the step after the takeover: %v; want it refused", err)
	}
	after, err := b.Events(ctx, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the log after A's tries: %d events, before them %d: something A wrote landed", len(after), len(before))
	}
	var batches int
	if err := other.QueryRowContext(ctx, `SELECT count(*) FROM draft_batches WHERE owner = $1`, a.Instance()).Scan(&batches); err != nil || batches != 0 {
		t.Errorf("A's draft batches after the takeover: %d, %v; want none", batches, err)
	}
	if got, _ := b.Conversation(ctx, c.ID); got.State != domain.StateInterrupted {
		t.Errorf("the conversation is %q; want interrupted, as B left it", got.State)
	}
}

// A step's write that waits for its conversation while another instance takes the run over
// (holding the lock as it interrupts the step) is refused once the takeover commits: the
// fence reads the step after the lock, not as it was when the write began.
func TestDB_FenceWaitsOutATakeover(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("one process holds a SQLite file: no other instance takes over")
	}
	path := storetest.Path(t)
	a := storetest.Open(t, path)
	c, step, in := startedStep(t, a)
	other, err := sql.Open("pgx", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	takeover, err := other.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer takeover.Rollback()
	if _, err := takeover.ExecContext(ctx, `SELECT id FROM conversations WHERE id = $1 FOR NO KEY UPDATE`, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := takeover.ExecContext(ctx, `UPDATE steps SET state = 'interrupted' WHERE id = $1`, step); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := a.AppendEvent(domain.WithStep(ctx, step), domain.Event{ConversationID: c.ID, RunID: in.RunID, Kind: domain.EventPlan, Plan: &domain.Plan{Title: "late"}})
		wrote <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var waiting int
		if err := other.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the step's write never waited for the conversation")
		}
	}
	if err := takeover.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; !errors.Is(err, domain.ErrFenced) {
		t.Fatalf("the write that waited out the takeover: %v; want it refused (ErrFenced)", err)
	}
}
