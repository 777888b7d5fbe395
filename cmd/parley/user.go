package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"

	"github.com/parley-chat/parley/domain"
	"github.com/parley-chat/parley/store"
)

// nameAndFlags parses an operator command's arguments: the name comes first (parley user
// add ann --role staff) or after the flags. rest is what follows.
func nameAndFlags(fs *flag.FlagSet, args []string) (name string, rest []string, err error) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", nil, err
	}
	rest = fs.Args()
	if name == "" && len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	return name, rest, nil
}

// addListRevoke parses `parley CMD add|list|revoke [NAME] [flags]`, the commands that manage
// tokens: --db and what flags adds, and NAME, which all but list need (usage says how to give
// it, for the error).
func addListRevoke(cmd string, args []string, getenv func(string) string, std stdio, flags func(*flag.FlagSet), usage string) (sub, name, dbPath string, err error) {
	if len(args) == 0 {
		return "", "", "", fmt.Errorf("parley %s: add, list or revoke (try: parley help)", cmd)
	}
	sub, args = args[0], args[1:]
	fs := flag.NewFlagSet(cmd+" "+sub, flag.ContinueOnError)
	fs.SetOutput(std.err)
	db := fs.String("db", envOr(getenv, "PARLEY_DB", "./parley.db"), "SQLite database file or postgres:// URL (PARLEY_DB)")
	if flags != nil {
		flags(fs)
	}
	name, rest, err := nameAndFlags(fs, args)
	if err != nil {
		return "", "", "", err
	}
	switch sub {
	case "add", "list", "revoke":
	default:
		return "", "", "", fmt.Errorf("parley %s: unknown command %q (add, list, revoke)", cmd, sub)
	}
	if sub == "list" && name != "" {
		rest = append([]string{name}, rest...)
	}
	if len(rest) > 0 {
		return "", "", "", fmt.Errorf("parley %s %s: unexpected argument %q", cmd, sub, rest[0])
	}
	if name == "" && sub != "list" {
		return "", "", "", fmt.Errorf("parley %s %s: %s", cmd, sub, fmt.Sprintf(usage, sub))
	}
	return sub, name, *db, nil
}

// stamp is a time as the operator commands list it (UTC, to the minute), or zero when unset.
func stamp(t time.Time, zero string) string {
	if t.IsZero() {
		return zero
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// runUser is `parley user ...`: accounts managed by the operator, on the database file.
func runUser(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	if len(args) == 0 {
		return errors.New("parley user: add, set-role, reset-password or list (try: parley help)")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("user "+sub, flag.ContinueOnError)
	fs.SetOutput(std.err)
	dbPath := fs.String("db", envOr(getenv, "PARLEY_DB", "./parley.db"), "SQLite database file or postgres:// URL (PARLEY_DB)")
	role := fs.String("role", "", "user or staff (add: the first account is staff, later ones users)")
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input instead of making one up")
	name, rest, err := nameAndFlags(fs, args)
	if err != nil {
		return err
	}
	if sub == "set-role" && *role == "" && len(rest) > 0 {
		*role, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return fmt.Errorf("parley user %s: unexpected argument %q", sub, rest[0])
	}
	if name == "" && sub != "list" {
		return fmt.Errorf("parley user %s: name the account (parley user %s NAME)", sub, sub)
	}
	db, err := openForCommand(ctx, *dbPath, "user "+sub)
	if err != nil {
		return err
	}
	defer db.Close()
	const actor = "parley user (command line)"
	switch sub {
	case "add":
		var r domain.Role
		if *role != "" {
			if r, err = domain.ParseRole(*role); err != nil {
				return errors.New(domain.ErrorMessage(err))
			}
		}
		pw, hash, made, err := password(std.in, *fromStdin)
		if err != nil {
			return err
		}
		u, err := db.CreateUser(ctx, name, hash, r)
		if err != nil {
			return errors.New(domain.ErrorMessage(err))
		}
		fmt.Fprintf(std.out, "made %s, a %s account\n", u.Name, u.Role)
		if made {
			fmt.Fprintf(std.out, "password: %s\n", pw)
		}
		return nil
	case "set-role":
		r, err := domain.ParseRole(*role)
		if err != nil {
			return errors.New(domain.ErrorMessage(err))
		}
		u, err := db.SetRole(ctx, name, r, actor)
		if err != nil {
			return fmt.Errorf("%s: %s", name, domain.ErrorMessage(err))
		}
		fmt.Fprintf(std.out, "%s is now %s\n", u.Name, u.Role)
		return nil
	case "reset-password":
		pw, hash, made, err := password(std.in, *fromStdin)
		if err != nil {
			return err
		}
		u, err := db.SetPassword(ctx, name, hash, actor)
		if err != nil {
			return fmt.Errorf("%s: %s", name, domain.ErrorMessage(err))
		}
		fmt.Fprintf(std.out, "new password set for %s; their sessions have ended\n", u.Name)
		if made {
			fmt.Fprintf(std.out, "password: %s\n", pw)
		}
		return nil
	case "list":
		users, err := db.Users(ctx)
		if err != nil {
			return err
		}
		for _, u := range users {
			fmt.Fprintf(std.out, "%s\t%s\t%s\n", u.Name, u.Role, u.CreatedAt.Format("2006-01-02"))
		}
		return nil
	}
	return fmt.Errorf("parley user: unknown command %q (add, set-role, reset-password, list)", sub)
}

// openForCommand opens the database for an operator's command (parley user, parley token).
// It may run beside a server on the same database: its writes are a few short transactions,
// which SQLite's own locking keeps apart from the server's. It never migrates a database
// another process holds (it is refused if it needs migrating), and is refused, like a second
// server, by a database that is not Parley's or is a newer Parley's.
func openForCommand(ctx context.Context, path, command string) (*store.DB, error) {
	return store.OpenWith(ctx, path, store.Options{Holder: "parley " + command, Shared: true})
}

// password is the first line of in when fromStdin, checked; otherwise a new random one
// (made reports that, so that it is printed once). hash is its argon2id hash.
func password(in io.Reader, fromStdin bool) (pw, hash string, made bool, err error) {
	if fromStdin {
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", "", false, fmt.Errorf("read the password: %w", err)
		}
		pw = strings.TrimRight(line, "\r\n")
		if err := domain.CheckPassword(pw); err != nil {
			return "", "", false, errors.New(domain.ErrorMessage(err))
		}
	} else if pw, err = randomPassword(); err != nil {
		return "", "", false, err
	}
	hash, err = domain.HashPassword(pw)
	return pw, hash, !fromStdin, err
}

// randomPassword makes a password of 20 characters from an alphabet without look-alikes
// (about 115 bits).
func randomPassword() (string, error) {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 20)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", err
		}
		b[i] = alphabet[n.Int64()]
	}
	return string(b), nil
}
