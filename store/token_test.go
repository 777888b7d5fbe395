package store_test

import (
	"database/sql"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

func TestDB_CreateToken(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "parley.db")
		db := storetest.Open(t, path)
		ann, _ := db.CreateUser(ctx, "ann", "hash", "")
		secret, tok, err := db.CreateToken(ctx, ann.ID, "laptop")
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^parley_[A-Za-z0-9_-]{43}$`).MatchString(secret) {
			t.Errorf("secret = %q, want parley_ and 43 base64url characters", secret)
		}
		if tok.Name != "laptop" || tok.UserID != ann.ID || tok.ID == 0 || tok.Created.IsZero() || !tok.LastUsed.IsZero() {
			t.Errorf("token = %+v", tok)
		}
		u, got, err := db.TokenUser(ctx, secret)
		if err != nil || u.ID != ann.ID || u.Name != "ann" || got.ID != tok.ID || got.Via() != "token laptop" {
			t.Fatalf("TokenUser = %+v, %+v, %v; want ann's laptop", u, got, err)
		}
		list, err := db.Tokens(ctx, ann.ID)
		if err != nil || len(list) != 1 || list[0].Name != "laptop" {
			t.Fatalf("Tokens = %+v, %v", list, err)
		}

		// Only a hash is stored: the secret, or its random part, is nowhere in the row.
		raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		var id, userID int64
		var name, hash, created, used string
		if err := raw.QueryRow(`SELECT id, user_id, name, hash, created_at, last_used_at FROM api_tokens`).Scan(&id, &userID, &name, &hash, &created, &used); err != nil {
			t.Fatal(err)
		}
		random := strings.TrimPrefix(secret, store.TokenPrefix)
		for _, col := range []string{name, hash, created, used} {
			if strings.Contains(col, random) || strings.Contains(col, secret) {
				t.Errorf("the api_tokens row holds the secret: %q", col)
			}
		}
		if hash == "" {
			t.Error("no hash stored")
		}
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM audit_log WHERE action = 'create token'`).Scan(&n); err != nil || n != 1 {
			t.Errorf("audit entries for create token = %d, %v", n, err)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		db := storetest.New(t)
		ann, _ := db.CreateUser(ctx, "ann", "hash", "")
		bob, _ := db.CreateUser(ctx, "bob", "hash", "")
		if _, _, err := db.CreateToken(ctx, ann.ID, "laptop"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CreateToken(ctx, ann.ID, "laptop"); domain.ErrorCode(err) != domain.ECONFLICT {
			t.Errorf("ann's second laptop: got %v, want ECONFLICT", err)
		}
		bobs, _, err := db.CreateToken(ctx, bob.ID, "laptop")
		if err != nil {
			t.Fatalf("bob's laptop: %v; names are per person", err)
		}
		if u, _, err := db.TokenUser(ctx, bobs); err != nil || u.ID != bob.ID {
			t.Errorf("bob's laptop acts as %+v, %v", u, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := storetest.New(t)
		ann, _ := db.CreateUser(ctx, "ann", "hash", "")
		for _, name := range []string{"", "   ", " laptop", "laptop ", "lap\ttop", "lap\ntop", "x\x7f", "lap\u202Epot", "x\u2066y", strings.Repeat("é", 61)} {
			if _, _, err := db.CreateToken(ctx, ann.ID, name); domain.ErrorCode(err) != domain.EINVALID {
				t.Errorf("name %q: got %v, want EINVALID", name, err)
			}
		}
		for _, name := range []string{"ci-nightly", "Ann’s laptop", strings.Repeat("é", 60)} {
			if err := store.CheckTokenName(name); err != nil {
				t.Errorf("name %q: %v, want it allowed", name, err)
			}
		}
		if _, _, err := db.CreateToken(ctx, 999, "laptop"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Errorf("unknown user: got %v, want ENOTFOUND", err)
		}
	})
	t.Run("ServiceAccountRefused", func(t *testing.T) {
		db := storetest.New(t)
		svc, _ := db.EnsureUser(ctx, "a2a", domain.RoleService)
		if _, _, err := db.CreateToken(ctx, svc.ID, "laptop"); domain.ErrorCode(err) != domain.EINVALID {
			t.Errorf("service account: got %v, want EINVALID", err)
		}
		if list, _ := db.Tokens(ctx, svc.ID); len(list) != 0 {
			t.Errorf("service account has tokens: %+v", list)
		}
	})
}

func TestDB_RevokeToken(t *testing.T) {
	db := storetest.New(t)
	ann, _ := db.CreateUser(ctx, "ann", "hash", "")
	bob, _ := db.CreateUser(ctx, "bob", "hash", "")
	anns, annTok, _ := db.CreateToken(ctx, ann.ID, "laptop")
	bobs, _, _ := db.CreateToken(ctx, bob.ID, "laptop")

	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := db.RevokeToken(ctx, ann.ID, "desktop"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Errorf("unknown name: got %v, want ENOTFOUND", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		got, err := db.RevokeToken(ctx, ann.ID, "laptop")
		if err != nil || got.ID != annTok.ID || got.Name != "laptop" {
			t.Fatalf("RevokeToken = %+v, %v", got, err)
		}
		if _, _, err := db.TokenUser(ctx, anns); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Errorf("revoked token: got %v, want EUNAUTHORIZED", err)
		}
		if u, _, err := db.TokenUser(ctx, bobs); err != nil || u.ID != bob.ID {
			t.Errorf("bob's laptop after ann revoked hers: %+v, %v", u, err)
		}
		if list, _ := db.Tokens(ctx, ann.ID); len(list) != 0 {
			t.Errorf("ann's tokens after revoking = %+v", list)
		}
		if _, err := db.RevokeToken(ctx, ann.ID, "laptop"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Errorf("revoking twice: got %v, want ENOTFOUND", err)
		}
		log, _ := db.AuditLog(ctx, 0, 10)
		if len(log) == 0 || log[0].Action != "revoke token" || log[0].Actor != "ann" || log[0].Detail != "laptop" {
			t.Errorf("audit log = %+v", log)
		}
	})
}

func TestDB_TokenUser(t *testing.T) {
	db := storetest.New(t)
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	ann, _ := db.CreateUser(ctx, "ann", "hash", "")
	secret, _, _ := db.CreateToken(ctx, ann.ID, "laptop")
	lastUsed := func() time.Time {
		t.Helper()
		list, err := db.Tokens(ctx, ann.ID)
		if err != nil || len(list) != 1 {
			t.Fatalf("Tokens = %+v, %v", list, err)
		}
		return list[0].LastUsed
	}

	t.Run("LastUsedAtMostOnceAMinute", func(t *testing.T) {
		if !lastUsed().IsZero() {
			t.Fatal("a new token has been used")
		}
		start := now
		if _, tok, err := db.TokenUser(ctx, secret); err != nil || !tok.LastUsed.Equal(start) {
			t.Fatalf("first use: %+v, %v", tok, err)
		}
		if got := lastUsed(); !got.Equal(start) {
			t.Fatalf("last used = %v, want %v", got, start)
		}
		now = now.Add(59 * time.Second)
		db.TokenUser(ctx, secret)
		if got := lastUsed(); !got.Equal(start) {
			t.Errorf("59 s later last used = %v, want it unwritten (%v)", got, start)
		}
		now = now.Add(time.Second)
		db.TokenUser(ctx, secret)
		if got := lastUsed(); !got.Equal(now) {
			t.Errorf("a minute later last used = %v, want %v", got, now)
		}
		now = now.Add(time.Hour)
		db.TokenUser(store.Peek(ctx), secret)
		if got := lastUsed(); got.Equal(now) {
			t.Error("a peek wrote the last-used time")
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		for _, s := range []string{"", "laptop", secret[:len(secret)-1], store.TokenPrefix + "x", strings.TrimPrefix(secret, store.TokenPrefix)} {
			if _, _, err := db.TokenUser(ctx, s); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
				t.Errorf("TokenUser(%q): got %v, want EUNAUTHORIZED", s, err)
			}
		}
	})
}
