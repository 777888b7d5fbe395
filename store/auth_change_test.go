package store_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store/storetest"
)

// On SQLite a change of access is told before the write that notices it commits (so that no
// event after it reaches a stream first), and, when that write made the change itself, told
// again once it is committed: a stream that checks when told then reads the person's groups
// as they are now, not as they were.
func TestDB_OnAuthChange_ToldAfterItsOwnChangeCommits(t *testing.T) {
	if storetest.Postgres() {
		t.Skip("PostgreSQL tells changes of access from its listener, after they commit")
	}
	db := storetest.New(t)
	var ids []int64
	for _, name := range []string{"ann", "bob"} {
		u, err := db.CreateUser(ctx, name, "", domain.RoleUser)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	if _, err := db.AddToGroup(ctx, "ops", []string{"ann", "bob"}, domain.RoleMember, "staff"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen [][]string // bob's groups, as each telling of a change reads them
	db.OnAuthChange(func() {
		gs, err := db.MemberGroups(ctx, ids[1])
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		seen = append(seen, gs)
		mu.Unlock()
	})
	if err := db.RemoveFromGroup(ctx, "ops", []string{"bob"}, "staff"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the removal from a group was not told")
	}
	if last := seen[len(seen)-1]; slices.Contains(last, "ops") {
		t.Errorf("bob's groups when the change was last told = %v: a check then still finds him in ops", last)
	}
}
