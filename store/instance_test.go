package store_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

// Two instances on one PostgreSQL database hear each other: the events either commits reach
// both observers in commit order, and the drafts one saves reach the other's remote observer.
func TestDB_InstancesHearEachOther(t *testing.T) {
	url := storetest.Schema(t)
	a, b := storetest.Open(t, url), storetest.Open(t, url)
	var mu sync.Mutex
	var seenA, seenB []int64
	var drafts []domain.Draft
	a.Observe(func(evs []domain.Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			seenA = append(seenA, ev.ID)
		}
	})
	b.Observe(func(evs []domain.Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			seenB = append(seenB, ev.ID)
		}
	})
	b.ObserveRemote(domain.Remote{Drafts: func(d []domain.Draft) {
		mu.Lock()
		defer mu.Unlock()
		drafts = append(drafts, d...)
	}})
	c, _ := a.CreateConversation(ctx, 0, "tester", "t", "")
	var want []int64
	for i := range 10 {
		db := a
		if i%2 == 1 {
			db = b
		}
		ev, err := db.AppendEvent(ctx, domain.Event{ConversationID: c.ID, Kind: domain.EventPlan, Plan: &domain.Plan{Title: "p"}})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ev.ID)
	}
	if err := a.SaveDrafts(ctx, []domain.Draft{{ConversationID: c.ID, MessageID: "1-1", Author: "Bot", Text: "Hello "}}); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveDrafts(ctx, []domain.Draft{{ConversationID: c.ID, MessageID: "1-1", Author: "Bot", At: 6, Text: "world"}}); err != nil {
		t.Fatal(err)
	}
	done := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seenA) >= len(want) && len(seenB) >= len(want) && len(drafts) >= 2
	}
	for deadline := time.Now().Add(10 * time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seenA, want) || !slices.Equal(seenB, want) {
		t.Errorf("A observed %v, B %v; want both %v", seenA, seenB, want)
	}
	var text strings.Builder
	for _, d := range drafts {
		text.WriteString(d.Text)
	}
	if text.String() != "Hello world" {
		t.Errorf("B heard drafts %+v", drafts)
	}
	if got, ok, err := b.WrittenElsewhere(ctx, c.ID); err != nil || !ok || got.Text != "Hello world" || got.MessageID != "1-1" {
		t.Errorf("B: WrittenElsewhere = %+v, %v, %v; want A's message 1-1 whole", got, ok, err)
	}
	if got, ok, err := a.WrittenElsewhere(ctx, c.ID); err != nil || ok {
		t.Errorf("A: WrittenElsewhere = %+v, %v, %v; want nothing (A writes it)", got, ok, err)
	}
	if got, ok, err := b.WrittenElsewhere(ctx, c.ID+1); err != nil || ok {
		t.Errorf("B: WrittenElsewhere of another conversation = %+v, %v, %v; want nothing", got, ok, err)
	}
}

// A conversation renamed, archived or deleted on one instance is heard of, with its owner,
// on the others: their sidebars follow.
func TestDB_InstancesHearConversationsChange(t *testing.T) {
	url := storetest.Schema(t)
	a, b := storetest.Open(t, url), storetest.Open(t, url)
	var mu sync.Mutex
	var heard []string
	b.ObserveRemote(domain.Remote{
		Changed: func(conv, account int64) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, fmt.Sprintf("changed %d of %d", conv, account))
		},
		Gone: func(conv, account int64) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, fmt.Sprintf("gone %d of %d", conv, account))
		},
	})
	u, err := a.CreateUser(ctx, "ann", "h", "")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := a.CreateConversation(ctx, u.ID, "tester", "t", "")
	if err := a.RenameConversation(ctx, c.ID, "Plans"); err != nil {
		t.Fatal(err)
	}
	if err := a.ArchiveConversation(ctx, c.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteConversation(ctx, c.ID, "ann"); err != nil {
		t.Fatal(err)
	}
	want := []string{fmt.Sprintf("changed %d of %d", c.ID, u.ID), fmt.Sprintf("changed %d of %d", c.ID, u.ID), fmt.Sprintf("gone %d of %d", c.ID, u.ID)}
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(heard)
	}
	for deadline := time.Now().Add(10 * time.Second); len(got()) < len(want) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(got(), want) {
		t.Errorf("B heard %v, want %v", got(), want)
	}
}
