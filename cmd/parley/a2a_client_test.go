package main

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-chat/parley/store"
)

func TestRunA2AClient(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")

	// add prints the token alone, on one line, so that $(parley a2a-client add ...) is the token.
	out, hint, err := runCLIStreams(t, dbPath, "a2a-client", "add", "ci-nightly")
	if err != nil || !regexp.MustCompile(`^parley_a2a_[A-Za-z0-9_-]{43}\n$`).MatchString(out) {
		t.Fatalf("a2a-client add = %q, %v; want the token alone", out, err)
	}
	secret := strings.TrimSpace(out)
	if !strings.Contains(hint, "Authorization: Bearer") || strings.Contains(hint, secret) {
		t.Errorf("hint on stderr = %q", hint)
	}
	// The name after the flags works too, and --db beats PARLEY_DB.
	if _, _, err := runCLIStreams(t, "/nonexistent/elsewhere.db", "a2a-client", "add", "--db", dbPath, "planner"); err != nil {
		t.Fatal(err)
	}

	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err := db.A2AClientByToken(context.Background(), secret); err != nil || c.Name != "ci-nightly" {
		t.Fatalf("the printed token is %+v, %v; want ci-nightly's", c, err)
	}
	// Hashed at rest: the token is nowhere in the file's a2a_clients table.
	raw, err := sql.Open("sqlite3", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var rows string
	if err := raw.QueryRow(`SELECT group_concat(id || name || hash || created_at || last_used_at || revoked_at, '|') FROM a2a_clients`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rows, strings.TrimPrefix(secret, store.A2AClientPrefix)) {
		t.Errorf("a2a_clients holds the token: %q", rows)
	}

	if _, _, err := runCLIStreams(t, dbPath, "a2a-client", "revoke", "planner"); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCLIStreams(t, dbPath, "a2a-client", "list")
	if err != nil {
		t.Fatal(err)
	}
	const stamp = `\d{4}-\d\d-\d\d \d\d:\d\d`
	if !regexp.MustCompile(`^NAME +CREATED +LAST USED +REVOKED\nplanner +` + stamp + ` +never +` + stamp + `\nci-nightly +` + stamp + ` +` + stamp + ` +-\n$`).MatchString(out) {
		t.Errorf("list = %q; want planner (revoked), then ci-nightly (used just now)", out)
	}
	if strings.Contains(out, secret) {
		t.Error("list shows the token")
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"a2a-client", "add", "ci-nightly"}, `There is already an A2A client named "ci-nightly"`},
		{[]string{"a2a-client", "add", "default"}, "PARLEY_A2A_TOKEN"},
		{[]string{"a2a-client", "revoke", "planner"}, `There is no A2A client named "planner".`},
		{[]string{"a2a-client", "add"}, "name the client"},
		{[]string{"a2a-client", "add", " spaced "}, "no spaces at either end"},
		{[]string{"a2a-client", "list", "extra"}, `unexpected argument "extra"`},
		{[]string{"a2a-client", "frob", "x"}, `unknown command "frob"`},
		{[]string{"a2a-client"}, "add, list or revoke"},
	} {
		out, _, err := runCLIStreams(t, dbPath, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v = %v, want %q", tt.args, err, tt.want)
		}
		if out != "" {
			t.Errorf("%v printed %q on stdout", tt.args, out)
		}
	}

	entries, err := db.AuditLog(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var audit []string
	for _, e := range entries {
		audit = append(audit, e.Actor+": "+e.Action+" "+e.Detail)
	}
	const actor = "parley a2a-client (command line)"
	if want := []string{actor + ": revoke a2a client planner", actor + ": add a2a client planner", actor + ": add a2a client ci-nightly"}; strings.Join(audit, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit, newest first:\n%s\nwant:\n%s", strings.Join(audit, "\n"), strings.Join(want, "\n"))
	}
}

// parley serve --a2a takes the tokens of parley a2a-client, and refuses one revoked while it
// runs; PARLEY_A2A_TOKEN goes on working as the client "default".
func TestRun_ServeA2AClients(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	out, _, err := runCLIStreams(t, dbPath, "a2a-client", "add", "ci")
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--a2a"}, env(map[string]string{"PARLEY_ADDR": "127.0.0.1:0", "PARLEY_DB": dbPath, "PARLEY_A2A_TOKEN": "s3cret"}),
			stdio{out: io.Discard, err: &logs})
	}()
	re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no listening line in logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), `PARLEY_A2A_TOKEN is the token of the A2A client \"default\"`) {
		t.Errorf("the logs do not say what became of PARLEY_A2A_TOKEN:\n%s", logs.String())
	}
	getTask := func(token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/a2a/platform-engineer", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tok := range []string{token, "s3cret"} {
		if status, body := getTask(tok); status != http.StatusOK || !strings.Contains(body, `"code":-32001`) {
			t.Errorf("tasks/get with %.12s...: %d %s, want an authenticated task not found", tok, status, body)
		}
	}
	if _, _, err := runCLIStreams(t, dbPath, "a2a-client", "revoke", "ci"); err != nil {
		t.Fatal(err)
	}
	if status, body := getTask(token); status != http.StatusUnauthorized || !strings.Contains(body, `\"ci\" was revoked`) {
		t.Errorf("tasks/get with the revoked token: %d %s, want 401", status, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run returned %v after shutdown", err)
	}
}
