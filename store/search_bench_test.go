package store_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

// searchCorpus fills a database with conversations of realistic messages: common English
// words in every one, a rare word in a few.
func searchCorpus(b *testing.B, conversations, perConversation int) *store.DB {
	b.Helper()
	db := storetest.New(b)
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	// Bob has one conversation, among the oldest: a filter on him keeps few matches (found
	// still, however many newer texts of other people hold the word).
	bob, _ := db.CreateUser(ctx, "bob", "h", "")
	bc, _ := db.CreateConversation(ctx, bob.ID, "x", "bob's", "")
	if _, err := db.StartRun(ctx, bc.ID, domain.Message{Text: "the budget of the team"}); err != nil {
		b.Fatal(err)
	}
	words := strings.Fields("the a to of and in is it you that for on with as was the the budget venue party team order log error server plan guests date time")
	r := rand.New(rand.NewSource(1))
	for c := range conversations {
		conv, _ := db.CreateConversation(ctx, ann.ID, "x", fmt.Sprint("conversation ", c), "")
		step, err := stepOf(db.StartRun(ctx, conv.ID, domain.Message{Text: "the first message of the conversation"}))
		if err != nil {
			b.Fatal(err)
		}
		_, in, _ := db.BeginStep(ctx, step)
		for i := range perConversation {
			var sb strings.Builder
			for range 40 {
				sb.WriteString(words[r.Intn(len(words))] + " ")
			}
			if r.Intn(500) == 0 {
				sb.WriteString("kirkwood")
			}
			if _, err := db.AppendEvent(ctx, domain.Event{ConversationID: conv.ID, RunID: in.RunID, Kind: domain.EventAgentMessage, MessageID: fmt.Sprintf("%d-%d", step, i), Text: sb.String()}); err != nil {
				b.Fatal(err)
			}
		}
		db.FinishStep(ctx, step, nil, nil)
	}
	return db
}

// BenchmarkSearch measures a search over 50,000 texts: a word in nearly all of them ("the",
// which falls back to newest-first), a rare one (ranked), and both with a person's filter.
func BenchmarkSearch(b *testing.B) {
	db := searchCorpus(b, 2000, 25)
	for _, bc := range []struct {
		name, q string
		f       domain.ConversationFilter
	}{
		{"CommonWord", "the", domain.ConversationFilter{}},
		{"TwoCommonWords", "the budget", domain.ConversationFilter{}},
		{"RareWord", "kirkwood", domain.ConversationFilter{}},
		{"CommonWordOnePerson", "the", domain.ConversationFilter{UserID: 1, State: domain.StateDone}},
		{"CommonWordFewMatchesOfAPerson", "the", domain.ConversationFilter{UserID: 2}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				hits, _, err := db.Search(ctx, bc.q, bc.f)
				if err != nil || len(hits) == 0 {
					b.Fatalf("%d hits, %v", len(hits), err)
				}
			}
		})
	}
}
