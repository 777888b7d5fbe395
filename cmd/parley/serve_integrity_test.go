package main

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parley-chat/parley/store/storetest"
)

// A damaged database file: parley serve refuses it, saying what SQLite found and how to
// restore; with --skip-db-check it starts, and the first request that meets the damage
// answers 503 with it, as /healthz does from then on.
func TestServe_DamagedDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "damaged.db")
	if _, err := runMain(nil, "", "user", "add", "ann", "--db", db); err != nil {
		t.Fatal(err)
	}
	storetest.Damage(t, db, "conversations")

	refused := serveCommand("--db", db)
	var logs syncBuffer
	if _, err := startServe(refused, &logs); err == nil {
		refused.Process.Kill()
		refused.Wait()
		t.Fatalf("parley serve started on a damaged database:\n%s", logs.String())
	}
	if code := refused.ProcessState.ExitCode(); code == 0 {
		t.Errorf("parley serve refused the database with exit code 0")
	}
	for _, want := range []string{"parley: database " + db + " is damaged: SQLite's quick_check found: ", "docs/operations.md", "sqlite3 " + db + " .recover"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("parley serve said:\n%s\nwant %q", logs.String(), want)
		}
	}

	started := serveCommand("--db", db, "--skip-db-check", "--auth", "none")
	var startedLogs syncBuffer
	base, err := startServe(started, &startedLogs)
	if err != nil {
		t.Fatalf("with --skip-db-check: %v", err)
	}
	defer func() {
		started.Process.Signal(syscall.SIGTERM)
		started.Wait()
	}()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz before anything read the damage = %d %q", code, body)
	}
	if code, body := get("/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "database file is damaged") {
		t.Errorf("GET / (which lists the conversations) = %d %q, want 503 saying the file is damaged", code, body)
	}
	if code, body := get("/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "database file is damaged") || !strings.Contains(body, "backup") {
		t.Errorf("/healthz after a read met the damage = %d %q, want 503 saying the file is damaged", code, body)
	}
	resp, err := http.PostForm(base+"/conversations", url.Values{"agent": {"event-planner"}, "text": {"a party for 40"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "database file is damaged") {
		t.Errorf("POST /conversations = %d %q, want 503 saying the file is damaged", resp.StatusCode, b)
	}
}
