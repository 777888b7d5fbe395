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

// runCLIStreams runs parley with args, returning stdout and stderr apart, and its error.
func runCLIStreams(t *testing.T, dbPath string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, env(map[string]string{"PARLEY_DB": dbPath}), stdio{in: strings.NewReader(""), out: &out, err: &errOut})
	return out.String(), errOut.String(), err
}

func TestRunToken(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "p.db")
	for _, name := range []string{"ann", "bob"} {
		if _, err := runCLI(t, dbPath, "", "user", "add", name); err != nil {
			t.Fatal(err)
		}
	}

	// add prints the token alone, on one line, so that $(parley token add ...) is the token.
	out, hint, err := runCLIStreams(t, dbPath, "token", "add", "laptop", "--user", "ann")
	if err != nil || !regexp.MustCompile(`^parley_[A-Za-z0-9_-]{43}\n$`).MatchString(out) {
		t.Fatalf("token add = %q, %v; want the token alone", out, err)
	}
	if !strings.Contains(hint, "PARLEY_TOKEN") || strings.Contains(hint, strings.TrimSpace(out)) {
		t.Errorf("hint on stderr = %q", hint)
	}
	secret := strings.TrimSpace(out)
	// The name after the flags works too, and --db beats PARLEY_DB.
	bobOut, _, err := runCLIStreams(t, "/nonexistent/elsewhere.db", "token", "add", "--db", dbPath, "--user", "bob", "laptop")
	if err != nil {
		t.Fatalf("bob's laptop: %v; names are per person", err)
	}
	if _, _, err := runCLIStreams(t, dbPath, "token", "add", "ci-nightly", "--user", "ann"); err != nil {
		t.Fatal(err)
	}

	db, err := store.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, tok, err := db.TokenUser(context.Background(), secret)
	if err != nil || u.Name != "ann" || tok.Name != "laptop" {
		t.Fatalf("the printed token acts as %+v (%+v), %v; want ann's laptop", u, tok, err)
	}

	out, _, err = runCLIStreams(t, dbPath, "token", "list", "--user", "ann")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^NAME +CREATED +LAST USED\nci-nightly +\d{4}-\d\d-\d\d \d\d:\d\d +never\nlaptop +\d{4}-\d\d-\d\d \d\d:\d\d +\d{4}-\d\d-\d\d \d\d:\d\d\n$`).MatchString(out) {
		t.Errorf("list = %q; want ci-nightly (never used) then laptop (used just now)", out)
	}
	if strings.Contains(out, secret) {
		t.Error("list shows the token")
	}

	if out, _, err := runCLIStreams(t, dbPath, "token", "revoke", "laptop", "--user", "ann"); err != nil || !strings.Contains(out, `revoked ann's token "laptop"`) {
		t.Fatalf("revoke = %q, %v", out, err)
	}
	if _, _, err := db.TokenUser(context.Background(), secret); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		t.Errorf("revoked token: %v, want EUNAUTHORIZED", err)
	}
	if u, _, err := db.TokenUser(context.Background(), strings.TrimSpace(bobOut)); err != nil || u.Name != "bob" {
		t.Errorf("bob's laptop after ann revoked hers: %+v, %v", u, err)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "add", "ci-nightly", "--user", "ann"}, `ann: You already have a token named "ci-nightly"`},
		{[]string{"token", "add", "laptop", "--user", "nobody"}, "nobody: No such user."},
		{[]string{"token", "revoke", "laptop", "--user", "ann"}, `ann: There is no token named "laptop".`},
		{[]string{"token", "list", "--user", "nobody"}, "nobody: No such user."},
		{[]string{"token", "add", "laptop"}, "--user"},
		{[]string{"token", "add", "--user", "ann"}, "name the token"},
		{[]string{"token", "add", " spaced ", "--user", "ann"}, "no spaces at either end"},
		{[]string{"token", "add", strings.Repeat("x", 61), "--user", "ann"}, "at most 60 characters"},
		{[]string{"token", "list", "extra", "--user", "ann"}, `unexpected argument "extra"`},
		{[]string{"token", "frob", "x", "--user", "ann"}, `unknown command "frob"`},
		{[]string{"token"}, "add, list or revoke"},
	} {
		out, _, err := runCLIStreams(t, dbPath, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v = %v, want %q", tt.args, err, tt.want)
		}
		if out != "" {
			t.Errorf("%v printed %q on stdout", tt.args, out)
		}
	}
}
