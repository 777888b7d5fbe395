package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

func TestDB_CreateUser(t *testing.T) {
	t.Run("FirstPersonIsStaffAndAdoptsOldConversations", func(t *testing.T) {
		db := storetest.New(t)
		old, _ := db.CreateConversation(ctx, 0, "x", "from before accounts", "")
		svc, err := db.EnsureUser(ctx, "a2a", domain.RoleService)
		if err != nil || svc.Role != domain.RoleService {
			t.Fatalf("service account = %+v, %v", svc, err)
		}
		ann, err := db.CreateUser(ctx, "ann", "hash", "")
		if err != nil || ann.Role != domain.RoleStaff {
			t.Fatalf("first person = %+v, %v; want staff", ann, err)
		}
		bob, err := db.CreateUser(ctx, "bob", "hash", "")
		if err != nil || bob.Role != domain.RoleUser {
			t.Fatalf("second person = %+v, %v; want user", bob, err)
		}
		c, _ := db.Conversation(ctx, old.ID)
		if c.UserID != ann.ID || c.Owner != "ann" {
			t.Errorf("old conversation belongs to %d %q, want ann", c.UserID, c.Owner)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		db := storetest.New(t)
		db.CreateUser(ctx, "Ann", "hash", "")
		if _, err := db.CreateUser(ctx, "ann", "hash", ""); domain.ErrorCode(err) != domain.ECONFLICT {
			t.Fatalf("got %v, want ECONFLICT for a name taken in another case", err)
		}
	})
	t.Run("ErrConflictLookAlike", func(t *testing.T) {
		db := storetest.New(t)
		if _, err := db.CreateUser(ctx, "root", "hash", ""); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"rооt", "ｒｏｏｔ", "R00T"} { // Cyrillic о; full width; zeros
			_, err := db.CreateUser(ctx, name, "hash", "")
			if want := fmt.Sprintf("The user name %q looks too much like \"root\", which is taken: choose another.", name); domain.ErrorCode(err) != domain.ECONFLICT || domain.ErrorMessage(err) != want {
				t.Errorf("name %q: got %v, want ECONFLICT %q", name, err, want)
			}
		}
		if _, err := db.CreateUser(ctx, "ROOT", "hash", ""); domain.ErrorMessage(err) != `The user name "ROOT" is taken.` {
			t.Errorf("ROOT: got %v", err)
		}
		// A person cannot take a look-alike of Parley's own account either.
		if _, err := db.CreateUser(ctx, "а2а", "hash", ""); domain.ErrorCode(err) != domain.EINVALID {
			t.Errorf("Cyrillic a2a: got %v, want EINVALID", err)
		}
		if _, err := db.CreateUser(ctx, "rob", "hash", ""); err != nil {
			t.Errorf("a name unlike any other: %v", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := storetest.New(t)
		for _, name := range []string{"", "a b", "<script>", string(make([]byte, 65))} {
			if _, err := db.CreateUser(ctx, name, "hash", ""); domain.ErrorCode(err) != domain.EINVALID {
				t.Errorf("name %q: got %v, want EINVALID", name, err)
			}
		}
	})
}

func TestDB_SetRoleAndPassword(t *testing.T) {
	db := storetest.New(t)
	db.CreateUser(ctx, "ann", "h1", "")
	bob, _ := db.CreateUser(ctx, "bob", "h1", "")
	lim := store.SessionLimits{Idle: time.Hour, Max: time.Hour}
	token, _ := db.CreateSession(ctx, bob.ID, lim)
	if u, err := db.SetRole(ctx, "BOB", domain.RoleStaff, "cli"); err != nil || u.Role != domain.RoleStaff {
		t.Fatalf("SetRole = %+v, %v", u, err)
	}
	if _, err := db.SetPassword(ctx, "bob", "h2", "cli"); err != nil {
		t.Fatal(err)
	}
	if _, hash, _ := db.UserByName(ctx, "bob"); hash != "h2" {
		t.Errorf("hash = %q, want h2", hash)
	}
	if _, err := db.Session(ctx, token, lim); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		t.Errorf("session after a password reset: %v, want it ended", err)
	}
	log, _ := db.AuditLog(ctx, 0, 10)
	if len(log) != 2 || log[0].Action != "reset-password" || log[1].Action != "set-role" || log[1].Detail != "bob is now staff" {
		t.Errorf("audit log = %+v", log)
	}
	if _, err := db.SetRole(ctx, "nobody", domain.RoleStaff, "cli"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("unknown user: %v", err)
	}
}

func TestDB_Session(t *testing.T) {
	db := storetest.New(t)
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	lim := store.SessionLimits{Idle: 30 * time.Minute, Max: 12 * time.Hour}

	t.Run("IdleExpiry", func(t *testing.T) {
		token, _ := db.CreateSession(ctx, ann.ID, lim)
		now = now.Add(29 * time.Minute)
		if u, err := db.Session(ctx, token, lim); err != nil || u.ID != ann.ID {
			t.Fatalf("after 29 min: %+v, %v", u, err)
		}
		// The request above kept it alive: 29 more minutes are fine, 31 are not.
		now = now.Add(29 * time.Minute)
		if _, err := db.Session(ctx, token, lim); err != nil {
			t.Fatalf("29 min after the last request: %v", err)
		}
		now = now.Add(31 * time.Minute)
		if _, err := db.Session(ctx, token, lim); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Fatalf("31 min idle: %v, want EUNAUTHORIZED", err)
		}
	})
	t.Run("AnOpenPageIsNotActivity", func(t *testing.T) {
		token, _ := db.CreateSession(ctx, ann.ID, lim)
		now = now.Add(20 * time.Minute)
		if _, err := db.Session(store.Peek(ctx), token, lim); err != nil {
			t.Fatalf("a peek 20 min in: %v", err)
		}
		now = now.Add(20 * time.Minute) // 40 min after the last request
		if _, err := db.Session(store.Peek(ctx), token, lim); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Fatalf("peeks kept the session alive: %v", err)
		}
	})
	t.Run("AbsoluteExpiry", func(t *testing.T) {
		token, _ := db.CreateSession(ctx, ann.ID, lim)
		for range 24 {
			now = now.Add(29 * time.Minute)
			if _, err := db.Session(ctx, token, lim); err != nil {
				t.Fatalf("active session ended early: %v", err)
			}
		}
		now = now.Add(29 * time.Minute) // 12 h 5 min after it began
		if _, err := db.Session(ctx, token, lim); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Fatalf("past 12 h: %v, want EUNAUTHORIZED", err)
		}
	})
	t.Run("Logout", func(t *testing.T) {
		token, _ := db.CreateSession(ctx, ann.ID, lim)
		db.DeleteSession(ctx, token)
		if _, err := db.Session(ctx, token, lim); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Fatalf("after logout: %v", err)
		}
		if _, err := db.Session(ctx, "made-up", lim); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Fatalf("unknown token: %v", err)
		}
	})
}

func TestDB_CreateConversation_NonceIsPerPerson(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "h", "")
	bob, _ := db.CreateUser(ctx, "bob", "h", "")
	a, _ := db.CreateConversation(ctx, ann.ID, "x", "ann's", "n-1")
	again, _ := db.CreateConversation(ctx, ann.ID, "x", "ann's again", "n-1")
	if again.ID != a.ID {
		t.Fatalf("ann's double submit made conversation %d, want %d", again.ID, a.ID)
	}
	b, err := db.CreateConversation(ctx, bob.ID, "x", "bob's", "n-1")
	if err != nil || b.ID == a.ID || b.UserID != bob.ID {
		t.Fatalf("bob naming ann's nonce got %+v, %v; want a conversation of his own", b, err)
	}
}
