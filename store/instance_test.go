package store_test

import (
	"context"
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
}

// WrittenElsewhere gives another instance the message a step of A is writing, whole, while it
// is being written: not to A, not for another conversation, not once it is finished (though
// the batch holding it stays for another conversation's message), not once the step ended.
func TestDB_WrittenElsewhere(t *testing.T) {
	url := storetest.Schema(t)
	a, b := storetest.Open(t, url), storetest.Open(t, url)
	ctx := t.Context()
	begin := func(text string) (domain.Conversation, int64, int64) {
		t.Helper()
		c, err := a.CreateConversation(ctx, 0, "tester", text, "")
		if err != nil {
			t.Fatal(err)
		}
		step, err := stepOf(a.StartRun(ctx, c.ID, domain.Message{Text: text, Author: "ann"}))
		if err != nil {
			t.Fatal(err)
		}
		_, in, err := a.BeginStep(ctx, step)
		if err != nil {
			t.Fatal(err)
		}
		return c, step, in.RunID
	}
	c, step, run := begin("one")
	other, _, otherRun := begin("two")
	for _, batch := range [][]domain.Draft{
		{{ConversationID: c.ID, RunID: run, MessageID: "1-1", Author: "Bot", Text: "Hello "}, {ConversationID: other.ID, RunID: otherRun, MessageID: "2-1", Author: "Bot", Text: "Other"}},
		{{ConversationID: c.ID, RunID: run, MessageID: "1-1", Author: "Bot", At: 6, Text: "world"}},
	} {
		if err := a.SaveDrafts(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	nothing := func(who string, db interface {
		WrittenElsewhere(context.Context, int64) (domain.Draft, bool, error)
	}, conv int64) {
		t.Helper()
		if got, ok, err := db.WrittenElsewhere(ctx, conv); err != nil || ok {
			t.Errorf("%s: WrittenElsewhere(%d) = %+v, %v, %v; want nothing", who, conv, got, ok, err)
		}
	}
	if got, ok, err := b.WrittenElsewhere(ctx, c.ID); err != nil || !ok || got.Text != "Hello world" || got.MessageID != "1-1" || got.RunID != run {
		t.Errorf("B: WrittenElsewhere = %+v, %v, %v; want A's message 1-1 whole", got, ok, err)
	}
	nothing("A, which writes it", a, c.ID)
	nothing("B, a conversation with none", b, other.ID+1)

	// The message is finished, its step goes on: the other conversation's text keeps the first
	// batch, and with it the start of this message, which is not being written any more.
	if _, err := a.AppendEvent(ctx, domain.Event{ConversationID: c.ID, RunID: run, Kind: domain.EventAgentMessage, MessageID: "1-1", Author: "Bot", Text: "Hello world"}); err != nil {
		t.Fatal(err)
	}
	nothing("B, once the message is finished", b, c.ID)
	if got, ok, err := b.WrittenElsewhere(ctx, other.ID); err != nil || !ok || got.Text != "Other" {
		t.Errorf("B: the other conversation's message = %+v, %v, %v", got, ok, err)
	}
	if _, err := a.FinishStep(ctx, step, nil, nil); err != nil {
		t.Fatal(err)
	}
	nothing("B, once the step ended", b, c.ID)
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
