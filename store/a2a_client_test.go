package store_test

import (
	"database/sql"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/store/storetest"
)

const cli = "parley a2a-client (command line)"

// auditActions are the audit log's entries as "actor: action detail", oldest first.
func auditActions(t *testing.T, db *store.DB) []string {
	t.Helper()
	entries, err := db.AuditLog(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		out = append(out, e.Actor+": "+e.Action+" "+e.Detail)
	}
	return out
}

func TestDB_CreateA2AClient(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "parley.db")
		db := storetest.Open(t, path)
		secret, c, err := db.CreateA2AClient(ctx, "ci-nightly", cli)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^parley_a2a_[A-Za-z0-9_-]{43}$`).MatchString(secret) {
			t.Errorf("secret = %q, want parley_a2a_ and 43 base64url characters", secret)
		}
		got, err := db.A2AClientByToken(ctx, secret)
		if err != nil || got.ID != c.ID || got.Name != "ci-nightly" || got.Via() != "a2a client ci-nightly" || got.LastUsed.IsZero() {
			t.Fatalf("A2AClientByToken = %+v, %v; want ci-nightly, used now", got, err)
		}
		if _, err := db.A2AClientByToken(ctx, secret+"x"); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Errorf("a mistyped token: got %v, want EUNAUTHORIZED", err)
		}

		// Only a hash is stored: the secret, or its random part, is nowhere in the row.
		raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		var name, hash, created, used, revoked string
		if err := raw.QueryRow(`SELECT name, hash, created_at, last_used_at, revoked_at FROM a2a_clients`).Scan(&name, &hash, &created, &used, &revoked); err != nil {
			t.Fatal(err)
		}
		random := strings.TrimPrefix(secret, store.A2AClientPrefix)
		for _, col := range []string{name, hash, created, used, revoked} {
			if strings.Contains(col, random) {
				t.Errorf("the a2a_clients row holds the secret: %q", col)
			}
		}
		if len(hash) != 64 {
			t.Errorf("hash = %q, want a sha256 in hex", hash)
		}
		if got := auditActions(t, db); len(got) != 1 || got[0] != cli+": add a2a client ci-nightly" {
			t.Errorf("audit = %q", got)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		db := storetest.New(t)
		if _, _, err := db.CreateA2AClient(ctx, "ci", cli); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.CreateA2AClient(ctx, "ci", cli); domain.ErrorCode(err) != domain.ECONFLICT {
			t.Errorf("a second ci: got %v, want ECONFLICT", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := storetest.New(t)
		for name, want := range map[string]string{
			"":                      "Give the token a name",
			" ci":                   "no spaces at either end",
			domain.LegacyA2AClient:  "PARLEY_A2A_TOKEN",
			strings.Repeat("x", 61): "at most 60",
		} {
			if _, _, err := db.CreateA2AClient(ctx, name, cli); domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), want) {
				t.Errorf("name %q: got %v, want EINVALID saying %q", name, err, want)
			}
		}
	})
}

func TestDB_RevokeA2AClient(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		db := storetest.New(t)
		old, ci, _ := db.CreateA2AClient(ctx, "ci", cli)
		conv, _ := db.CreateConversation(ctx, 0, "asker", "Plan", "n1")
		if err := db.LinkA2ATask(ctx, "t1", "c1", "asker", ci, conv.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.RevokeA2AClient(ctx, "ci", cli); err != nil {
			t.Fatal(err)
		}
		_, err := db.A2AClientByToken(ctx, old)
		if domain.ErrorCode(err) != domain.EUNAUTHORIZED || !strings.Contains(domain.ErrorMessage(err), `"ci" was revoked`) {
			t.Errorf("the revoked token: got %v, want EUNAUTHORIZED saying it was revoked", err)
		}
		list, _ := db.A2AClients(ctx)
		if len(list) != 1 || list[0].Revoked.IsZero() {
			t.Errorf("A2AClients = %+v, want ci, revoked", list)
		}

		// The name is free again, for a new client that does not inherit the old one's tasks.
		fresh, ci2, err := db.CreateA2AClient(ctx, "ci", cli)
		if err != nil {
			t.Fatal(err)
		}
		if c, err := db.A2AClientByToken(ctx, fresh); err != nil || c.ID != ci2.ID || c.ID == ci.ID {
			t.Errorf("the new ci = %+v, %v", c, err)
		}
		if _, err := db.A2ATask(ctx, "asker", ci2.ID, "t1"); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Errorf("the new ci finds the old one's task: %v", err)
		}
		if got := auditActions(t, db); strings.Join(got, "\n") != strings.Join([]string{
			cli + ": add a2a client ci", "a2a client ci: create a2a task task t1 of asker", cli + ": revoke a2a client ci", cli + ": add a2a client ci"}, "\n") {
			t.Errorf("audit =\n%s", strings.Join(got, "\n"))
		}
	})
	// The open streams of a client revoked by `parley a2a-client revoke`, in another process,
	// end because the revoke moves the count of auth changes, which the server watches; the
	// client's use of its token does not.
	t.Run("MovesAuthChanges", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "parley.db")
		db := storetest.Open(t, path)
		cliDB, err := store.OpenWith(ctx, path, store.Options{Holder: "parley a2a-client revoke", Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		defer cliDB.Close()
		secret, ci, _ := db.CreateA2AClient(ctx, "ci", cli)
		before, err := db.AuthChanges(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.A2AClientByToken(ctx, secret); err != nil {
			t.Fatal(err)
		}
		if n, _ := db.AuthChanges(ctx); n != before {
			t.Errorf("using the token moved auth changes from %d to %d", before, n)
		}
		if _, err := cliDB.RevokeA2AClient(ctx, "ci", cli); err != nil {
			t.Fatal(err)
		}
		if n, _ := db.AuthChanges(ctx); n == before {
			t.Errorf("the revoke left auth changes at %d, want it moved", n)
		}
		if c, err := db.A2AClient(ctx, ci.ID); err != nil || c.Revoked.IsZero() {
			t.Errorf("A2AClient(%d) = %+v, %v; want ci, revoked", ci.ID, c, err)
		}
		if _, err := db.A2AClient(ctx, ci.ID+1); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Errorf("an unknown client: got %v, want ENOTFOUND", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		db := storetest.New(t)
		if _, err := db.RevokeA2AClient(ctx, "nobody", cli); domain.ErrorCode(err) != domain.ENOTFOUND {
			t.Errorf("got %v, want ENOTFOUND", err)
		}
	})
}

func TestDB_A2ATask_OfItsClient(t *testing.T) {
	db := storetest.New(t)
	_, alpha, _ := db.CreateA2AClient(ctx, "alpha", cli)
	_, beta, _ := db.CreateA2AClient(ctx, "beta", cli)
	conv, _ := db.CreateConversation(ctx, 0, "asker", "Plan", "n1")
	if err := db.LinkA2ATask(ctx, "t1", "ctx1", "asker", alpha, conv.ID); err != nil {
		t.Fatal(err)
	}
	if task, err := db.A2ATask(ctx, "asker", alpha.ID, "t1"); err != nil || task.ConversationID != conv.ID {
		t.Fatalf("alpha's own task = %+v, %v", task, err)
	}
	if _, err := db.A2ATask(ctx, "asker", beta.ID, "t1"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("beta reads alpha's task: %v, want ENOTFOUND", err)
	}
	if id, err := db.A2AContextConversation(ctx, "asker", beta.ID, "ctx1"); err != nil || id != 0 {
		t.Errorf("beta's message in alpha's context goes to conversation %d, %v; want a new one", id, err)
	}
	if err := db.LinkA2ATask(ctx, "t1", "ctx1", "asker", beta, conv.ID); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Errorf("beta links alpha's task: %v, want ENOTFOUND", err)
	}
	// A follow-up message links the task again: one creation in the audit log.
	if err := db.LinkA2ATask(ctx, "t1", "ctx1", "asker", alpha, conv.ID); err != nil {
		t.Fatal(err)
	}
	entries, _ := db.AuditLog(ctx, conv.ID, 10)
	if len(entries) != 1 || entries[0].Actor != "a2a client alpha" || entries[0].Action != "create a2a task" {
		t.Errorf("the conversation's audit = %+v, want alpha's creation of the task", entries)
	}
}

// A database from before clients had tokens of their own: the client of the shared token
// (PARLEY_A2A_TOKEN) takes its tasks, and keeps them when the token's value changes.
func TestDB_LegacyA2AClient(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		var migrated []string
		for _, n := range []string{"0001_init", "0002_a2a_tasks", "0003_documents", "0004_accounts", "0005_drafts", "0006_manage",
			"0007_settings", "0008_conversation_ids", "0009_a2a_task_spans", "0010_api_tokens"} {
			migrated = append(migrated, n+".sql")
		}
		path, exec, done := oldDB(t, migrated...)
		now := "2026-11-01T09:00:00.000000000Z"
		exec(`INSERT INTO conversations (id, agent, title, created_at, updated_at) VALUES (1, 'asker', 'old task', ?, ?)`, now, now)
		exec(`INSERT INTO a2a_tasks (id, context_id, agent, conversation_id, updated_at) VALUES ('old', 'c0', 'asker', 1, ?)`, now)
		done()
		db := storetest.Open(t, path)

		c, err := db.LegacyA2AClient(ctx, "s3cret")
		if err != nil || c.Name != domain.LegacyA2AClient {
			t.Fatalf("LegacyA2AClient = %+v, %v", c, err)
		}
		if task, err := db.A2ATask(ctx, "asker", c.ID, "old"); err != nil || task.ConversationID != 1 {
			t.Fatalf("the old task = %+v, %v; want it the default client's", task, err)
		}
		if got, err := db.A2AClientByToken(ctx, "s3cret"); err != nil || got.ID != c.ID {
			t.Errorf("the shared token = %+v, %v", got, err)
		}
		again, err := db.LegacyA2AClient(ctx, "s3cret")
		if err != nil || again.ID != c.ID {
			t.Errorf("served again = %+v, %v; want the same client", again, err)
		}
		// A new value of the shared token: the same client, the old value refused.
		if changed, err := db.LegacyA2AClient(ctx, "n3w"); err != nil || changed.ID != c.ID {
			t.Errorf("a new shared token = %+v, %v; want the same client", changed, err)
		}
		if _, err := db.A2AClientByToken(ctx, "s3cret"); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
			t.Errorf("the old value: %v, want EUNAUTHORIZED", err)
		}
		if got := auditActions(t, db); strings.Join(got, "\n") != store.LegacyActor+": add a2a client default\n"+store.LegacyActor+": new token for a2a client default" {
			t.Errorf("audit =\n%s", strings.Join(got, "\n"))
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := storetest.New(t)
		if _, err := db.LegacyA2AClient(ctx, "s3cret"); err != nil {
			t.Fatal(err)
		}
		// Revoked, it stays revoked: a restart does not bring it back.
		if _, err := db.RevokeA2AClient(ctx, domain.LegacyA2AClient, cli); err != nil {
			t.Fatal(err)
		}
		_, err := db.LegacyA2AClient(ctx, "s3cret")
		if domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), "unset PARLEY_A2A_TOKEN") {
			t.Errorf("a revoked default: got %v, want EINVALID saying to unset PARLEY_A2A_TOKEN", err)
		}
		// Another client's token is not the shared one.
		secret, _, _ := db.CreateA2AClient(ctx, "ci", cli)
		if _, err := db.LegacyA2AClient(ctx, secret); domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), `"ci"`) {
			t.Errorf("ci's token as PARLEY_A2A_TOKEN: got %v, want EINVALID naming ci", err)
		}
	})
}
