package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

// runCLI runs parley with args and stdin, returning what it printed and its error.
func runCLI(t *testing.T, dbPath, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, env(map[string]string{"PARLEY_DB": dbPath}), stdio{in: strings.NewReader(stdin), out: &out, err: &errOut})
	return out.String(), err
}

func TestRunUser(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	out, err := runCLI(t, dbPath, "", "user", "add", "ann")
	if err != nil || !strings.Contains(out, "made ann, a staff account") {
		t.Fatalf("add ann = %q, %v; want the first account made staff", out, err)
	}
	m := regexp.MustCompile(`password: (\S{20})\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no password printed: %q", out)
	}
	annPW := m[1]
	if out, err := runCLI(t, dbPath, "a long passphrase for bob\n", "user", "add", "bob", "--password-stdin"); err != nil || strings.Contains(out, "password:") || !strings.Contains(out, "a user account") {
		t.Fatalf("add bob = %q, %v", out, err)
	}
	if out, err := runCLI(t, dbPath, "", "user", "set-role", "bob", "staff"); err != nil || out != "bob is now staff\n" {
		t.Fatalf("set-role = %q, %v", out, err)
	}
	if out, err := runCLI(t, dbPath, "", "user", "reset-password", "--db", dbPath, "ann"); err != nil || !strings.Contains(out, "sessions have ended") {
		t.Fatalf("reset-password = %q, %v", out, err)
	}
	newPW := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(out)
	out, _ = runCLI(t, dbPath, "", "user", "list")
	if !regexp.MustCompile(`(?m)^ann\tstaff\t\d{4}-\d\d-\d\d\nbob\tstaff\t`).MatchString(out) {
		t.Errorf("list = %q", out)
	}

	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, hash, _ := db.UserByName(context.Background(), "bob")
	if !domain.PasswordMatches(hash, "a long passphrase for bob") {
		t.Error("bob's password from stdin does not match")
	}
	_, hash, _ = db.UserByName(context.Background(), "ann")
	if domain.PasswordMatches(hash, annPW) || newPW == nil {
		t.Error("ann's old password still works after the reset")
	}
	log, _ := db.AuditLog(context.Background(), 0, 10)
	if len(log) != 2 || log[0].Action != "reset-password" || log[1].Action != "set-role" {
		t.Errorf("audit log = %+v", log)
	}

	for _, tt := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"user", "add", "Ann"}, `The user name "Ann" is taken.`},
		{"", []string{"user", "add", "carl", "--role", "admin"}, `"admin" is not a role`},
		{"short\n", []string{"user", "add", "carl", "--password-stdin"}, "at least 10 characters"},
		{"", []string{"user", "set-role", "nobody", "staff"}, "nobody: No such user."},
		{"", []string{"user", "add"}, "name the account"},
		{"", []string{"user", "frob", "x"}, `unknown command "frob"`},
	} {
		if _, err := runCLI(t, dbPath, tt.stdin, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v = %v, want %q", tt.args, err, tt.want)
		}
	}
}

// The operator cannot make an account that looks like one that exists: the command says
// which, and nothing is made.
func TestRunUser_LookAlikeRefused(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	if _, err := runCLI(t, dbPath, "", "user", "add", "root"); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, dbPath, "", "user", "add", "rооt") // Cyrillic о
	if want := `The user name "rооt" looks too much like "root", which is taken: choose another.`; err == nil || err.Error() != want {
		t.Fatalf("add rооt = %q, %v; want the error %q", out, err, want)
	}
	if out, _ = runCLI(t, dbPath, "", "user", "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("list = %q, want root alone", out)
	}
}
