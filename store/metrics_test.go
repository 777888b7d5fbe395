package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

func TestDB_ObserveWrites(t *testing.T) {
	db := storetest.New(t)
	type write struct {
		took time.Duration
		err  error
	}
	var mu sync.Mutex
	var got []write
	db.ObserveWrites(func(took time.Duration, err error) {
		mu.Lock()
		got = append(got, write{took, err})
		mu.Unlock()
	})
	if _, err := db.CreateConversation(ctx, 0, "tester", "t", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: 77, Kind: domain.EventPlan, Plan: &domain.Plan{}}); err == nil {
		t.Fatal("AppendEvent to a missing conversation succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("observed %d writes, want 2: %+v", len(got), got)
	}
	if got[0].err != nil || got[0].took <= 0 {
		t.Errorf("the conversation's write = %+v, want a duration and no error", got[0])
	}
	if got[1].err == nil {
		t.Errorf("the failed write = %+v, want its error", got[1])
	}
}

func TestDB_RunStateCounts(t *testing.T) {
	db := storetest.New(t)
	startWaiting(t, db, textQuestion())
	startWaiting(t, db, textQuestion())
	if _, err := db.CreateConversation(ctx, 0, "tester", "no run yet", ""); err != nil {
		t.Fatal(err)
	}
	got, err := db.RunStateCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[domain.StateWaiting] != 2 {
		t.Errorf("RunStateCounts = %v, want 2 waiting alone", got)
	}
}

func TestDB_ResolvedSince(t *testing.T) {
	db := storetest.New(t)
	asked := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	now := asked
	db.Now = func() time.Time { return now }
	from, err := db.NewestEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, ids := startWaiting(t, db, textQuestion(), textQuestion())
	if facts, next, err := db.ResolvedSince(ctx, from); err != nil || len(facts) != 0 || next <= from {
		t.Fatalf("ResolvedSince before any answer = %+v, %d, %v; want none, and a later cursor", facts, next, err)
	}
	now = asked.Add(90 * time.Second)
	if _, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[0], Outcome: domain.Answered, Values: map[string]any{"branch": "main"}, By: "you"}); err != nil {
		t.Fatal(err)
	}
	facts, next, err := db.ResolvedSince(ctx, from)
	if err != nil || len(facts) != 1 {
		t.Fatalf("ResolvedSince = %+v, %v; want the one answer", facts, err)
	}
	if f := facts[0]; f.Agent != "tester" || f.Outcome != domain.Answered || f.ResolvedAt.Sub(f.AskedAt) != 90*time.Second {
		t.Errorf("fact = %+v, want tester's answer after 90s", f)
	}
	// From the cursor on: what came after, once.
	if facts, _, err := db.ResolvedSince(ctx, next); err != nil || len(facts) != 0 {
		t.Errorf("ResolvedSince(next) = %+v, %v; want nothing new", facts, err)
	}
	if _, err := db.Resolve(ctx, domain.Resolution{QuestionID: ids[1], Outcome: domain.Declined, By: "you"}); err != nil {
		t.Fatal(err)
	}
	if facts, _, err := db.ResolvedSince(ctx, next); err != nil || len(facts) != 1 || facts[0].Outcome != domain.Declined {
		t.Errorf("ResolvedSince(next) = %+v, %v; want the decline alone", facts, err)
	}
}
