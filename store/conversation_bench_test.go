package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// runCorpus fills a database with conversations of 20 people, each with two runs (the
// second failed in every seventh, still waiting in every eleventh), every fifth regenerated
// once: the lists read each conversation's state.
func runCorpus(b *testing.B, conversations int) *store.DB {
	b.Helper()
	db := storetest.New(b)
	var users []int64
	for i := range 20 {
		u, err := db.CreateUser(ctx, fmt.Sprint("u", i), "h", "")
		if err != nil {
			b.Fatal(err)
		}
		users = append(users, u.ID)
	}
	run := func(step int64, err error, end error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := db.BeginStep(ctx, step); err != nil {
			b.Fatal(err)
		}
		if _, err := db.FinishStep(ctx, step, nil, end); err != nil {
			b.Fatal(err)
		}
	}
	for i := range conversations {
		c, err := db.CreateConversation(ctx, users[i%len(users)], "x", fmt.Sprint("conversation ", i), "")
		if err != nil {
			b.Fatal(err)
		}
		step, err := stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "first"}))
		run(step, err, nil)
		var end error
		if i%7 == 0 {
			end = errors.New("broken")
		}
		step, err = stepOf(db.StartRun(ctx, c.ID, domain.Message{Text: "second"}))
		if i%11 == 0 {
			if err != nil {
				b.Fatal(err)
			}
			continue // queued, never begun: the run stays running
		}
		run(step, err, end)
		if i%5 == 0 {
			step, _, err := db.Regenerate(ctx, c.ID, "u", "")
			run(step, err, nil)
		}
	}
	return db
}

// BenchmarkConversationLists measures the lists that read conversations' states: a
// person's sidebar, the review desk filtered by a state, and the metrics' counts by state.
func BenchmarkConversationLists(b *testing.B) {
	db := runCorpus(b, 3000)
	b.Run("Sidebar", func(b *testing.B) {
		for b.Loop() {
			list, _, err := db.ListConversations(ctx, domain.ConversationFilter{UserID: 3, Archived: domain.ArchivedNot, Limit: 50})
			if err != nil || len(list) == 0 {
				b.Fatalf("%d, %v", len(list), err)
			}
		}
	})
	b.Run("ReviewFailed", func(b *testing.B) {
		for b.Loop() {
			list, _, err := db.ListConversations(ctx, domain.ConversationFilter{State: domain.StateFailed, Limit: 50})
			if err != nil || len(list) == 0 {
				b.Fatalf("%d, %v", len(list), err)
			}
		}
	})
	b.Run("RunStateCounts", func(b *testing.B) {
		for b.Loop() {
			counts, err := db.RunStateCounts(ctx)
			if err != nil || counts[domain.StateFailed] == 0 {
				b.Fatalf("%v, %v", counts, err)
			}
		}
	})
}
