package store_test

import (
	"fmt"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

// BenchmarkWaiting counts one person's questions waiting (every page's Inbox badge) among
// 4000 waiting for 200 people, a fifth of them for a group of ten: the cost is the
// person's own questions and their groups', not every question waiting.
func BenchmarkWaiting(b *testing.B) {
	db := storetest.New(b)
	var users []int64
	var names []string
	for i := range 200 {
		u, err := db.CreateUser(ctx, fmt.Sprintf("u%d", i), "", domain.RoleUser)
		if err != nil {
			b.Fatal(err)
		}
		users, names = append(users, u.ID), append(names, u.Name)
	}
	g, err := db.AddToGroup(ctx, "ops", names[:10], domain.RoleMember, "operator")
	if err != nil {
		b.Fatal(err)
	}
	for i := range 4000 {
		uid := users[i%len(users)]
		c, err := db.CreateInboundConversation(ctx, uid, "Questions", fmt.Sprint("n", i))
		if err != nil {
			b.Fatal(err)
		}
		req := domain.InboundRequest{UserID: uid, Question: domain.Question{Message: "q", Asker: "a", Fields: []domain.Field{{Name: "a", Kind: domain.KindText}}}}
		if i%5 == 0 {
			req.ToGroup, req.Question.To = g.ID, g.Name
		}
		if _, _, err := db.AskInbound(ctx, c.ID, req); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; b.Loop(); i++ {
		if _, _, err := db.Waiting(ctx, users[i%20]); err != nil {
			b.Fatal(err)
		}
	}
}
